"""`rec replay --mode auto`: a recording created or filled in, only the changed turns live.

Real ADK agents through the real CLI, the model forwarded to a stand-in Gemini server that
counts what reaches it; each auto run is followed by a plain replay with no key, the
stand-in stopped and nothing beyond loopback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cassettes._cassette import JsonBody, load_cassette
from rec.cli import main
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.adk_recording import record_adk
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.thermostat_team import build, team_brain
from tests.agents.travel_brain import travel_brain
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel
from tests.factories import counting_listener

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "production_bug"
TEAM = ROOT / "tests" / "agents" / "thermostat_team"
TURNS = (
    "What's the temperature in the living room?",
    "Please set the living room to 22 degrees",
    "What's the temperature in the kitchen?",
)


def _rec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _set_calls(cassette: Path) -> list[object]:
    """Every set_thermostat response the cassette's model requests carry."""
    found = []
    for exchange in load_cassette(cassette).exchanges:
        body = exchange.request.body
        if not isinstance(body, JsonBody) or not isinstance(body.value, dict):
            continue
        for content in body.value.get("contents", []):
            for part in content.get("parts", []):
                response = part.get("functionResponse") or {}
                if response.get("name") == "set_thermostat":
                    found.append(response.get("response"))
    return found


def _last_turn(contents: list[dict[str, object]]) -> str:
    """The latest of TURNS a request's contents hold (the turn it was sent in)."""
    text = json.dumps(contents)
    return [turn for turn in TURNS if turn in text][-1]


@pytest.fixture
def production_bug() -> object:
    """examples/record.py (its ``correct_expectation``), importable."""
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import record

        yield record
    finally:
        sys.path.remove(str(ROOT / "examples"))
        sys.modules.pop("record", None)


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param(("--mode", "auto"), id="auto"),
        pytest.param(("--record-missing",), id="record-missing"),
        pytest.param(("--mode", "record"), id="record"),
    ],
)
def test_an_imported_case_gets_its_recording_from_its_first_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    loopback_only: object,
    production_bug: object,
    mode: tuple[str, ...],
) -> None:
    # Workflow 2 as the README writes it: import, correct, one run with a key, then replay.
    from home_assistant.standin_rules import home_brain  # type: ignore[import-not-found]

    out = tmp_path / "bug-evals2"
    session = str(EXAMPLE / "production_session.json")
    code, output = _rec(capsys, "import", session, "--out", str(out), "--name", "thermostat_bug")
    assert code == 0, output
    production_bug.correct_expectation(out / "thermostat_bug.evalset.json")  # type: ignore[attr-defined]
    fixed = str(EXAMPLE / "after_fix" / "climate_agent")
    with StandinGemini(home_brain()) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        code, output = _rec(capsys, "replay", fixed, str(out), *mode, "--upstream", api.url)
        reached = len(api.calls("generateContent"))
    assert code == 0, output
    assert reached == 5  # every request of the case: the import had no recording
    cassette = out / "thermostat_bug.cassette.json"
    assert len(load_cassette(cassette).exchanges) == 5
    assert FAKE_API_KEY not in cassette.read_text()
    if mode != ("--mode", "record"):
        assert "left the recording at turn 1, model request 1" in output, output

    monkeypatch.delenv("GOOGLE_API_KEY")
    code, output = _rec(capsys, "replay", fixed, str(out))
    assert code == 0, output
    assert "1 passed, 0 failed" in output
    # The recording is the fixed agent's: the buggy one still fails against the case.
    code, output = _rec(capsys, "replay", str(EXAMPLE / "before_fix" / "climate_agent"), str(out))
    assert code == 1, output


def test_auto_mode_records_the_tools_own_http_calls(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    loopback_only: object,
) -> None:
    # convert_currency calls its rates API with httpx: with no recording, auto mode runs
    # it and records the call, so --live-tools replays it with no network.
    turn = "Find flights from Paris to Rome on 2025-05-01 and convert 98 EUR to USD"
    evalset = record_travel(tmp_path, [(turn,)], name="trip")
    cassette = tmp_path / "trip.cassette.json"
    cassette.unlink()
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        monkeypatch.setenv("TRAVEL_RATES_URL", f"{api.url}/rates")
        auto = ("--mode", "auto", "--upstream", api.url)
        code, output = _rec(capsys, "replay", str(TRAVEL_AGENT), str(evalset), *auto)
        rates = [r for r in api.requests if r.path.startswith("/rates")]
    assert code == 0, output
    assert len(rates) == 1
    tools = [e for e in load_cassette(cassette).exchanges if e.origin == "tool"]
    assert [e.request.url.split("?")[0].endswith("/rates") for e in tools] == [True]

    # Run again with the real tools: the call the recording holds is answered from it, as
    # is every model request; nothing reaches the stand-in, nothing is added.
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as again:
        monkeypatch.setenv("TRAVEL_RATES_URL", f"{api.url}/rates")  # the URL recorded
        auto = ("--mode", "auto", "--upstream", again.url, "--live-tools")
        code, output = _rec(capsys, "replay", str(TRAVEL_AGENT), str(evalset), *auto)
        assert again.requests == []
    assert code == 0, output
    assert len([e for e in load_cassette(cassette).exchanges if e.origin == "tool"]) == 1

    # The stand-in (the rates API too) is stopped: the tool's call is answered from the cassette.
    monkeypatch.delenv("GOOGLE_API_KEY")
    code, output = _rec(capsys, "replay", str(TRAVEL_AGENT), str(evalset), "--live-tools")
    assert code == 0, output


def _correct(evalset: Path) -> None:
    """The hand correction: turn 2 should set 22 C; the recorded (wrong) response goes."""
    data = json.loads(evalset.read_text())
    for invocation in data["eval_cases"][0]["conversation"]:
        events = invocation["intermediate_data"]["invocation_events"]
        kept = []
        for event in events:
            parts = event.get("content", {}).get("parts", [])
            if any(p.get("function_response", {}).get("name") == "set_thermostat" for p in parts):
                continue
            for part in parts:
                call = part.get("function_call") or {}
                if call.get("name") == "set_thermostat":
                    call["args"]["celsius"] = 22
            kept.append(event)
        invocation["intermediate_data"]["invocation_events"] = kept
    evalset.write_text(json.dumps(data, indent=2))
    (evalset.parent / "test_config.json").write_text(
        json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}})
    )


def _recorded_team(tmp_path: Path, unit: str) -> Path:
    """The home team recorded through the fixed path with the tool taking ``unit``."""
    return record_adk(
        tmp_path, build(unit), [TURNS], responder=team_brain(), app_name="after_fix", capture=True
    )


def _auto(
    capsys: pytest.CaptureFixture[str], evalset: Path, upstream: str, *extra: str
) -> tuple[int, str]:
    """``rec replay after_fix EVALSET --mode auto --upstream URL [EXTRA]``."""
    auto = ("--mode", "auto", "--upstream", upstream, *extra)
    return _rec(capsys, "replay", str(TEAM / "after_fix"), str(evalset), *auto)


def test_only_the_changed_turns_go_live_then_the_case_replays_offline(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    loopback_only: object,
) -> None:
    evalset = _recorded_team(tmp_path, "Fahrenheit")
    cassette = tmp_path / "recording.cassette.json"
    recorded = len(load_cassette(cassette).exchanges)
    assert _set_calls(cassette)[-1] == {"status": "error", "error": "71.6 C is outside 16.0-26.0 C"}
    results = tmp_path / "results"
    # Run before the expectation is corrected: the case still holds the old call and its
    # answer, which the fixed call must not be given.

    with StandinGemini(team_brain()) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        reports = ("--results", str(results), "--html", str(tmp_path / "report.html"))
        code, output = _auto(capsys, evalset, api.url, *reports)
        reached = api.calls("generateContent")
    assert code == 1, output  # the case still expects celsius=71.6
    # Turn 1 and turn 2's transfer came from the recording; the sub-agent's two requests
    # (the fixed instruction) and all of turn 3 went live, though home_agent's turn-3
    # requests equal recorded ones: they were recorded on the old path.
    assert [_last_turn(r.contents) for r in reached] == [
        TURNS[1],
        TURNS[1],
        TURNS[2],
        TURNS[2],
    ]
    where = "left the recording at turn 2, model request 4"
    assert where in output, output
    [written] = results.glob("*.json")
    [case] = json.loads(written.read_text())["eval_case_results"]
    assert case["left_recording"].startswith(where)
    assert "systemInstruction" in case["left_recording"]
    assert where in (tmp_path / "report.html").read_text()
    # The fixed call ran the real tool: the old path's answer was not given to it.
    assert _set_calls(cassette)[-1] == {"status": "ok", "room": "living_room", "target_c": 22.0}
    assert len(load_cassette(cassette).exchanges) == recorded + len(reached)

    _correct(evalset)
    monkeypatch.delenv("GOOGLE_API_KEY")
    with counting_listener(api.url) as connections:
        code, output = _rec(capsys, "replay", str(TEAM / "after_fix"), str(evalset))
        assert connections() == 0
    assert code == 0, output
    assert "1 passed, 0 failed" in output and "left the recording" not in output
    code, output = _rec(capsys, "replay", str(TEAM / "before_fix"), str(evalset))
    assert code == 1, output  # the bug, still recorded, still fails the case


def test_a_case_on_its_recording_reaches_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    evalset = _recorded_team(tmp_path, "Celsius")
    _correct(evalset)
    with StandinGemini(team_brain()) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        code, output = _auto(capsys, evalset, api.url)
        assert api.calls("generateContent") == []
    assert code == 0, output
    assert "left the recording" not in output


def test_agent_evaluator_in_auto_mode_creates_the_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback_only: object
) -> None:
    # The same road from ADK's AgentEvaluator (REC_MODE=auto, the model at the base URL).
    import asyncio

    from replayer._agent_evaluator import AgentEvaluator

    evalset = record_travel(tmp_path, [("What's the weather in Tokyo?",)], name="tokyo")
    cassette = tmp_path / "tokyo.cassette.json"
    cassette.unlink()
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", api.url)
        monkeypatch.setenv("REC_MODE", "auto")
        asyncio.run(
            AgentEvaluator.evaluate(
                str(TRAVEL_AGENT), str(evalset), num_runs=1, print_detailed_results=False
            )
        )
        assert len(api.calls("generateContent")) == 2
    assert len(load_cassette(cassette).exchanges) == 2

    for name in ("GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "REC_MODE"):
        monkeypatch.delenv(name)
    asyncio.run(
        AgentEvaluator.evaluate(
            str(TRAVEL_AGENT), str(evalset), num_runs=1, print_detailed_results=False
        )
    )
