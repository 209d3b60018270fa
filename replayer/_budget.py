"""``--budget FILE``: limits on what each case and the suite use, that fail the run.

The file (JSON; YAML too when PyYAML is importable) holds, all keys optional::

    {
      "case":  {"model_calls": 6, "cost_usd": 0.02, "prompt_tokens": "+10%",
                "scores": {"response_match_score": 0.8}},
      "cases": {"<eval_id>": {"model_calls": 8}},
      "suite": {"cost_usd": 0.50, "total_tokens": "+5%"},
      "takes": {"min_pass_at_k": 0.8, "k": 1}
    }

A limit is a number (the most the figure may be) or a growth over the baseline
(``--baseline``): ``"+10%"``, or ``"+1"`` for an amount. ``scores`` gives each metric's
lowest score. ``cases`` overrides ``case`` for the cases it names; ``takes`` is the verdict
rule over a case's takes (as in the eval config). The figures are those every report
shows (:data:`cassettes._eval_result.FIGURES`). A breach fails the case with one line in
agent terms (``turn 2: +1 model call, +812 prompt tokens (budget +10%)``); a suite breach
fails the run. The schema is in docs/reference/budget.md.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cassettes._errors import InputError
from cassettes._eval_config import TakesRule
from cassettes._eval_result import FIGURES, EvalCaseResult, Figures
from cassettes._json_file import parse_json

__all__ = ["Budget", "BudgetLimits", "Growth", "load_budget"]

_GROWTH = re.compile(r"^\+(?P<amount>\d+(\.\d+)?)(?P<percent>%?)$")
_SCHEMA = "docs/reference/budget.md"


@dataclass(frozen=True)
class Growth:
    """A growth limit over the baseline: ``+10%`` or ``+1``."""

    amount: float
    percent: bool

    def allowed(self, base: float) -> float:
        """The most the figure may be, given the baseline's."""
        return base * (1 + self.amount / 100) if self.percent else base + self.amount

    def __str__(self) -> str:
        return f"+{self.amount:g}{'%' if self.percent else ''}"


Limit = float | Growth


def _limit(value: Any) -> Limit:
    if isinstance(value, bool):
        raise ValueError("a limit is a number or a growth such as '+10%'")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("a limit is at least 0")
        return float(value)
    if isinstance(value, str) and (found := _GROWTH.match(value.strip())):
        return Growth(float(found["amount"]), bool(found["percent"]))
    raise ValueError(f"{value!r} is not a limit: give a number, or a growth such as '+10%'")


class BudgetLimits(BaseModel):
    """Limits on one case (or on the suite: ``scores`` is not read there)."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    scores: dict[str, float] = Field(default_factory=dict)
    """Each metric's lowest allowed score."""

    @field_validator("scores")
    @classmethod
    def _in_range(cls, value: dict[str, float]) -> dict[str, float]:
        for metric, minimum in value.items():
            if not 0 <= minimum <= 1:
                raise ValueError(f"scores.{metric} is {minimum}: give a score from 0 to 1")
        return value

    def figures(self) -> dict[str, Limit]:
        """Each limited figure and its limit, in report order."""
        extra = self.model_extra or {}
        return {name: _limit(extra[name]) for name in FIGURES if name in extra}


class Budget(BaseModel):
    """A whole budget file."""

    model_config = ConfigDict(extra="forbid")

    case: BudgetLimits = Field(default_factory=BudgetLimits)
    cases: dict[str, BudgetLimits] = Field(default_factory=dict)
    suite: BudgetLimits = Field(default_factory=BudgetLimits)
    takes: TakesRule | None = None

    def for_case(self, eval_id: str) -> dict[str, Limit]:
        """The figure limits on one case (``cases`` over ``case``)."""
        limits = self.case.figures()
        if eval_id in self.cases:
            limits.update(self.cases[eval_id].figures())
        return limits

    def scores_for(self, eval_id: str) -> dict[str, float]:
        """The score minimums on one case."""
        scores = dict(self.case.scores)
        if eval_id in self.cases:
            scores.update(self.cases[eval_id].scores)
        return scores

    def growth(self) -> bool:
        """Whether any limit is a growth (a baseline is needed)."""
        every = [self.case, self.suite, *self.cases.values()]
        return any(isinstance(v, Growth) for limits in every for v in limits.figures().values())


def _check_names(document: Any, path: Path) -> None:
    """Every key of each limits block is a figure or ``scores`` (did you mean ...)."""
    if not isinstance(document, dict):
        return
    blocks = [(key, document.get(key)) for key in ("case", "suite")]
    cases = document.get("cases")
    if isinstance(cases, dict):
        blocks += [(f"cases.{name}", block) for name, block in cases.items()]
    for where, block in blocks:
        for key in block if isinstance(block, dict) else ():
            if key != "scores" and key not in FIGURES:
                near = difflib.get_close_matches(key, FIGURES, n=1)
                hint = f"Did you mean {near[0]!r}? " if near else ""
                raise InputError(
                    f"{key!r} is not a figure rec computes",
                    path=path,
                    where=f"{where}.{key}",
                    fix=f"{hint}The figures are: {', '.join(FIGURES)} (see {_SCHEMA})",
                )


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot read the budget ({exc.strerror})", path=path, fix="Pass an existing file"
        ) from None
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise InputError(
                "a YAML budget needs PyYAML, which is not installed",
                path=path,
                fix="pip install pyyaml, or write the budget as JSON",
            ) from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InputError(f"not valid YAML ({exc})", path=path, fix=f"See {_SCHEMA}") from None
    return parse_json(text, path=path, fix=f"See {_SCHEMA}")


def load_budget(path: Path, *, has_baseline: bool) -> Budget:
    """The budget in ``path``, checked before anything runs.

    Raises:
        InputError: the file cannot be read, names a figure rec does not compute, holds a
            limit that is not one, or a growth limit while no baseline is given.
    """
    document = _read(path)
    _check_names(document, path)
    try:
        budget = Budget.model_validate(document)
        budget.growth()  # every limit parsed
    except (ValidationError, ValueError) as exc:
        errors = exc.errors() if isinstance(exc, ValidationError) else []
        where = ".".join(str(p) for p in errors[0]["loc"]) if errors else None
        message = errors[0]["msg"] if errors else str(exc)
        raise InputError(message, path=path, where=where, fix=f"See {_SCHEMA}") from None
    if budget.growth() and not has_baseline:
        raise InputError(
            "a growth limit ('+N%') needs a baseline to grow from",
            path=path,
            fix="Pass --baseline DIR (a results or recording folder), or give absolute limits",
        )
    return budget


_WORDS = {
    "prompt_tokens": "prompt token",
    "candidates_tokens": "candidates token",
    "thoughts_tokens": "thoughts token",
    "cached_tokens": "cached token",
    "total_tokens": "token",
    "model_calls": "model call",
    "tool_calls": "tool call",
    "first_chunk_seconds": "s to first chunk",
    "latency_seconds": "s of latency",
    "cost_usd": "USD",
}


def amount_text(name: str, value: float, *, signed: bool = False) -> str:
    """``+1 model call``, ``+812 prompt tokens``, ``+0.4 s latency``, ``+0.000120 USD``."""
    sign = "+" if signed and value >= 0 else ""
    if name.endswith("_seconds"):
        return f"{sign}{value:.1f} {_WORDS[name]}"
    if name == "cost_usd":
        return f"{sign}{value:.6f} USD"
    noun = _WORDS[name] + ("" if abs(value) == 1 else "s")
    return f"{sign}{value:g} {noun}"


def _value(figures: Figures, name: str) -> float | None:
    return float(figures.total_tokens) if name == "total_tokens" else figures.figure(name)


def figure_breaches(
    figures: Figures,
    limits: Mapping[str, Limit],
    base: Figures | None,
    *,
    turns: Sequence[Figures] = (),
    base_turns: Sequence[Figures] = (),
) -> list[str]:
    """One line per breach (growth breaches name the turns that grew)."""
    lines: list[str] = []
    growth: dict[str, Growth] = {}
    for name, limit in limits.items():
        value = _value(figures, name)
        if value is None:
            raise InputError(
                f"the budget limits {name}, which this run cannot compute "
                f"({', '.join(figures.unpriced) or 'no price'})",
                path="--budget",
                fix="Give the models' prices with --prices FILE, or drop the limit",
            )
        if isinstance(limit, Growth):
            before = _value(base, name) if base is not None else None
            if before is None:
                lines.append(f"{name}: no baseline figure to compare (budget {limit})")
            elif value > limit.allowed(before) + 1e-12:
                growth[name] = limit
        elif value > limit + 1e-12:
            lines.append(f"{amount_text(name, value)} (budget {amount_text(name, limit)})")
    if growth and base is not None:
        lines.extend(_growth_lines(figures, base, growth, turns, base_turns))
    return lines


def _growth_lines(
    figures: Figures,
    base: Figures,
    growth: Mapping[str, Growth],
    turns: Sequence[Figures],
    base_turns: Sequence[Figures],
) -> list[str]:
    """Per turn that grew in a breached figure: ``turn 2: +1 model call (budget +0%)``."""
    lines = []
    for index in range(max(len(turns), len(base_turns))):
        now = turns[index] if index < len(turns) else Figures()
        before = base_turns[index] if index < len(base_turns) else Figures()
        grown = [
            f"{amount_text(n, delta, signed=True)} (budget {limit})"
            for n, limit in growth.items()
            if (delta := (_value(now, n) or 0.0) - (_value(before, n) or 0.0)) > 1e-12
        ]
        if grown:
            lines.append(f"turn {index + 1}: {', '.join(grown)}")
    if not lines:  # no turn alone grew: the case's totals did
        grown = [
            f"{amount_text(n, (_value(figures, n) or 0.0) - (_value(base, n) or 0.0), signed=True)}"
            f" (budget {limit})"
            for n, limit in growth.items()
        ]
        lines.append(f"in all: {', '.join(grown)}")
    return lines


def score_breaches(case: EvalCaseResult, minimums: Mapping[str, float]) -> list[str]:
    """One line per metric below its minimum (or missing from the case)."""
    scores = {m.metric_name: m.score for m in case.overall_eval_metric_results}
    lines = []
    for metric, minimum in minimums.items():
        score = scores.get(metric)
        if score is None:
            lines.append(f"{metric}: no score (budget at least {minimum:g})")
        elif score < minimum - 1e-12:
            lines.append(f"{metric} {score:.3f} (budget at least {minimum:g})")
    return lines
