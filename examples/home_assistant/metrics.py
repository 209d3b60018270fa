"""A custom eval metric for the home assistant, in ADK's custom-metric shape.

``test_config.json`` names it by dotted path
(``home_assistant.metrics.thermostat_in_comfort_range``); ``adk eval`` and ``rec replay``
import it the same way (the agent folder's parent is on ``sys.path``) and call it with
ADK's arguments::

    fn(eval_metric, actual_invocations, expected_invocations, conversation_scenario)
        -> EvaluationResult

It scores what the agent actually did, with no reference needed: every ``set_thermostat``
call of an invocation must ask for a set point inside the comfort range. A model that
passes 71.6 for "22 degrees" (it converted to Fahrenheit) scores 0.0 for that invocation.
"""

from __future__ import annotations

from typing import Any

from google.adk.evaluation.eval_case import Invocation, get_all_tool_calls
from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus
from google.adk.evaluation.evaluator import EvaluationResult, PerInvocationResult

COMFORT_RANGE_C = (16.0, 26.0)


def _in_range(invocation: Invocation) -> bool:
    low, high = COMFORT_RANGE_C
    for call in get_all_tool_calls(invocation.intermediate_data):
        if call.name == "set_thermostat":
            celsius = (call.args or {}).get("celsius")
            if not isinstance(celsius, (int, float)) or not low <= celsius <= high:
                return False
    return True


def thermostat_in_comfort_range(
    eval_metric: EvalMetric,
    actual_invocations: list[Invocation],
    expected_invocations: list[Invocation] | None,
    conversation_scenario: Any = None,
) -> EvaluationResult:
    """1.0 per invocation whose thermostat set points are all within 16-26 °C, else 0.0."""
    threshold = eval_metric.criterion.threshold if eval_metric.criterion else 1.0
    per_invocation = []
    for invocation in actual_invocations:
        score = 1.0 if _in_range(invocation) else 0.0
        per_invocation.append(
            PerInvocationResult(
                actual_invocation=invocation,
                score=score,
                eval_status=EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED,
            )
        )
    overall = (
        sum(r.score or 0.0 for r in per_invocation) / len(per_invocation) if per_invocation else 1.0
    )
    return EvaluationResult(
        overall_score=overall,
        overall_eval_status=EvalStatus.PASSED if overall >= threshold else EvalStatus.FAILED,
        per_invocation_results=per_invocation,
    )
