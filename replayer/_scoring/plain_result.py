"""The result of a plain score: ``EvalSetResult``'s fields without pydantic.

A plain score (:mod:`replayer._scoring.plain_evalset`) ends in the console report and
nowhere else: ``--json``, ``--results``, ``--junit`` and ``--html`` take the models. These
classes carry the models' field names and defaults, so :mod:`replayer._score` fills either
and :mod:`replayer._reports.console` reads either; :meth:`PlainEvalSetResult.masked` masks
every string the report shows, as ``masked_result`` masks a model result.
"""

from __future__ import annotations

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


# Plain classes with __slots__, not dataclasses: making a dataclass costs a fraction of a
# millisecond each, and these exist to start fast.


class PlainEvalMetricResult:
    """``EvalMetricResult``."""

    __slots__ = (
        "metric_name",
        "threshold",
        "criterion",
        "custom_function_path",
        "score",
        "eval_status",
        "details",
    )

    def __init__(
        self,
        metric_name: str,
        threshold: float | None,
        criterion: dict[str, Any] | None,
        custom_function_path: str | None,
        score: float | None,
        eval_status: EvalStatus,
    ) -> None:
        self.metric_name = metric_name
        self.threshold = threshold
        self.criterion = criterion
        self.custom_function_path = custom_function_path
        self.score = score
        self.eval_status = eval_status
        self.details: dict[str, Any] = {}

    def rescored(self, score: float | None, eval_status: EvalStatus) -> PlainEvalMetricResult:
        """This metric with another score and status (``model_copy(update=...)``)."""
        return PlainEvalMetricResult(
            self.metric_name,
            self.threshold,
            self.criterion,
            self.custom_function_path,
            score,
            eval_status,
        )

    def masked(self) -> PlainEvalMetricResult:
        """Every string the report shows masked."""
        masked = self.rescored(self.score, self.eval_status)
        masked.metric_name = mask(self.metric_name)
        return masked


class PlainEvalMetricResultPerInvocation:
    """``EvalMetricResultPerInvocation``."""

    __slots__ = ("actual_invocation", "expected_invocation", "eval_metric_results")

    def __init__(
        self,
        actual_invocation: PlainInvocation,
        expected_invocation: PlainInvocation | None,
        eval_metric_results: list[PlainEvalMetricResult],
    ) -> None:
        self.actual_invocation = actual_invocation
        self.expected_invocation = expected_invocation
        self.eval_metric_results = eval_metric_results

    def masked(self) -> PlainEvalMetricResultPerInvocation:
        """Every string the report shows masked."""
        expected = self.expected_invocation
        return PlainEvalMetricResultPerInvocation(
            self.actual_invocation.masked(),
            None if expected is None else expected.masked(),
            [m.masked() for m in self.eval_metric_results],
        )


class PlainEvalCaseResult:
    """``EvalCaseResult`` (rec's ``duration_seconds`` and ``left_recording`` are None:
    nothing ran)."""

    __slots__ = (
        "eval_set_file",
        "eval_set_id",
        "eval_id",
        "final_eval_status",
        "overall_eval_metric_results",
        "eval_metric_result_per_invocation",
        "session_id",
        "user_id",
        "failure_reasons",
    )
    duration_seconds: float | None = None
    left_recording: str | None = None
    usage: None = None
    """Nothing ran: no recorded figures (``EvalCaseResult.usage``)."""
    takes: None = None
    replayed_reads: None = None
    """Nothing ran: no recorded reads were served (``EvalCaseResult.replayed_reads``)."""

    def __init__(
        self,
        *,
        eval_set_file: str | None,
        eval_set_id: str,
        eval_id: str,
        final_eval_status: EvalStatus,
        overall_eval_metric_results: list[PlainEvalMetricResult],
        eval_metric_result_per_invocation: list[PlainEvalMetricResultPerInvocation],
        user_id: str | None,
        failure_reasons: list[str],
        session_id: str = "",
    ) -> None:
        self.eval_set_file = eval_set_file
        self.eval_set_id = eval_set_id
        self.eval_id = eval_id
        self.final_eval_status = final_eval_status
        self.overall_eval_metric_results = overall_eval_metric_results
        self.eval_metric_result_per_invocation = eval_metric_result_per_invocation
        self.session_id = session_id
        self.user_id = user_id
        self.failure_reasons = failure_reasons

    def masked(self) -> PlainEvalCaseResult:
        """Every string the report shows masked."""
        return PlainEvalCaseResult(
            eval_set_file=_masked(self.eval_set_file),
            eval_set_id=mask(self.eval_set_id),
            eval_id=mask(self.eval_id),
            final_eval_status=self.final_eval_status,
            overall_eval_metric_results=[m.masked() for m in self.overall_eval_metric_results],
            eval_metric_result_per_invocation=[
                row.masked() for row in self.eval_metric_result_per_invocation
            ],
            user_id=_masked(self.user_id),
            failure_reasons=[mask(reason) for reason in self.failure_reasons],
            session_id=mask(self.session_id),
        )


class PlainEvalSetResult:
    """``EvalSetResult``."""

    __slots__ = (
        "eval_set_result_id",
        "eval_set_result_name",
        "eval_set_id",
        "eval_case_results",
        "creation_timestamp",
    )

    def __init__(
        self,
        *,
        eval_set_result_id: str,
        eval_set_result_name: str | None,
        eval_set_id: str,
        eval_case_results: list[PlainEvalCaseResult],
        creation_timestamp: float,
    ) -> None:
        self.eval_set_result_id = eval_set_result_id
        self.eval_set_result_name = eval_set_result_name
        self.eval_set_id = eval_set_id
        self.eval_case_results = eval_case_results
        self.creation_timestamp = creation_timestamp

    @property
    def passed(self) -> bool:
        """True iff no case failed."""
        return all(c.final_eval_status != EvalStatus.FAILED for c in self.eval_case_results)

    def masked(self) -> PlainEvalSetResult:
        """Every string the report shows masked (``masked_result`` for a plain result)."""
        return PlainEvalSetResult(
            eval_set_result_id=mask(self.eval_set_result_id),
            eval_set_result_name=_masked(self.eval_set_result_name),
            eval_set_id=mask(self.eval_set_id),
            eval_case_results=[case.masked() for case in self.eval_case_results],
            creation_timestamp=self.creation_timestamp,
        )
