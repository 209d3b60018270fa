"""ADK's informational efficiency metrics, scored by ADK's own evaluators.

google-adk 2.15 and later add ``tool_call_count_v1``, ``inference_call_count_v1``,
``token_usage_v1`` and ``invocation_duration_v1`` to every eval: each reports a value per
invocation and their mean for the case, with the status INFORMATIONAL, and never passes
or fails a case. rec adds the same metrics, computed by the same evaluators on the same
invocations, where the installed google-adk has them; an older one adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from replayer._scoring.outcome import MetricOutcome

if TYPE_CHECKING:
    from replayer._scoring.views import InvocationView

__all__ = ["InformationalMetric", "efficiency_metrics", "evaluate_informational"]


@dataclass(frozen=True)
class InformationalMetric:
    """A metric that only reports (ADK's ``EvalMetric`` with no threshold or criterion)."""

    name: str
    threshold: None = None
    criterion: None = None
    custom_function_path: None = None


def efficiency_metrics(configured: Sequence[str]) -> list[InformationalMetric]:
    """The efficiency metrics ADK appends to ``configured`` (the config's metric names):
    those it has that the config does not name, in ADK's order."""
    from replayer._compat import adk_efficiency_metrics

    added = [name for name in adk_efficiency_metrics() if name not in configured]
    return [InformationalMetric(name) for name in added]


async def evaluate_informational(
    metric: InformationalMetric, actual: Sequence[InvocationView]
) -> MetricOutcome:
    """``metric`` over one case's actual invocations, by ADK's evaluator. One that cannot
    run is NOT_EVALUATED with its reason, as in ADK, and still decides nothing."""
    from google.adk.evaluation.eval_metrics import EvalMetric

    from replayer._compat import adk_efficiency_evaluator
    from replayer._scoring import _adk

    try:
        evaluator = adk_efficiency_evaluator(EvalMetric(metric_name=metric.name))
        result = await _adk.resolve(
            evaluator.evaluate_invocations(
                actual_invocations=_adk.adk_invocations(list(actual)) or [],  # type: ignore[arg-type]
                expected_invocations=None,
            )
        )
    except Exception as exc:  # noqa: BLE001 - ADK evaluators raise anything
        return MetricOutcome.not_evaluated(
            f"{metric.name} could not run: {type(exc).__name__}: {exc}", len(actual)
        )
    return _adk.outcome_from_adk(result, len(actual))
