"""A run against its baseline and its budget: side-by-side lines, breaches, the verdict.

:func:`gate_replays` runs after the cases were judged and before any report is written:
a case over its budget is marked failed with one reason per breach (``budget: turn 2: +1
model call (budget +0)``), each case with a baseline gets its comparison lines (shown by
the console and the HTML report), and the suite's own breaches are returned (the run then
fails).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cassettes._eval_config import TakesRule
from cassettes._eval_result import EvalCaseResult, EvalStatus, Figures
from replayer._baseline import Baseline, BaselineCase, load_baseline
from replayer._budget import Budget, figure_breaches, load_budget, score_breaches
from replayer._prices import load_prices
from replayer._replay_target import EvalSetReplay
from replayer._usage import summed

__all__ = ["GateOutcome", "Gates", "gate_replays"]


@dataclass(frozen=True)
class Gates:
    """What a run is held to: a budget (``--budget``) and the baseline its growth limits are
    measured from (``--baseline``), either absent when not given."""

    budget: Budget | None = None
    baseline: Baseline | None = None

    @classmethod
    def load(cls, budget: Path | None, baseline: Path | None, *, prices: Path | None) -> Gates:
        """Read both before any case runs, so that a bad budget or baseline is said at once.

        Raises:
            InputError: either cannot be used (the file, the place and the fix).
        """
        return cls(
            load_budget(budget, has_baseline=baseline is not None) if budget else None,
            load_baseline(baseline, load_prices(prices)) if baseline else None,
        )

    @property
    def given(self) -> bool:
        """Whether a budget or a baseline was given."""
        return self.budget is not None or self.baseline is not None

    @property
    def takes(self) -> TakesRule | None:
        """The budget's verdict rule over a case's takes, when it sets one."""
        return self.budget.takes if self.budget is not None else None


@dataclass
class GateOutcome:
    """What the gates found."""

    suite_breaches: list[str] = field(default_factory=list)
    compared: dict[tuple[str, str], BaselineCase] = field(default_factory=dict)
    """Per (eval set id, eval id): the baseline of each case that has one."""
    baseline_source: str | None = None

    @property
    def passed(self) -> bool:
        """Whether the suite kept within its budget."""
        return not self.suite_breaches


def _case_gate(
    case: EvalCaseResult, budget: Budget, base: BaselineCase | None, *, parallel: bool
) -> list[str]:
    limits = budget.for_case(case.eval_id)
    lines = score_breaches(case, budget.scores_for(case.eval_id))
    if not limits:
        return lines
    if case.usage is None:
        if case.final_eval_status is EvalStatus.FAILED and not case.overall_eval_metric_results:
            return lines  # the case could not run: its reason says why
        why = "--parallel above 1 mixes the cases' model calls" if parallel else "none recorded"
        return [*lines, f"no recorded figures to check ({why}): run with --parallel 1"]
    before = base.usage if base is not None else None
    return lines + figure_breaches(
        case.usage,
        limits,
        before,
        turns=case.usage.turns,
        base_turns=before.turns if before is not None else (),
    )


def gate_replays(
    replays: Sequence[EvalSetReplay], gates: Gates, *, parallel: bool = False
) -> GateOutcome:
    """Compare with the baseline and hold each case and the suite to the budget (a case
    over budget is marked failed in place)."""
    budget, baseline = gates.budget, gates.baseline
    outcome = GateOutcome(baseline_source=str(baseline.source) if baseline else None)
    now: list[Figures] = []
    before: list[Figures] = []
    for replay in replays:
        set_id = replay.result.eval_set_id
        for case in replay.result.eval_case_results:
            base = baseline.case(set_id, case.eval_id) if baseline is not None else None
            if base is not None:
                outcome.compared[(set_id, case.eval_id)] = base
                if base.usage is not None:
                    before.append(base.usage)
            if case.usage is not None:
                now.append(case.usage)
            breaches = _case_gate(case, budget, base, parallel=parallel) if budget else []
            if breaches:
                case.final_eval_status = EvalStatus.FAILED
                case.failure_reasons.extend(f"budget: {line}" for line in breaches)
    if budget is not None and budget.suite.figures():
        total = Figures.model_validate(summed(now))
        base_total = Figures.model_validate(summed(before)) if baseline is not None else None
        outcome.suite_breaches = figure_breaches(total, budget.suite.figures(), base_total)
    return outcome
