"""Which scorer computes which metric, for one eval case.

- ``tool_trajectory_avg_score`` and ``response_match_score``: rec's ports of ADK's
  evaluators (bit-identical floats, no google-adk needed).
- ``tool_trajectory_rules_score``, ``tool_trajectory_f1``, ``final_session_state_match``:
  rec's deterministic extras.
- A name under ``custom_metrics``: the user's function.
- Any other ADK metric (judges, safety, multi-turn, efficiency): ADK's own evaluator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cassettes._eval_enums import MatchType
from replayer._scoring.outcome import MetricOutcome
from replayer._scoring.response_match import content_text, rouge1_fmeasure
from replayer._scoring.trajectory import trajectory_f1, trajectory_matches

if TYPE_CHECKING:
    from replayer._scoring._adk import MetricRun
    from replayer._scoring.views import EvalCaseView, InvocationView, MetricSpecView

    Invocations = Sequence[InvocationView]

__all__ = [
    "evaluate_metric",
    "needs_event_loop",
    "response_match_scores",
    "tool_trajectory_scores",
]


def tool_trajectory_scores(
    actual: Invocations, expected: Invocations, spec: MetricSpecView
) -> list[float]:
    """Per-invocation 1.0/0.0 for ``tool_trajectory_avg_score`` / ``..._rules_score``."""
    criterion = spec.criterion
    rules = criterion.tool_args if spec.name == "tool_trajectory_rules_score" else None
    return [
        1.0
        if trajectory_matches(
            got.tool_calls,
            want.tool_calls,
            criterion.match_type,
            ignore_args=criterion.ignore_args,
            tool_args=rules,
        )
        else 0.0
        for got, want in zip(actual, expected, strict=False)
    ]


def response_match_scores(actual: Invocations, expected: Invocations) -> list[float]:
    """Per-invocation ROUGE-1 F-measure of the final responses."""
    return [
        rouge1_fmeasure(content_text(got.final_response), content_text(want.final_response))
        for got, want in zip(actual, expected, strict=False)
    ]


_COMPARING = frozenset(
    {
        "tool_trajectory_avg_score",
        "tool_trajectory_rules_score",
        "response_match_score",
        "tool_trajectory_f1",
    }
)
"""rec's metrics that compare each invocation with an expected one."""


def needs_event_loop(spec: MetricSpecView) -> bool:
    """Whether :func:`evaluate_metric` may await real work for ``spec``: a custom metric (the
    user's function) or one of ADK's evaluators (LLM judges). rec's own metrics await
    nothing and finish without an event loop."""
    return bool(spec.custom_function_path) or (
        spec.name not in _COMPARING and spec.name != "final_session_state_match"
    )


async def evaluate_metric(
    spec: MetricSpecView,
    actual: Invocations,
    expected: Invocations | None,
    *,
    expected_case: EvalCaseView | None = None,
    actual_case: EvalCaseView | None = None,
) -> MetricOutcome:
    """Score one metric over one case's invocations (same length, already checked).

    ``expected`` is None for a ``conversation_scenario`` case (ADK's user simulator played
    the user): a metric that compares with expected invocations is then not evaluated,
    with its reason, as ADK's evaluators raise for it.
    """
    name = spec.name
    if spec.custom_function_path:
        from replayer._scoring.custom import run_custom_metric  # the user's code: on demand

        return await run_custom_metric(_model_run(spec, actual, expected, expected_case))
    if name == "final_session_state_match":
        return _session_state_match(spec, actual, expected_case, actual_case)
    if name not in _COMPARING:
        from replayer._scoring.judge import run_adk_metric  # google-adk: on demand

        return await run_adk_metric(_model_run(spec, actual, expected, expected_case))
    if expected is None:
        return MetricOutcome.not_evaluated(
            f"{name} compares with the expected conversation, and a conversation_scenario "
            "case has none (score it with per_turn_user_simulator_quality_v1, "
            "hallucinations_v1 or a rubric-based metric)",
            len(actual),
        )
    return _compare(spec, actual, expected)


def _compare(spec: MetricSpecView, actual: Invocations, expected: Invocations) -> MetricOutcome:
    """One of rec's metrics that compare each invocation with its expected one."""
    criterion = spec.criterion
    if spec.name == "tool_trajectory_avg_score" and criterion.match_type in (
        MatchType.SUBSET,
        MatchType.SUPERSET,
    ):
        return MetricOutcome.not_evaluated(
            f"{spec.name} has no match type {criterion.match_type.name}", len(actual)
        )
    if spec.name == "response_match_score":
        scores = response_match_scores(actual, expected)
    elif spec.name == "tool_trajectory_f1":
        scores = [
            trajectory_f1(
                got.tool_calls,
                want.tool_calls,
                ignore_args=criterion.ignore_args,
                tool_args=criterion.tool_args,
            )
            for got, want in zip(actual, expected, strict=False)
        ]
    else:  # tool_trajectory_avg_score, tool_trajectory_rules_score
        scores = tool_trajectory_scores(actual, expected, spec)
    return MetricOutcome.from_scores(scores, spec.threshold)


def _session_state_match(
    spec: MetricSpecView,
    actual: Invocations,
    expected_case: EvalCaseView | None,
    actual_case: EvalCaseView | None,
) -> MetricOutcome:
    """``final_session_state_match``: the session state at the end equals the expected one."""
    if expected_case is None or actual_case is None:
        return MetricOutcome.not_evaluated(f"{spec.name} needs both eval cases", len(actual))
    want = expected_case.final_session_state or {}
    got = actual_case.final_session_state or {}
    score = 1.0 if got == want else 0.0
    return MetricOutcome.from_scores([score] * len(actual), spec.threshold)


def _model_run(
    spec: MetricSpecView,
    actual: Invocations,
    expected: Invocations | None,
    expected_case: EvalCaseView | None,
) -> MetricRun:
    """What ADK's evaluators and custom metrics are given, as the models: a plain config
    never names them (:mod:`replayer._scoring.plain_config`), so only models reach here."""
    from replayer._scoring._adk import MetricRun  # rec's models: on demand

    models: Any = (spec, actual, expected, expected_case)
    return MetricRun(*models)
