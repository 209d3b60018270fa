"""The eval config's ``multi_run_config`` (ADK 2.15): each case run several times and judged
on all of its runs, by ADK's own aggregator.

A real ADK agent (tests/agents/capital) is recorded five times per case against a stand-in
that answers France right three times of five (Paris, London, Paris, London, Paris) and
Italy right every time; ``rec replay`` then judges the recorded runs offline. The parity
test runs ADK's own eval service (``LocalEvalService``, as ``adk eval`` does) on the same
agent against the same stand-in, and compares ADK's saved verdicts with rec's.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from cassettes._eval_result import EvalSetResult
from rec.cli import main
from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from rec.standin.server import StandinGemini
from tests.agents.adk_recording import CAPITAL_AGENT, USAGE, record_adk

CRITERIA = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


def _answer(text: str) -> Reply:
    content = {"role": "model", "parts": [{"text": text}]}
    return Reply(chunks=({"candidates": [{"content": content, "finishReason": "STOP"}],
                          "usageMetadata": USAGE},))  # fmt: skip


class _ThreeOfFive:
    """France: Paris, London, Paris, London, Paris, ...; Italy: always Rome."""

    def __init__(self) -> None:
        self._france = itertools.cycle(["The capital is Paris.", "The capital is London."])

    def __call__(self, request: StandinRequest) -> Reply:
        if "France" in json.dumps(request.contents):
            return _answer(next(self._france))
        return _answer("The capital is Rome.")


QUESTIONS = [("What is the capital of France?",), ("What is the capital of Italy?",)]


def _rec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


def _config(folder: Path, multi_run: dict[str, Any]) -> Path:
    path = folder / "test_config.json"
    path.write_text(json.dumps({"criteria": CRITERIA, "multi_run_config": multi_run}))
    return path


@pytest.fixture
def five_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The two cases recorded five times each: the config's ``num_runs`` says how many
    (no ``--num-runs``), and the record run is judged by the config's rules already."""
    from tests.agents.capital import agent

    evalset = record_adk(
        tmp_path, agent.root_agent, QUESTIONS, responder=_ThreeOfFive(), app_name="capital",
        name="capitals",
    )  # fmt: skip
    _config(tmp_path, {"num_runs": 5, "cross_run_criteria": [{"method": "pass_rate",
                                                             "threshold": 0.9}]})  # fmt: skip
    with StandinGemini(_ThreeOfFive()) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        code, output = _rec(
            capsys, "replay", str(CAPITAL_AGENT), str(evalset), "--mode", "record",
            "--upstream", api.url, "--workers", "1",
        )  # fmt: skip
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert code == 1, output  # France: pass_rate 0.6 < 0.9
    assert "5 runs: 3 passed, 2 failed" in output
    return evalset


def _result(folder: Path) -> EvalSetResult:
    [file] = folder.glob("*.evalset_result.json")
    return EvalSetResult.model_validate_json(file.read_bytes())


@pytest.mark.usefixtures("loopback_only")
@pytest.mark.parametrize(
    ("rule", "code", "france"),
    [
        pytest.param({"method": "pass_rate", "threshold": 0.6}, 0, 1, id="pass-rate-met"),
        pytest.param({"method": "pass_rate", "threshold": 0.7}, 1, 2, id="pass-rate-missed"),
        pytest.param({"method": "pass_at_k", "k": 2, "threshold": 0.9}, 0, 1, id="pass@2-met"),
        pytest.param({"method": "pass_hat_k", "k": 2, "threshold": 0.5}, 1, 2, id="pass^2-missed"),
    ],
)
def test_a_replay_judges_each_case_on_its_recorded_runs(
    five_runs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rule: dict[str, Any],
    code: int,
    france: int,
) -> None:
    # Metrics judged by pass counts too, so no metric's mean decides the case alone.
    _config(five_runs.parent, {"cross_run_scoring": {"method": "pass_rate", "threshold": 0.0},
                               "cross_run_criteria": [rule]})  # fmt: skip
    results = tmp_path / "results"
    got, output = _rec(
        capsys, "replay", str(CAPITAL_AGENT), str(five_runs), "--workers", "1",
        "--results", str(results),
    )  # fmt: skip
    assert got == code, output
    summaries = {s.eval_id: s for s in _result(results).multi_run_case_summaries or []}
    by_country = {("france" if "france" in k else "italy"): s for k, s in summaries.items()}
    assert by_country["france"].final_eval_status == france
    assert (by_country["france"].passed_runs, by_country["france"].failed_runs) == (3, 2)
    assert by_country["italy"].final_eval_status == 1
    assert by_country["italy"].pass_rate == 1.0
    [cross] = by_country["france"].cross_run_results
    assert cross.threshold == rule["threshold"]
    case = next(c for c in _result(results).eval_case_results if "france" in c.eval_id)
    assert case.final_eval_status == france
    assert case.multi_run is not None and case.multi_run in output


@pytest.mark.usefixtures("loopback_only")
def test_pass_at_k_drawing_more_runs_than_there_are_is_refused(
    five_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(five_runs.parent, {"cross_run_criteria": [{"method": "pass_at_k", "k": 6}]})
    code, output = _rec(capsys, "replay", str(CAPITAL_AGENT), str(five_runs), "--workers", "1")
    assert code == 2, output
    assert "test_config.json:multi_run_config.cross_run_criteria[0]: k=6" in output
    assert "--num-runs" in output


@pytest.mark.usefixtures("loopback_only")
def test_custom_methods_are_refused_with_the_file_and_the_fix(
    five_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(
        five_runs.parent,
        {"custom_methods": {"p25": {"code_config": {"name": "m.p25"}, "uses_scores": True}}},
    )
    code, output = _rec(capsys, "replay", str(CAPITAL_AGENT), str(five_runs), "--workers", "1")
    assert code == 2, output
    assert "test_config.json:multi_run_config: custom_methods (p25) is not run by rec" in output
    code, output = _rec(capsys, "check", str(config))
    assert code == 1, output  # rec check's status for a file with problems
    assert "custom_methods (p25) is not run by rec" in output
