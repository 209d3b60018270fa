"""LLM-judge (and every other ADK-only) metric, run through ADK's own evaluators.

``final_response_match_v2``, ``rubric_based_*``, ``hallucinations_v1``, ``safety_v1``,
the multi-turn and efficiency metrics: rec does not re-implement them. It builds the
``EvalMetric`` ADK would build from the config and asks ADK's metric registry for the
evaluator. The judge model is created by ADK's ``LLMRegistry`` and called through
google-genai's normal client, which honours ``GOOGLE_GEMINI_BASE_URL``: point that at
rec's proxy and judge traffic is recorded and replayed like the agent's. ``safety_v1``,
``response_evaluation_score`` and the ``multi_turn_*`` metrics call the Vertex AI evaluation
service instead, an HTTP call of the process recorded and answered like a tool's
(:mod:`replayer._scoring.evaluation_service`); a call replay refused fails the metric.

ADK logs and swallows judge failures (the metric becomes NOT_EVALUATED with no reason).
rec captures those log records so the reason reaches the report.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from cassettes._eval_result import EvalStatus
from replayer._scoring import _adk
from replayer._scoring import evaluation_service as service
from replayer._scoring._adk import MetricRun
from replayer._scoring.outcome import MetricOutcome

__all__ = ["run_adk_metric"]


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        reason = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            reason = f"{type(exc).__name__}: {exc}"
        if reason not in self.reasons:
            self.reasons.append(reason)


@contextlib.contextmanager
def _adk_warnings() -> Iterator[_Collector]:
    """Collect what ADK warns of (the reasons a judge could not run) for the block."""
    collector = _Collector()
    adk_logger = logging.getLogger("google_adk")
    saved = (adk_logger.level, adk_logger.propagate)
    if adk_logger.getEffectiveLevel() > logging.WARNING:
        # Someone silenced ADK (`rec replay` does, for the console): the judge's reasons
        # are still needed for the report, and still kept off the console.
        adk_logger.setLevel(logging.WARNING)
        adk_logger.propagate = False
    adk_logger.addHandler(collector)
    try:
        yield collector
    finally:
        adk_logger.removeHandler(collector)
        adk_logger.setLevel(saved[0])
        adk_logger.propagate = saved[1]


async def run_adk_metric(run: MetricRun) -> MetricOutcome:
    """Run ``run.spec`` with ADK's evaluator; any failure becomes NOT_EVALUATED with a reason.

    ``run.expected`` is None for a ``conversation_scenario`` case, whose scenario ADK's
    evaluator is given (``per_turn_user_simulator_quality_v1`` judges the simulated user
    against its plan).
    """
    spec, actual = run.spec, run.actual
    if not _adk.adk_available():
        return MetricOutcome.not_evaluated(
            f"{spec.name} needs google-adk (pip install 'agent-rec[adk]')", len(actual)
        )
    with _adk_warnings() as collector:
        try:
            result = await _evaluate(run)
            outcome = _adk.outcome_from_adk(result, len(actual))
        except Exception as exc:  # noqa: BLE001 - ADK evaluators raise anything
            refused = service.refusal_in(exc)
            return MetricOutcome.not_evaluated(
                service.missing_recording(spec.name, [refused] if refused else [])
                or f"{spec.name} could not run: {type(exc).__name__}: {exc}",
                len(actual),
            )
    informational = outcome.overall_status is EvalStatus.INFORMATIONAL
    # ADK averages the invocations the service scored and drops the ones it could not:
    # an error on any invocation leaves the metric unscored, never scored on the rest.
    errors = service.error_reasons(result) if service.uses_service(spec.name) else []
    if (
        errors
        or outcome.overall_status is EvalStatus.NOT_EVALUATED
        or (outcome.overall_score is None and not informational)
    ):
        why = "; ".join([*collector.reasons, *errors][:3]) or "the evaluator produced no score"
        outcome.overall_score = None
        outcome.overall_status = EvalStatus.NOT_EVALUATED
        outcome.reason = service.missing_recording(spec.name, errors) or (
            f"{spec.name} produced no score ({why}). A judge needs a recording of its "
            "model calls or credentials"
        )
    return outcome


async def _evaluate(run: MetricRun) -> Any:
    """ADK's ``EvaluationResult`` for ``spec`` from ADK's own evaluator.

    A metric scored by the Vertex AI evaluation service gets run-independent ids and the
    environment its client is built in (:mod:`replayer._scoring.evaluation_service`).
    """
    from google.adk.evaluation.metric_evaluator_registry import (
        DEFAULT_METRIC_EVALUATOR_REGISTRY,
    )

    adk_actual = _adk.adk_invocations(run.actual) or []
    adk_expected = _adk.adk_invocations(run.expected)
    _adk.copy_rubrics(run.expected_case, adk_expected, adk_actual)
    evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(_adk.adk_eval_metric(run.spec))
    through_service = service.uses_service(run.spec.name)
    if through_service:
        service.stable_invocations(adk_actual)
    # The evaluation-service evaluators are synchronous: the environment is theirs while
    # they run, and never held across an await.
    with service.service_environment() if through_service else contextlib.nullcontext():
        result = evaluator.evaluate_invocations(
            actual_invocations=adk_actual,
            expected_invocations=adk_expected,
            conversation_scenario=_adk.adk_scenario(run.expected_case),
        )
    return await _adk.resolve(result)
