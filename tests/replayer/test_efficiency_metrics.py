"""ADK's informational efficiency metrics (google-adk 2.15): ``rec replay`` adds the four
metrics ADK adds to every eval, computed by ADK's own evaluators, and they never decide a
case.

A real ADK agent with a tool (tests/agents/capital_lookup: its second turn looks Italy's
capital up, two model calls) is recorded against the stand-in and replayed offline through
rec's CLI. The parity test runs ADK's own eval service (``LocalEvalService``, as ``adk eval``
does) on the same agent against the same stand-in and compares its numbers with rec's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassettes._eval_result import EvalCaseResult, EvalSetResult, EvalStatus
from rec.cli import main
from tests.agents.adk_recording import USAGE, adk_eval, capital_answers, record_adk

AGENT = Path(__file__).resolve().parents[1] / "agents" / "capital_lookup"
TURNS = [("What is the capital of France?", "And of Italy?")]
EFFICIENCY = [
    "tool_call_count_v1",
    "inference_call_count_v1",
    "token_usage_v1",
    "invocation_duration_v1",
]
COUNTED = EFFICIENCY[:3]
"""The three that count (the fourth is wall-clock time: its value differs run to run)."""
_ANSWER = capital_answers(USAGE)


def _rec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    """The agent's two turns recorded; the eval set's path."""
    from tests.agents.capital_lookup import agent

    return record_adk(
        tmp_path, agent.root_agent, TURNS, responder=_ANSWER, app_name="capital", name="capitals"
    )


def _config(evalset: Path, criteria: dict[str, float]) -> Path:
    path = evalset.parent / "test_config.json"
    path.write_text(json.dumps({"criteria": criteria}))
    return path


def _replayed(
    capsys: pytest.CaptureFixture[str], evalset: Path, results: str = "results"
) -> tuple[int, str, EvalCaseResult]:
    """``rec replay`` of the recording: exit status, output and the case's result saved
    under the folder ``results``."""
    folder = evalset.parent / results
    code, output = _rec(capsys, "replay", str(AGENT), str(evalset), "--results", str(folder))
    [file] = folder.glob("*.evalset_result.json")
    [case] = EvalSetResult.model_validate_json(file.read_bytes()).eval_case_results
    return code, output, case


def _adk_case(evalset: Path, config: Path) -> Any:
    """ADK's own ``EvalCaseResult`` of the case: ``LocalEvalService`` runs the agent against
    a stand-in answering as the recording's did, and scores it with ADK's metrics for
    ``config``."""
    from tests.agents.capital_lookup import agent

    [result] = adk_eval(agent.root_agent, evalset, config, responder=_ANSWER, app_name="capital")
    return result


def _efficiency(case: Any) -> dict[str, Any]:
    """Each efficiency metric's status, and the counting ones' values: over the case and on
    each invocation."""

    def value(metric: Any) -> Any:
        shown = metric.score if metric.metric_name in COUNTED else None
        return (shown, EvalStatus(getattr(metric.eval_status, "value", metric.eval_status)))

    def values(metrics: Any) -> dict[str, Any]:
        return {m.metric_name: value(m) for m in metrics if m.metric_name in EFFICIENCY}

    return {
        "overall": values(case.overall_eval_metric_results),
        "per_invocation": [
            values(row.eval_metric_results) for row in case.eval_metric_result_per_invocation
        ],
    }


@pytest.mark.usefixtures("loopback_only")
def test_a_replayed_case_has_adks_efficiency_numbers(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    adk = _adk_case(recording, _config(recording, {"response_match_score": 0.8}))

    code, output, ours = _replayed(capsys, recording)
    assert code == 0, output
    assert _efficiency(ours) == _efficiency(adk)
    assert [m.metric_name for m in ours.overall_eval_metric_results] == [
        m.metric_name for m in adk.overall_eval_metric_results
    ]
    overall = _efficiency(ours)["overall"]
    assert list(overall) == EFFICIENCY  # in ADK's order, after the configured metric
    assert overall["tool_call_count_v1"] == (0.5, EvalStatus.INFORMATIONAL)  # 0, then 1
    assert overall["inference_call_count_v1"] == (1.5, EvalStatus.INFORMATIONAL)  # 1, then 2
    assert [row["token_usage_v1"][0] for row in _efficiency(ours)["per_invocation"]] == [
        110.0,
        220.0,
    ]  # each call's 100 prompt, 7 answer and 3 thought tokens
    assert ours.final_eval_status is EvalStatus.PASSED
    assert adk.final_eval_status.value == EvalStatus.PASSED


@pytest.mark.usefixtures("loopback_only")
def test_the_efficiency_metrics_never_pass_or_fail_a_case(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(recording, {"response_match_score": 0.8})
    code, output, case = _replayed(capsys, recording)
    assert code == 0, output
    assert case.final_eval_status is EvalStatus.PASSED
    statuses = {m.metric_name: m.eval_status for m in case.overall_eval_metric_results}
    assert statuses == {"response_match_score": EvalStatus.PASSED} | dict.fromkeys(
        EFFICIENCY, EvalStatus.INFORMATIONAL
    )
    assert "1 passed, 0 failed, 1 case" in output

    document = json.loads(recording.read_text())  # the expected answer is now Lyon
    document["eval_cases"][0]["conversation"][0]["final_response"]["parts"] = [{"text": "Lyon."}]
    recording.write_text(json.dumps(document))
    code, output, case = _replayed(capsys, recording, "results-lyon")
    assert code == 1, output
    assert case.final_eval_status is EvalStatus.FAILED
    assert [r.split(":")[0] for r in case.failure_reasons] == ["response_match_score"]
    assert {m.metric_name for m in case.overall_eval_metric_results} >= set(EFFICIENCY)
    assert "tool_call_count_v1 0 (informational)" in output  # the failing turn's values
    assert "tool_call_count_v1 0 FAILED" not in output


@pytest.mark.usefixtures("loopback_only")
def test_a_case_only_efficiency_metrics_score_fails_where_adk_leaves_it_not_evaluated(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No metric that judges, only ADK's informational ones: ADK leaves the case
    NOT_EVALUATED; rec fails it with the reason (nothing judged is not a pass) and still
    reports ADK's efficiency numbers."""
    adk = _adk_case(recording, _config(recording, {}))
    code, output, case = _replayed(capsys, recording)
    assert adk.final_eval_status.value == EvalStatus.NOT_EVALUATED
    assert code == 1, output
    assert case.final_eval_status is EvalStatus.FAILED, output
    assert "no metric judges this case" in output
    assert [m.metric_name for m in case.overall_eval_metric_results] == EFFICIENCY
    assert _efficiency(case) == _efficiency(adk)


@pytest.mark.usefixtures("loopback_only")
def test_an_older_adk_adds_nothing(
    recording: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from google.adk.evaluation import eval_config

    monkeypatch.delattr(eval_config, "append_default_efficiency_metrics")
    _config(recording, {"response_match_score": 0.8})
    code, output, case = _replayed(capsys, recording)
    assert code == 0, output
    assert [m.metric_name for m in case.overall_eval_metric_results] == ["response_match_score"]
    for row in case.eval_metric_result_per_invocation:
        assert [m.metric_name for m in row.eval_metric_results] == ["response_match_score"]
