"""``conversation_scenario`` cases replay with ADK's user simulator driven from the recording.

Recorded once per module through ``rec start -- adk eval`` (real ADK, real sockets, the
stand-in playing the agent's model, the simulated user and the judge); each replay runs
with the stand-in stopped, no key and sockets refused beyond loopback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rec.cli import main
from tests.agents.scenario_recording import SCENARIOS, ScenarioRecording, record_scenarios


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> ScenarioRecording:
    recording = record_scenarios(tmp_path_factory.mktemp("scenarios"))
    assert f"Tests passed: {len(SCENARIOS)}" in recording.adk_stdout, recording.adk_stdout
    return recording


@pytest.fixture
def offline(loopback_only: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("TRAVEL_RATES_URL", raising=False)


def _replay(
    capsys: pytest.CaptureFixture[str], recording: ScenarioRecording, agent: Path, *args: str
) -> tuple[int, str]:
    code = main(
        [
            "replay",
            str(agent),
            str(recording.evalset),
            "--recording",
            str(recording.cassette),
            "--config",
            str(recording.config),
            *args,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_recording_keeps_the_scenarios_and_the_config(recorded: ScenarioRecording) -> None:
    # The EvalSet rec writes for `adk eval` re-runs the simulator: the scenario cases, not
    # the turns the simulated user said once.
    written = json.loads((recorded.out / "scenarios.evalset.json").read_text())
    given = json.loads(recorded.evalset.read_text())
    assert written["eval_cases"] == given["eval_cases"]
    config = json.loads((recorded.out / "test_config.json").read_text())
    assert config == json.loads(recorded.config.read_text())


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.usefixtures("offline")
def test_scenario_cases_replay_the_simulated_turns_and_the_live_verdict(
    recorded: ScenarioRecording, tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    results = tmp_path / "results"
    code, output = _replay(
        capsys, recorded, recorded.agent, "--workers", workers, "--results", str(results)
    )
    assert code == 0, output
    assert f"{len(SCENARIOS)} passed, 0 failed" in output, output
    [path] = results.glob("*.evalset_result.json")
    replayed = json.loads(path.read_text())["eval_case_results"]
    live = recorded.adk_results()
    for case in replayed:
        said = [
            row["actual_invocation"]["user_content"]["parts"][0]["text"]
            for row in case["eval_metric_result_per_invocation"]
        ]
        # The simulated user said what it said live: the starting prompt, then each plan line.
        assert (case["final_eval_status"], said) == live[case["eval_id"]], said
        assert len(said) == 1 + len(SCENARIOS[case["eval_id"]]["conversation_plan"].splitlines())
        metric, *informational = case["overall_eval_metric_results"]
        assert metric["metric_name"] == "per_turn_user_simulator_quality_v1"
        assert metric["score"] == 1.0
        # ADK's informational efficiency metrics follow, as adk eval adds them to every eval.
        assert [(m["metric_name"], m["eval_status"]) for m in informational] == [
            ("tool_call_count_v1", 4),
            ("inference_call_count_v1", 4),
            ("token_usage_v1", 4),
            ("invocation_duration_v1", 4),
        ]


@pytest.mark.usefixtures("offline")
def test_the_recording_folder_replays_as_written(
    recorded: ScenarioRecording, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["replay", str(recorded.agent), str(recorded.out), "--workers", "1"])
    output = capsys.readouterr().out
    assert code == 0, output
    assert f"{len(SCENARIOS)} passed, 0 failed" in output, output


_SIGNATURE = """


def _sign(callback_context, llm_response):
    for part in (llm_response.content.parts if llm_response.content else None) or []:
        if part.text:
            part.text += " (Have a nice trip!)"
    return llm_response


root_agent.after_model_callback = _sign
"""


@pytest.mark.usefixtures("offline")
def test_an_agent_that_makes_the_simulator_say_something_new_fails_closed(
    recorded: ScenarioRecording, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The agent's model calls are unchanged (same requests, recorded answers); its replies
    # are not, so the simulated user's next prompt is one the recording never saw.
    edited = tmp_path / "travel"
    shutil.copytree(recorded.agent, edited, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    (edited / "agent.py").write_text((edited / "agent.py").read_text() + _SIGNATURE)
    code, output = _replay(capsys, recorded, edited, "--workers", "1")
    assert code == 1, output
    assert "0 passed, 2 failed" in output, output
    assert "could not run: turn 2, the user simulator's model call:" in output, output
    assert "no recording matches POST /v1beta/models/gemini-2.5-flash:generateContent" in output
    unwrapped = " ".join(output.split())  # the report wraps to the terminal's width
    assert '-> "...I\'m planning a trip. (Have a nice trip!)"' in unwrapped, output
