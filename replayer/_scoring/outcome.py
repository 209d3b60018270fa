"""What running one metric on one eval case produced (the shape every scorer returns)."""

from __future__ import annotations

from dataclasses import dataclass, field

from cassettes._eval_enums import EvalStatus

__all__ = ["MetricOutcome", "status_for"]


def status_for(score: float, threshold: float) -> EvalStatus:
    """ADK's rule: pass iff ``score >= threshold``."""
    return EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED


@dataclass
class MetricOutcome:
    """Scores of one metric over the invocations of one case (ADK's ``EvaluationResult``)."""

    overall_score: float | None
    """Mean over invocations, or None when the metric produced nothing."""
    overall_status: EvalStatus
    per_invocation: list[tuple[float | None, EvalStatus]] = field(default_factory=list)
    """(score, status) per invocation, in order."""
    reason: str | None = None
    """Why the metric could not run (when ``overall_status`` is NOT_EVALUATED)."""

    @classmethod
    def not_evaluated(cls, reason: str, invocations: int) -> MetricOutcome:
        """A metric that could not run, with the reason in words."""
        return cls(
            None,
            EvalStatus.NOT_EVALUATED,
            [(None, EvalStatus.NOT_EVALUATED)] * invocations,
            reason,
        )

    @classmethod
    def from_scores(cls, scores: list[float], threshold: float) -> MetricOutcome:
        """Per-invocation scores -> mean and statuses, summed like ADK's evaluators."""
        if not scores:
            return cls(None, EvalStatus.NOT_EVALUATED, [], "no invocations to score")
        total = 0.0
        for score in scores:
            total += score
        overall = total / len(scores)
        return cls(
            overall,
            status_for(overall, threshold),
            [(s, status_for(s, threshold)) for s in scores],
        )
