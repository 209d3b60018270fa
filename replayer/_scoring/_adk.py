"""Conversion of rec's EvalSet/metric models to google-adk's, for ADK's own evaluators.

Imported lazily: scoring the built-in metrics never needs google-adk.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from cassettes._eval_config import MetricSpec
from cassettes._eval_result import EvalStatus
from cassettes._evalset import EvalCase, Invocation
from replayer._compat import set_adk_custom_function_path
from replayer._scoring.outcome import MetricOutcome

__all__ = [
    "MetricRun",
    "adk_available",
    "adk_eval_metric",
    "adk_invocations",
    "adk_scenario",
    "outcome_from_adk",
]


@dataclass(frozen=True)
class MetricRun:
    """One metric over one case, as ADK's evaluators and a custom metric are given it."""

    spec: MetricSpec
    actual: list[Invocation]
    expected: list[Invocation] | None
    """None for a ``conversation_scenario`` case (ADK's user simulator played the user)."""
    expected_case: EvalCase | None


def adk_available() -> bool:
    """True iff google-adk's evaluation package imports."""
    try:
        import google.adk.evaluation.eval_metrics  # noqa: F401
    except ImportError:
        return False
    return True


def adk_invocations(invocations: list[Invocation] | None) -> list[Any] | None:
    """rec Invocations -> ``google.adk.evaluation.eval_case.Invocation`` (deep copies).

    None (a ``conversation_scenario`` case's expected invocations) stays None.
    """
    from google.adk.evaluation.eval_case import Invocation as AdkInvocation

    if invocations is None:
        return None
    return [AdkInvocation.model_validate(inv.model_dump(exclude_none=True)) for inv in invocations]


def adk_scenario(case: EvalCase | None) -> Any:
    """The case's ``conversation_scenario`` as ADK's ``ConversationScenario`` (or None)."""
    from google.adk.evaluation.conversation_scenarios import ConversationScenario

    scenario = case.conversation_scenario if case is not None else None
    if scenario is None or isinstance(scenario, ConversationScenario):
        return scenario
    return ConversationScenario.model_validate(scenario)


def copy_rubrics(case: EvalCase | None, expected: list[Any] | None, actual: list[Any]) -> None:
    """Copy case-level and expected-invocation rubrics onto the actual ones, as ADK does."""
    from google.adk.evaluation.eval_rubrics import Rubric

    def add(invocation: Any, rubrics: list[Any]) -> None:
        invocation.rubrics = list(invocation.rubrics or [])
        present = {r.rubric_id for r in invocation.rubrics}
        for rubric in rubrics:
            parsed = rubric if isinstance(rubric, Rubric) else Rubric.model_validate(rubric)
            if parsed.rubric_id not in present:
                invocation.rubrics.append(parsed)
                present.add(parsed.rubric_id)

    if case is not None and case.rubrics:
        for invocation in actual:
            add(invocation, case.rubrics)
    for got, want in zip(actual, expected or [], strict=False):
        if want.rubrics:
            add(got, want.rubrics)


def adk_eval_metric(spec: MetricSpec) -> Any:
    """The ``EvalMetric`` ADK's ``get_eval_metrics_from_config`` would build for ``spec``."""
    from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric

    metric = EvalMetric(
        metric_name=spec.name,
        threshold=spec.threshold,
        criterion=BaseCriterion.model_validate(spec.criterion.to_adk_dict()),
        custom_function_path=spec.custom_function_path,
    )
    set_adk_custom_function_path(metric, spec.custom_function_path)
    return metric


async def resolve(result: Any) -> Any:
    """Await ``result`` if it is awaitable (ADK evaluators and custom metrics may be either)."""
    if inspect.isawaitable(result):
        return await result
    return result


def outcome_from_adk(result: Any, invocations: int) -> MetricOutcome:
    """ADK's ``EvaluationResult`` (or a duck-typed look-alike) -> :class:`MetricOutcome`."""
    per = [
        (r.score, EvalStatus(_status_value(r.eval_status)))
        for r in (getattr(result, "per_invocation_results", None) or [])
    ]
    if len(per) != invocations:
        per = [(None, EvalStatus.NOT_EVALUATED)] * invocations
    status = EvalStatus(_status_value(result.overall_eval_status))
    return MetricOutcome(result.overall_score, status, per)


def _status_value(status: Any) -> int:
    return int(getattr(status, "value", status))
