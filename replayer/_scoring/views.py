"""What scoring and the reports read of an eval set, an eval config and a result.

Each ADK file has one typed face here, a read-only :class:`typing.Protocol` per part
holding what is read of it: the scorers, :mod:`replayer._score` and the console report
take these and nothing else. Two kinds of object answer them: the pydantic models of
:mod:`cassettes` (every file rec loads, and every result it writes), and the NamedTuples
``rec score`` builds for its console report straight from a document the quick check found
clean (:mod:`replayer._scoring.plain_evalset`, ``plain_config``, ``plain_result``: no
pydantic, so the command starts in a third of the time). The block at the end of this
module has mypy check that both answer every Protocol, so a field one of them lacks is a
type error, not a report that breaks on one road only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from typing_extensions import Self

    from cassettes._eval_config import ToolArgRule
    from cassettes._eval_enums import EvalStatus, MatchType
    from cassettes._eval_result import CaseTakes, CaseUsage

__all__ = [
    "CallView",
    "CaseResultView",
    "ContentView",
    "CriterionView",
    "EvalCaseView",
    "EvalSetView",
    "InvocationView",
    "MetricResultView",
    "MetricSpecView",
    "RowView",
    "SetResultView",
]


class CallView(Protocol):
    """A tool call (google-genai's ``FunctionCall``)."""

    @property
    def name(self) -> str | None: ...
    @property
    def args(self) -> dict[str, Any] | None: ...


class PartView(Protocol):
    """A part of a message: its text is all scoring reads."""

    @property
    def text(self) -> str | None: ...


class ContentView(Protocol):
    """A message (google-genai's ``Content``)."""

    @property
    def parts(self) -> Sequence[PartView] | None: ...


class InvocationView(Protocol):
    """One turn: what the user said, the final reply and the tool calls between."""

    @property
    def user_content(self) -> ContentView: ...
    @property
    def final_response(self) -> ContentView | None: ...
    @property
    def tool_calls(self) -> Sequence[CallView]: ...


class SessionInputView(Protocol):
    """The session a case starts in."""

    @property
    def user_id(self) -> str: ...


class EvalCaseView(Protocol):
    """One eval case."""

    @property
    def eval_id(self) -> str: ...
    @property
    def final_session_state(self) -> dict[str, Any] | None: ...
    @property
    def conversation(self) -> Sequence[InvocationView] | None: ...
    @property
    def session_input(self) -> SessionInputView | None: ...


class EvalSetView(Protocol):
    """An eval set."""

    @property
    def eval_set_id(self) -> str: ...
    @property
    def eval_cases(self) -> Sequence[EvalCaseView]: ...


class CriterionView(Protocol):
    """What a metric's criterion holds (the fields of ``Criterion`` scoring reads)."""

    @property
    def match_type(self) -> MatchType: ...
    @property
    def ignore_args(self) -> bool: ...
    @property
    def tool_args(self) -> Mapping[str, ToolArgRule]: ...
    def to_adk_dict(self) -> dict[str, Any]: ...


class MetricSpecView(Protocol):
    """One metric to compute (``MetricSpec``)."""

    @property
    def name(self) -> str: ...
    @property
    def threshold(self) -> float: ...
    @property
    def criterion(self) -> CriterionView: ...
    @property
    def custom_function_path(self) -> str | None: ...


class MetricResultView(Protocol):
    """A metric's score and status (``EvalMetricResult``)."""

    @property
    def metric_name(self) -> str: ...
    @property
    def threshold(self) -> float | None: ...
    @property
    def score(self) -> float | None: ...
    @property
    def eval_status(self) -> EvalStatus: ...


class RowView(Protocol):
    """One invocation's metric results (``EvalMetricResultPerInvocation``)."""

    @property
    def actual_invocation(self) -> InvocationView: ...
    @property
    def expected_invocation(self) -> InvocationView | None: ...
    @property
    def eval_metric_results(self) -> Sequence[MetricResultView]: ...


class CaseResultView(Protocol):
    """The verdict on one case (``EvalCaseResult``)."""

    @property
    def eval_set_file(self) -> str | None: ...
    @property
    def eval_id(self) -> str: ...
    @property
    def final_eval_status(self) -> EvalStatus: ...
    @property
    def failure_reasons(self) -> Sequence[str]: ...
    @property
    def left_recording(self) -> str | None: ...
    @property
    def overall_eval_metric_results(self) -> Sequence[MetricResultView]: ...
    @property
    def eval_metric_result_per_invocation(self) -> Sequence[RowView]: ...
    @property
    def usage(self) -> CaseUsage | None: ...
    @property
    def takes(self) -> CaseTakes | None: ...
    @property
    def multi_run(self) -> str | None: ...


class SetResultView(Protocol):
    """The verdict on one eval set (``EvalSetResult``)."""

    @property
    def eval_set_id(self) -> str: ...
    @property
    def eval_case_results(self) -> Sequence[CaseResultView]: ...
    @property
    def passed(self) -> bool: ...
    def masked(self) -> Self:
        """The result with every string a report shows masked."""
        ...


if TYPE_CHECKING:
    # mypy checks here that both kinds of object answer every Protocol above.
    from cassettes._eval_config import MetricSpec
    from cassettes._eval_result import EvalSetResult
    from cassettes._evalset import EvalSet
    from replayer._scoring.plain_config import PlainMetricSpec
    from replayer._scoring.plain_evalset import PlainEvalSet
    from replayer._scoring.plain_result import PlainEvalSetResult

    def _models_answer(
        evalset: EvalSet, spec: MetricSpec, result: EvalSetResult
    ) -> tuple[EvalSetView, MetricSpecView, SetResultView]:
        return evalset, spec, result

    def _plain_answer(
        evalset: PlainEvalSet, spec: PlainMetricSpec, result: PlainEvalSetResult
    ) -> tuple[EvalSetView, MetricSpecView, SetResultView]:
        return evalset, spec, result
