"""Custom metrics: ``custom_metrics.<name>.code_config.name`` = ``module.function``.

The function has ADK's signature ``fn(eval_metric, actual_invocations,
expected_invocations, conversation_scenario) -> EvaluationResult`` and may be sync or
async. With google-adk installed it receives ADK's types (``EvalMetric`` with
``threshold=None``, ADK ``Invocation``s), exactly as ADK's ``_CustomMetricEvaluator``
passes them; without it, rec's models. Any failure (import, exception, a wrong return
type) makes the metric NOT_EVALUATED with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cassettes._eval_result import EvalMetric
from cassettes._user_code import import_callable
from replayer._scoring import _adk
from replayer._scoring._adk import MetricRun
from replayer._scoring.outcome import MetricOutcome

__all__ = ["load_metric_function", "run_custom_metric"]


def load_metric_function(path: str, *, near: Path | None = None) -> Callable[..., Any]:
    """Import ``module.function`` (searching around the config file ``near`` too).

    Raises:
        ImportError: the module or attribute does not exist, or is not callable.
    """
    try:
        return import_callable(path, near=near)
    except ImportError as exc:
        raise ImportError(f"cannot import custom metric function {path!r} ({exc})") from exc


async def run_custom_metric(run: MetricRun) -> MetricOutcome:
    """Call the user's function and turn its result into a :class:`MetricOutcome`."""
    spec, actual, expected = run.spec, run.actual, run.expected
    assert spec.custom_function_path is not None
    try:
        function = load_metric_function(spec.custom_function_path, near=spec.config_path)
        if _adk.adk_available():
            metric = _adk.adk_eval_metric(spec).model_copy(deep=True)
            metric.threshold = None
            args: tuple[Any, ...] = (
                metric,
                _adk.adk_invocations(actual),
                _adk.adk_invocations(expected),
                _adk.adk_scenario(run.expected_case),
            )
        else:
            metric = EvalMetric(
                metric_name=spec.name,
                criterion=spec.criterion.to_adk_dict(),
                custom_function_path=spec.custom_function_path,
            )
            scenario = run.expected_case.conversation_scenario if run.expected_case else None
            args = (metric, list(actual), None if expected is None else list(expected), scenario)
        result = await _adk.resolve(function(*args))
        return _adk.outcome_from_adk(result, len(actual))
    except Exception as exc:  # noqa: BLE001 - a user function may raise anything
        return MetricOutcome.not_evaluated(
            f"custom metric {spec.custom_function_path} failed: {type(exc).__name__}: {exc}",
            len(actual),
        )
