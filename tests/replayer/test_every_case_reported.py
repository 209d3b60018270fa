"""Every eval case in the files is in the report: a case rec cannot run fails, it is never dropped.

The eval set mixes a recorded conversation (the travel agent, recorded against the
stand-in) with a ``conversation_scenario`` case (ADK's user simulator) that was never
recorded, so it fails with a replay miss. Each way of running it (``rec replay`` with its
reports, ``--workers 2``, ``replay_evalsets``, ``AgentEvaluator``) reports both.
"""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rec.cli import main
from replayer._agent_evaluator import AgentEvaluator
from replayer._replay_run import replay_evalsets
from replayer._replay_target import ReplayOptions
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel

SCENARIO = {
    "starting_prompt": "Hi! I'm planning a trip.",
    "conversation_plan": "Ask for the weather in Tokyo, then say thanks and stop.",
}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mixed.evalset.json: one recorded conversation, then one scenario case."""
    folder = tmp_path_factory.mktemp("mixed")
    path = record_travel(folder, [("What's the weather in Tokyo?",)], name="mixed")
    document = json.loads(path.read_text())
    session = document["eval_cases"][0]["session_input"]
    document["eval_cases"].append(
        {"eval_id": "simulated_trip", "conversation_scenario": SCENARIO, "session_input": session}
    )
    path.write_text(json.dumps(document, indent=2))
    return path


def _case_ids(path: Path) -> list[str]:
    return [case["eval_id"] for case in json.loads(path.read_text())["eval_cases"]]


@pytest.fixture
def offline(loopback_only: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("TRAVEL_RATES_URL", raising=False)


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.usefixtures("offline")
def test_rec_replay_reports_every_case_in_every_report(
    mixed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    junit, results, html = tmp_path / "junit.xml", tmp_path / "results", tmp_path / "r.html"
    code = main(
        [
            "replay",
            str(TRAVEL_AGENT),
            str(mixed),
            "--workers",
            workers,
            "--junit",
            str(junit),
            "--results",
            str(results),
            "--html",
            str(html),
        ]
    )
    output = capsys.readouterr().out
    ids = _case_ids(mixed)
    assert code == 1, output
    assert f"1 passed, 1 failed, {len(ids)} cases" in output, output
    assert "FAILED  simulated_trip could not run: turn 1, model call 1" in output, output

    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert sorted(c.get("name") or "" for c in cases) == sorted(ids)
    [failed] = [c for c in cases if c.find("failure") is not None]
    assert failed.get("name") == "simulated_trip"

    [result_file] = results.glob("*.evalset_result.json")
    written = json.loads(result_file.read_text())["eval_case_results"]
    assert [c["eval_id"] for c in written] == ids
    [reasons] = [c["failure_reasons"] for c in written if c["eval_id"] == "simulated_trip"]
    assert reasons and "no recording matches" in reasons[0]
    assert "simulated_trip" in html.read_text()


@pytest.mark.usefixtures("offline")
def test_replay_evalsets_returns_every_case(mixed: Path) -> None:
    [replayed] = replay_evalsets(str(TRAVEL_AGENT), [mixed], ReplayOptions(workers=1))
    results = replayed.result.eval_case_results
    assert [r.eval_id for r in results] == _case_ids(mixed)
    assert not replayed.result.passed
    assert [f.eval_id for f in replayed.failures] == ["simulated_trip"]


@pytest.mark.usefixtures("offline")
def test_agent_evaluator_fails_on_the_case_it_cannot_run(mixed: Path) -> None:
    with pytest.raises(AssertionError, match="simulated_trip"):
        asyncio.run(
            AgentEvaluator.evaluate(str(TRAVEL_AGENT), str(mixed), print_detailed_results=False)
        )
