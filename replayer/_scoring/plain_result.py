"""The result of a plain score: ``EvalSetResult``'s fields without pydantic.

A plain score (:mod:`replayer._scoring.plain_evalset`) ends in the console report and
nowhere else: ``--json``, ``--results``, ``--junit`` and ``--html`` take the models. These
classes carry the models' field names and defaults, so :mod:`replayer._score` fills either
and :mod:`replayer._reports.console` reads either; :meth:`PlainEvalSetResult.masked` masks
every string the report shows, as ``masked_result`` masks a model result.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

from cassettes._eval_enums import EvalStatus
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


def _texts_masked(result: _Result, names: tuple[str, ...], **parts: Any) -> _Result:
    """``result`` with the texts called ``names`` masked and ``parts`` (masked) put in."""
    texts: dict[str, Any] = {name: _masked(getattr(result, name)) for name in names}
    return result._replace(**texts, **parts)


_Result = TypeVar("_Result", "PlainEvalCaseResult", "PlainEvalSetResult")

# NamedTuples, not dataclasses: making a dataclass costs a fraction of a millisecond
# each, and these exist to start fast.


class PlainEvalMetricResult(NamedTuple):
    """``EvalMetricResult``."""

    metric_name: str
    threshold: float | None
    criterion: dict[str, Any] | None
    custom_function_path: str | None
    score: float | None
    eval_status: EvalStatus

    def rescored(self, score: float | None, eval_status: EvalStatus) -> PlainEvalMetricResult:
        """This metric with another score and status (``model_copy(update=...)``)."""
        return self._replace(score=score, eval_status=eval_status)

    def masked(self) -> PlainEvalMetricResult:
        """Every string the report shows masked."""
        return self._replace(metric_name=mask(self.metric_name))


class PlainEvalMetricResultPerInvocation(NamedTuple):
    """``EvalMetricResultPerInvocation``."""

    actual_invocation: PlainInvocation
    expected_invocation: PlainInvocation | None
    eval_metric_results: list[PlainEvalMetricResult]

    def masked(self) -> PlainEvalMetricResultPerInvocation:
        """Every string the report shows masked."""
        expected = self.expected_invocation
        return PlainEvalMetricResultPerInvocation(
            self.actual_invocation.masked(),
            None if expected is None else expected.masked(),
            [m.masked() for m in self.eval_metric_results],
        )


class PlainEvalCaseResult(NamedTuple):
    """``EvalCaseResult`` (rec's ``left_recording``, ``usage`` and ``takes`` are None:
    nothing ran)."""

    eval_set_file: str | None
    eval_set_id: str
    eval_id: str
    final_eval_status: EvalStatus
    overall_eval_metric_results: list[PlainEvalMetricResult]
    eval_metric_result_per_invocation: list[PlainEvalMetricResultPerInvocation]
    user_id: str | None
    failure_reasons: list[str]
    session_id: str = ""
    left_recording: str | None = None
    usage: None = None
    takes: None = None
    multi_run: None = None
    replayed_reads: None = None
    """Nothing ran: no recorded reads were served (``EvalCaseResult.replayed_reads``)."""

    def masked(self) -> PlainEvalCaseResult:
        """Every string the report shows masked."""
        rows = self.eval_metric_result_per_invocation
        return _texts_masked(
            self,
            ("eval_set_file", "eval_set_id", "eval_id", "user_id", "session_id"),
            overall_eval_metric_results=[m.masked() for m in self.overall_eval_metric_results],
            eval_metric_result_per_invocation=[row.masked() for row in rows],
            failure_reasons=[mask(reason) for reason in self.failure_reasons],
        )


class PlainEvalSetResult(NamedTuple):
    """``EvalSetResult``."""

    eval_set_result_id: str
    eval_set_result_name: str | None
    eval_set_id: str
    eval_case_results: list[PlainEvalCaseResult]
    creation_timestamp: float

    @property
    def passed(self) -> bool:
        """True iff no case failed."""
        return all(c.final_eval_status != EvalStatus.FAILED for c in self.eval_case_results)

    def masked(self) -> PlainEvalSetResult:
        """Every string the report shows masked (``masked_result`` for a plain result)."""
        cases = [case.masked() for case in self.eval_case_results]
        names = ("eval_set_result_id", "eval_set_result_name", "eval_set_id")
        return _texts_masked(self, names, eval_case_results=cases)
