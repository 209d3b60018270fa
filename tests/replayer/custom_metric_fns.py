"""Custom metric functions with ADK's signature, referenced by dotted path in the tests."""

from __future__ import annotations

from typing import Any

from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus
from google.adk.evaluation.evaluator import EvaluationResult, PerInvocationResult


def _reply_length(
    eval_metric: EvalMetric, actual: list[Invocation], expected: list[Invocation] | None
) -> EvaluationResult:
    assert isinstance(eval_metric, EvalMetric) and eval_metric.threshold is None
    assert all(isinstance(inv, Invocation) for inv in actual)
    threshold = eval_metric.criterion.threshold
    per = []
    for inv in actual:
        text = inv.final_response.parts[0].text if inv.final_response else ""
        score = 1.0 if len(text) <= 20 else 0.0
        per.append(
            PerInvocationResult(
                actual_invocation=inv,
                score=score,
                eval_status=EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED,
            )
        )
    overall = sum(p.score for p in per) / len(per)
    return EvaluationResult(
        overall_score=overall,
        overall_eval_status=EvalStatus.PASSED if overall >= threshold else EvalStatus.FAILED,
        per_invocation_results=per,
    )


def short_reply(
    eval_metric: EvalMetric,
    actual: list[Invocation],
    expected: list[Invocation] | None,
    scenario: Any = None,
) -> EvaluationResult:
    """Sync: 1.0 per invocation whose reply is at most 20 characters."""
    return _reply_length(eval_metric, actual, expected)


async def short_reply_async(
    eval_metric: EvalMetric,
    actual: list[Invocation],
    expected: list[Invocation] | None,
    scenario: Any = None,
) -> EvaluationResult:
    """Async version of :func:`short_reply`."""
    return _reply_length(eval_metric, actual, expected)


def broken(*args: Any) -> EvaluationResult:
    """Always raises."""
    raise RuntimeError("metric exploded")
