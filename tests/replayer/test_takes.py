"""Recorded takes: every recorded run of a case replays and is judged on its own.

A real ADK agent (tests/agents/capital) is recorded five times per case through
``rec replay --mode record --num-runs 5`` against a stand-in scripted to answer the same
question differently, then replayed offline with a plain ``rec replay``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rec.cli import main
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.adk_recording import CAPITAL_AGENT, WaveringCapitals, record_adk

AGENT = CAPITAL_AGENT


def _rec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Exit status and output, each run of spaces and line breaks as one space (the
    report wraps at the terminal's width)."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


@pytest.fixture
def five_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """An eval set of two cases (France wavers, Italy does not), recorded five times each."""
    from tests.agents.capital import agent

    evalset = record_adk(
        tmp_path,
        agent.root_agent,
        [("What is the capital of France?",), ("What is the capital of Italy?",)],
        responder=WaveringCapitals(),
        app_name="capital",
        name="capitals",
    )
    with StandinGemini(WaveringCapitals()) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        code, output = _rec(
            capsys, "replay", str(AGENT), str(evalset), "--mode", "record", "--num-runs", "5",
            "--upstream", api.url, "--workers", "1",
        )  # fmt: skip
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert code == 1, output  # France answers London in two takes of five
    return evalset


def _case(results: Path, eval_id_part: str) -> dict[str, Any]:
    [file] = results.glob("*.evalset_result.json")
    cases = json.loads(file.read_text())["eval_case_results"]
    return next(c for c in cases if eval_id_part in c["eval_id"])


@pytest.mark.usefixtures("loopback_only")
def test_a_plain_replay_runs_every_take_and_a_flaky_case_fails(
    five_takes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    code, output = _rec(
        capsys, "replay", str(AGENT), str(five_takes), "--workers", "1", "--results", str(results)
    )
    assert code == 1, output
    assert "5 takes: 3 passed, pass@5 1.00, pass^5 0.00, flaky (takes 2, 4 failed)" in output
    assert "5 takes: 5 passed, pass@5 1.00, pass^5 1.00, stable" in output
    assert "1 passed, 1 failed, 2 cases" in output
    france = _case(results, "france")
    assert france["takes"]["passed"] == [1, 3, 5]
    assert france["takes"]["verdict"] == "flaky"
    assert france["final_eval_status"] == 2
    assert (
        "take 2: response_match_score=0.750; take 4: response_match_score=0.750"
        in (france["failure_reasons"][0])
    )
    assert _case(results, "italy")["takes"]["verdict"] == "stable"


@pytest.mark.usefixtures("loopback_only")
def test_the_users_rule_pass_at_k_from_the_eval_config(
    five_takes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = five_takes.parent / "test_config.json"
    criteria = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
    config.write_text(json.dumps({"criteria": criteria, "takes": {"min_pass_at_k": 0.6, "k": 1}}))
    code, output = _rec(capsys, "replay", str(AGENT), str(five_takes), "--workers", "1")
    assert code == 0, output  # pass@1 = 3/5
    assert "pass@1 0.60, pass^1 0.60, flaky (takes 2, 4 failed); rule: pass@1 >= 0.6" in output

    config.write_text(json.dumps({"criteria": criteria, "takes": {"min_pass_at_k": 0.7, "k": 1}}))
    code, output = _rec(capsys, "replay", str(AGENT), str(five_takes), "--workers", "1")
    assert code == 1, output


@pytest.mark.usefixtures("loopback_only")
def test_two_replays_of_the_same_takes_report_the_same_bytes_with_one_or_two_workers(
    five_takes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = set()
    for workers in ("1", "2", "1", "2"):
        code, output = _rec(capsys, "replay", str(AGENT), str(five_takes), "--workers", workers)
        assert code == 1, output
        outputs.add(output)
    assert len(outputs) == 1, outputs
