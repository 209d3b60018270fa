"""Custom metrics (sync and async, ADK's signature) and fail-closed judge metrics."""

from __future__ import annotations

import json

import pytest

from cassettes._eval_config import parse_eval_config
from cassettes._eval_result import EvalStatus
from replayer._score import score_evalset

from .evalsets import evalset, invocation

FNS = "tests.replayer.custom_metric_fns"


def _config(function: str, threshold: float = 1.0) -> object:
    return parse_eval_config(
        json.dumps(
            {
                "criteria": {"short": threshold},
                "custom_metrics": {"short": {"code_config": {"name": f"{FNS}.{function}"}}},
            }
        )
    )


@pytest.mark.parametrize(
    "function",
    [pytest.param("short_reply", id="sync"), pytest.param("short_reply_async", id="async")],
)
@pytest.mark.parametrize(
    ("reply", "status"),
    [
        pytest.param("ok", EvalStatus.PASSED, id="short"),
        pytest.param("this reply is much too long to pass", EvalStatus.FAILED, id="long"),
    ],
)
def test_custom_metric(function: str, reply: str, status: EvalStatus) -> None:
    want = evalset({"c": [invocation(reply="x")]})
    got = evalset({"c": [invocation(reply=reply)]})
    case = score_evalset(want, got, _config(function)).eval_case_results[0]
    assert case.final_eval_status is status
    metric = case.overall_eval_metric_results[0]
    assert metric.metric_name == "short"
    assert metric.custom_function_path == f"{FNS}.{function}"
    assert metric.score == (1.0 if status is EvalStatus.PASSED else 0.0)


@pytest.mark.parametrize(
    ("function", "reason"),
    [
        pytest.param("broken", "RuntimeError: metric exploded", id="raises"),
        pytest.param("missing_fn", "cannot import", id="import-error"),
    ],
)
def test_custom_metric_that_cannot_run_fails_closed(function: str, reason: str) -> None:
    want = evalset({"c": [invocation(reply="x")]})
    case = score_evalset(want, want, _config(function)).eval_case_results[0]
    assert case.final_eval_status is EvalStatus.FAILED
    assert case.overall_eval_metric_results[0].eval_status is EvalStatus.NOT_EVALUATED
    assert reason in case.failure_reasons[0]

    allowed = score_evalset(want, want, _config(function), allow_not_evaluated=True)
    assert allowed.eval_case_results[0].final_eval_status is EvalStatus.NOT_EVALUATED
    assert allowed.passed


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_judge_without_recording_or_credentials_fails_with_reason() -> None:
    want = evalset({"c": [invocation(reply="Paris is the capital")]})
    config = parse_eval_config(
        json.dumps(
            {
                "criteria": {
                    "response_match_score": 0.5,
                    "final_response_match_v2": {
                        "threshold": 0.5,
                        "judge_model_options": {"num_samples": 1},
                    },
                }
            }
        )
    )
    case = score_evalset(want, want, config).eval_case_results[0]
    assert case.final_eval_status is EvalStatus.FAILED
    statuses = {m.metric_name: m.eval_status for m in case.overall_eval_metric_results}
    assert statuses == {
        "response_match_score": EvalStatus.PASSED,
        "final_response_match_v2": EvalStatus.NOT_EVALUATED,
    }
    (reason,) = case.failure_reasons
    assert "final_response_match_v2 was not evaluated" in reason
    assert "API key" in reason
    assert "--allow-not-evaluated" in reason


def test_judge_reason_survives_a_silenced_adk_logger(monkeypatch: pytest.MonkeyPatch) -> None:
    """`rec replay` silences ADK's logger for the console: the judge's reason must remain."""
    import logging

    adk_logger = logging.getLogger("google_adk")
    monkeypatch.setattr(adk_logger, "level", logging.CRITICAL)
    want = evalset({"c": [invocation(reply="Paris is the capital")]})
    config = parse_eval_config(
        json.dumps({"criteria": {"final_response_match_v2": {"threshold": 0.5}}})
    )
    (reason,) = score_evalset(want, want, config).eval_case_results[0].failure_reasons
    assert "API key" in reason, reason
    assert adk_logger.level == logging.CRITICAL and adk_logger.propagate
