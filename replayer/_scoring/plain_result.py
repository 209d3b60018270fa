"""The result of a plain score: ``EvalSetResult``'s fields without pydantic.

A plain score (:mod:`replayer._scoring.plain_evalset`) ends in the console report and
nowhere else: ``--json``, ``--results``, ``--junit`` and ``--html`` take the models. These
classes carry the models' field names and defaults, so :mod:`replayer._score` fills either
and :mod:`replayer._reports.console` reads either; :meth:`PlainEvalSetResult.masked` masks
every string the report shows, as ``masked_result`` masks a model result.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from cassettes._eval_status import EvalStatus
from cassettes._secret_shapes import mask
from replayer._scoring.plain_evalset import PlainInvocation

__all__ = [
    "PlainEvalCaseResult",
    "PlainEvalMetricResult",
    "PlainEvalMetricResultPerInvocation",
    "PlainEvalSetResult",
]


def _masked(text: str | None) -> str | None:
    return None if text is None else mask(text)


@dataclass(slots=True)
class PlainEvalMetricResult:
    """``EvalMetricResult``."""

    metric_name: str
    threshold: float | None = None
    criterion: dict[str, Any] | None = None
    custom_function_path: str | None = None
    score: float | None = None
    eval_status: EvalStatus = EvalStatus.NOT_EVALUATED
    details: dict[str, Any] = field(default_factory=dict)

    def masked(self) -> PlainEvalMetricResult:
        """Every string the report shows masked."""
        return replace(self, metric_name=mask(self.metric_name))


@dataclass(slots=True)
class PlainEvalMetricResultPerInvocation:
    """``EvalMetricResultPerInvocation``."""

    actual_invocation: PlainInvocation
    expected_invocation: PlainInvocation | None = None
    eval_metric_results: list[PlainEvalMetricResult] = field(default_factory=list)

    def masked(self) -> PlainEvalMetricResultPerInvocation:
        """Every string the report shows masked."""
        expected = self.expected_invocation
        return PlainEvalMetricResultPerInvocation(
            self.actual_invocation.masked(),
            None if expected is None else expected.masked(),
            [m.masked() for m in self.eval_metric_results],
        )


@dataclass(slots=True)
class PlainEvalCaseResult:
    """``EvalCaseResult``."""

    final_eval_status: EvalStatus
    eval_set_file: str | None = None
    eval_set_id: str = ""
    eval_id: str = ""
    overall_eval_metric_results: list[PlainEvalMetricResult] = field(default_factory=list)
    eval_metric_result_per_invocation: list[PlainEvalMetricResultPerInvocation] = field(
        default_factory=list
    )
    session_id: str = ""
    user_id: str | None = None
    failure_reasons: list[str] = field(default_factory=list)
    duration_seconds: float | None = None

    def masked(self) -> PlainEvalCaseResult:
        """Every string the report shows masked."""
        return replace(
            self,
            eval_set_file=_masked(self.eval_set_file),
            eval_set_id=mask(self.eval_set_id),
            eval_id=mask(self.eval_id),
            overall_eval_metric_results=[m.masked() for m in self.overall_eval_metric_results],
            eval_metric_result_per_invocation=[
                row.masked() for row in self.eval_metric_result_per_invocation
            ],
            session_id=mask(self.session_id),
            user_id=_masked(self.user_id),
            failure_reasons=[mask(reason) for reason in self.failure_reasons],
        )


@dataclass(slots=True)
class PlainEvalSetResult:
    """``EvalSetResult``."""

    eval_set_result_id: str
    eval_set_id: str
    eval_set_result_name: str | None = None
    eval_case_results: list[PlainEvalCaseResult] = field(default_factory=list)
    creation_timestamp: float = 0.0

    @property
    def passed(self) -> bool:
        """True iff no case failed."""
        return all(c.final_eval_status != EvalStatus.FAILED for c in self.eval_case_results)

    def masked(self) -> PlainEvalSetResult:
        """Every string the report shows masked (``masked_result`` for a plain result)."""
        return replace(
            self,
            eval_set_result_id=mask(self.eval_set_result_id),
            eval_set_id=mask(self.eval_set_id),
            eval_set_result_name=_masked(self.eval_set_result_name),
            eval_case_results=[case.masked() for case in self.eval_case_results],
        )
