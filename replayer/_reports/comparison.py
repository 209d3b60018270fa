"""The run beside its baseline, and the suite's budget breaches, in words and tables."""

from __future__ import annotations

from collections.abc import Sequence

from cassettes._eval_result import FIGURES, CaseUsage, EvalCaseResult, Figures
from replayer._baseline import BaselineCase
from replayer._budget import amount_text
from replayer._gate import GateOutcome
from replayer._replay_target import EvalSetReplay
from replayer._reports.figures import seconds_text

__all__ = ["compare_case", "comparisons", "render_gates"]

_COMPARED = tuple(name for name in FIGURES if name != "total_tokens")
"""The figures a comparison shows (the total is the sum of three of them)."""


def _cell(name: str, figures: Figures | None) -> str:
    if figures is None:
        return "-"
    if name == "cost_usd":
        return "unknown" if figures.cost_usd is None else f"${figures.cost_usd:.6f}"
    value = figures.figure(name)
    if name.endswith("_seconds"):
        return seconds_text(value)
    return "-" if value is None else f"{value:g}"


def _change(name: str, now: Figures | None, before: Figures | None) -> str:
    a = now.figure(name) if now is not None else None
    b = before.figure(name) if before is not None else None
    if a is None or b is None or abs(a - b) < (0.05 if name.endswith("_seconds") else 1e-12):
        return ""  # a recorded time within a twentieth of a second is the same
    return amount_text(name, a - b, signed=True)


def _parting_turn(now: CaseUsage, before: CaseUsage) -> int | None:
    """The first turn whose calls or tokens differ (1-based), None when none does."""
    keys = ("model_calls", "tool_calls", "prompt_tokens", "candidates_tokens", "thoughts_tokens")
    for index in range(max(len(now.turns), len(before.turns))):
        if index >= len(now.turns) or index >= len(before.turns):
            return index + 1
        if any(now.turns[index].figure(k) != before.turns[index].figure(k) for k in keys):
            return index + 1
    return None


def compare_case(case: EvalCaseResult, base: BaselineCase) -> list[str]:
    """The case beside its baseline: where they part, then a row per score and figure."""
    now, before = case.usage, base.usage
    head = "same calls and tokens as the baseline"
    if now is None or before is None:
        head = "no recorded figures to compare" if now is None else "the baseline has no figures"
    elif (turn := _parting_turn(now, before)) is not None:
        head = f"parts from the baseline at turn {turn}"
    rows = [(f"{'':<22}", "baseline", "this run", "change")]
    scores = {m.metric_name: m.score for m in case.overall_eval_metric_results}
    for metric in sorted(set(scores) | set(base.scores or {})):
        a, b = scores.get(metric), (base.scores or {}).get(metric)
        change = f"{a - b:+.3f}" if a is not None and b is not None and a != b else ""
        rows.append(
            (metric, "-" if b is None else f"{b:.3f}", "-" if a is None else f"{a:.3f}", change)
        )
    for name in _COMPARED:
        rows.append((name, _cell(name, before), _cell(name, now), _change(name, now, before)))
    width = max(len(r[0]) for r in rows)
    table = [f"{r[0]:<{width}} {r[1]:>11} {r[2]:>11}  {r[3]}".rstrip() for r in rows]
    return [head, *table]


def comparisons(
    replays: Sequence[EvalSetReplay], outcome: GateOutcome
) -> dict[tuple[str, str], list[str]]:
    """Per (eval set id, eval id): the case beside its baseline (:func:`compare_case`)."""
    found = {}
    for replay in replays:
        set_id = replay.result.eval_set_id
        for case in replay.result.eval_case_results:
            base = outcome.compared.get((set_id, case.eval_id))
            if base is not None:
                found[(set_id, case.eval_id)] = compare_case(case, base)
    return found


def render_gates(replays: Sequence[EvalSetReplay], outcome: GateOutcome) -> str:
    """Per case compared with the baseline: where it parts, then scores and figures side
    by side; then the suite's budget breaches."""
    lines: list[str] = []
    compared = comparisons(replays, outcome)
    if compared:
        lines.append(f"Compared with the baseline ({outcome.baseline_source})")
        lines.append("=" * 40)
        for (set_id, eval_id), rows in compared.items():
            head, *table = rows
            lines.append(f"{set_id} / {eval_id}: {head}")
            lines.extend("  " + row for row in table)
    if outcome.suite_breaches:
        lines.append("FAILED: the suite is over its budget")
        lines.extend(f"  - budget: suite: {line}" for line in outcome.suite_breaches)
    return "\n".join(lines) + ("\n" if lines else "")
