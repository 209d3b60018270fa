"""``rec import``: ADK sessions (JSON and ADK's own session database), legacy files, recordings.

Sessions are produced by running the real travel agent with ADK's Runner against the
stand-in model; the expected conversion is ADK's own (``convert_events_to_eval_invocations``,
``convert_eval_set_to_pydantic_schema``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cassettes._cassette_writer import save_cassette
from cassettes._errors import InputError
from cassettes._evalset import load_evalset
from cassettes._extraction import evalset_from_exchanges
from recorder._importers import import_source
from recorder._importers.recording import write_recording_evalset
from tests.agents.travel_brain import CONVERSATION
from tests.factories import FAKE_API_KEY, gemini_response, make_cassette, make_exchange

STATE = {"user_name": "Ada", "home_city": "Paris"}


async def _run(service: Any, turns: tuple[str, ...], *, user_id: str = "user") -> Any:
    from google.adk.runners import Runner

    from tests.agents.travel.agent import root_agent

    runner = Runner(agent=root_agent, app_name="travel", session_service=service)
    session = await service.create_session(app_name="travel", user_id=user_id, state=dict(STATE))
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(
            user_id=user_id, session_id=session.id, new_message=message
        ):
            pass
    return await service.get_session(app_name="travel", user_id=user_id, session_id=session.id)


def _adk_invocations(session: Any) -> list[dict[str, Any]]:
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    invocations = EvaluationGenerator.convert_events_to_eval_invocations(session.events)
    return [i.model_dump(mode="json", exclude_none=True) for i in invocations]


def _written(path: Path) -> Any:
    """The written EvalSet, loaded by ADK itself."""
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    return AdkEvalSet.model_validate_json(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def travel_session(standin):
    """A finished ADK session of the travel conversation (in-memory service)."""
    from google.adk.sessions import InMemorySessionService

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        patch.setenv("GOOGLE_GEMINI_BASE_URL", standin.url)
        patch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
        return asyncio.run(_run(InMemorySessionService(), CONVERSATION))


@pytest.mark.parametrize(
    "by_alias", [pytest.param(True, id="camelCase"), pytest.param(False, id="snake_case")]
)
def test_adk_session_json_converts_like_adk(travel_session, tmp_path, by_alias):
    source = tmp_path / "bug.json"
    source.write_text(travel_session.model_dump_json(by_alias=by_alias), encoding="utf-8")
    result = import_source(source, out_dir=tmp_path / "out")
    assert [p.name for p in result.paths] == ["bug.evalset.json", "test_config.json"]
    [case] = _written(result.paths[0]).eval_cases
    assert [i.model_dump(mode="json", exclude_none=True) for i in case.conversation] == (
        _adk_invocations(travel_session)
    )
    assert case.session_input.app_name == "travel"
    assert case.session_input.state == STATE  # the state before any event changed it
    assert case.final_session_state["last_booking"] == "HTL-ROM-3-1"
    hints = [str(h) for h in result.hints]
    assert any(".final_response: expected reply:" in h for h in hints)
    assert any("tool call book_hotel(" in h and "by booking_agent" in h for h in hints)


def test_adk_database_by_id_and_latest(standin, tmp_path, monkeypatch):
    from google.adk.sessions.database_session_service import DatabaseSessionService

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", standin.url)
    monkeypatch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
    database = tmp_path / "sessions.db"

    async def two_sessions() -> list[Any]:
        service = DatabaseSessionService(f"sqlite+aiosqlite:///{database}")
        try:
            first = await _run(service, CONVERSATION[:1], user_id="ada")
            second = await _run(service, CONVERSATION[2:3], user_id="bob")
        finally:
            await service.close()
        return [first, second]

    first, second = asyncio.run(two_sessions())
    by_id = import_source(str(database), session_id=first.id, out_dir=tmp_path / "a", name="one")
    [case] = _written(by_id.paths[0]).eval_cases
    dumped = [i.model_dump(mode="json", exclude_none=True) for i in case.conversation]
    assert dumped == _adk_invocations(first)
    assert case.session_input.user_id == "ada"

    latest = import_source(
        f"sqlite+aiosqlite:///{database}", latest=2, out_dir=tmp_path / "b", name="two"
    )
    cases = _written(latest.paths[0]).eval_cases
    assert [c.session_input.user_id for c in cases] == ["ada", "bob"]
    assert [i.model_dump(mode="json", exclude_none=True) for i in cases[1].conversation] == (
        _adk_invocations(second)
    )
    with pytest.raises(InputError, match="no session 'nope'"):
        import_source(str(database), session_id="nope", out_dir=tmp_path / "c")


FLAT = [
    {
        "query": "What's the weather in Rome?",
        "expected_tool_use": [{"tool_name": "get_weather", "tool_input": {"city": "Rome"}}],
        "reference": "It is cloudy in Rome.",
    },
    {
        "query": "Thanks!",
        "expected_tool_use": [],
        "expected_intermediate_agent_responses": [{"author": "travel_agent", "text": "ok"}],
        "reference": "You're welcome.",
    },
]
CASES = [
    {
        "name": "weather_case",
        "data": FLAT,
        "initial_session": {"state": STATE, "app_name": "travel", "user_id": "u"},
    },
    {"name": "no_session", "data": FLAT[:1]},
]


def _essentials(case: Any) -> list[tuple[Any, ...]]:
    return [
        (
            i.user_content.model_dump(exclude_none=True),
            i.final_response.model_dump(exclude_none=True),
            [(c.name, c.args) for c in i.intermediate_data.tool_uses],
            i.intermediate_data.intermediate_responses,
        )
        for i in case.conversation
    ]


@pytest.mark.parametrize(
    ("document", "as_cases"),
    [
        pytest.param(FLAT, [{"name": "x", "data": FLAT}], id="flat-turns"),
        pytest.param(CASES, CASES, id="list-of-cases"),
    ],
)
def test_legacy_files_migrate_like_adk(tmp_path, document, as_cases):
    from google.adk.evaluation.local_eval_sets_manager import convert_eval_set_to_pydantic_schema

    source = tmp_path / "weather.test.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    result = import_source(source, out_dir=tmp_path / "out")
    ours = _written(result.paths[0])
    theirs = convert_eval_set_to_pydantic_schema("x", as_cases)
    assert [_essentials(c) for c in ours.eval_cases] == [_essentials(c) for c in theirs.eval_cases]
    assert [c.session_input for c in ours.eval_cases] == [
        c.session_input for c in theirs.eval_cases
    ]
    assert any("tool_uses[0]: tool call get_weather" in str(h) for h in result.hints)


def test_legacy_call_without_args_omits_args(tmp_path):
    source = tmp_path / "t.test.json"
    turn = {
        "query": "time?",
        "expected_tool_use": [{"tool_name": "now", "tool_input": {}}],
        "reference": "",
    }
    source.write_text(json.dumps([turn]), encoding="utf-8")
    written = import_source(source, out_dir=tmp_path).paths[0]
    invocation = json.loads(written.read_text())["eval_cases"][0]["conversation"][0]
    assert invocation["intermediate_data"]["tool_uses"] == [{"name": "now"}]


@pytest.mark.parametrize(
    ("file_name", "written", "eval_set_id"),
    [
        pytest.param("prod.bug.test.json", "prod.bug.evalset.json", "prod_bug", id="legacy"),
        pytest.param("v1.2.json", "v1.2.evalset.json", "v1_2", id="plain-json"),
    ],
)
def test_a_dotted_source_name_is_kept_whole(tmp_path, file_name, written, eval_set_id):
    source = tmp_path / file_name
    source.write_text(json.dumps(FLAT), encoding="utf-8")
    result = import_source(source, out_dir=tmp_path / "out")
    assert result.paths[0] == tmp_path / "out" / written
    assert load_evalset(result.paths[0]).eval_set_id == eval_set_id


@pytest.mark.parametrize(
    ("document", "where", "message"),
    [
        pytest.param(
            [{"reference": "x"}], "[0].query", 'missing required key "query"', id="no-query"
        ),
        pytest.param(
            [{"query": "q", "expected_tool_use": [{"tool_name": "t", "tool_inputs": {}}]}],
            "[0].expected_tool_use[0].tool_inputs",
            'Did you mean "tool_input"',
            id="misspelled-tool-input",
        ),
        pytest.param(
            [{"name": "c", "data": "oops"}], "[0].data", "must be a list", id="data-not-list"
        ),
    ],
)
def test_broken_legacy_files_report_the_real_error(tmp_path, document, where, message):
    source = tmp_path / "bad.test.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_source(source, out_dir=tmp_path)
    assert caught.value.where == where
    assert message in str(caught.value)
    assert not (tmp_path / "bad.evalset.json").exists()


def test_recording_is_re_extracted(tmp_path):
    exchanges = [make_exchange(0, response_body=gemini_response("Hello!"))]
    save_cassette(make_cassette(exchanges, name="demo"), tmp_path / "demo.cassette.json")
    result = import_source(tmp_path, out_dir=tmp_path)
    assert result.paths[0] == tmp_path / "demo.evalset.json"
    expected = evalset_from_exchanges(exchanges, eval_set_id="demo")
    assert load_evalset(result.paths[0]).eval_cases == expected.eval_cases


def test_credentials_in_session_data_are_redacted(travel_session, tmp_path):
    document = json.loads(travel_session.model_dump_json(by_alias=True))
    document["events"][0]["content"]["parts"][0]["text"] = f"my key is {FAKE_API_KEY}"
    document["state"]["token"] = "Bearer abcdefghijklmnopqrstuvwxyz0123"
    source = tmp_path / "leak.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    result = import_source(source, out_dir=tmp_path / "out")
    text = result.paths[0].read_text(encoding="utf-8")
    assert FAKE_API_KEY not in text and "abcdefghijklmnopqrstuvwxyz0123" not in text
    assert "AIza…(redacted)" in text
    assert result.redacted == 3  # the key once; the token in the start and the end state


def test_existing_test_config_is_kept(travel_session, tmp_path):
    (tmp_path / "test_config.json").write_text('{"criteria": {"response_match_score": 0.5}}')
    source = tmp_path / "s.json"
    source.write_text(travel_session.model_dump_json(by_alias=True), encoding="utf-8")
    result = import_source(source, out_dir=tmp_path)
    assert result.paths == [tmp_path / "s.evalset.json"]
    assert json.loads((tmp_path / "test_config.json").read_text()) == {
        "criteria": {"response_match_score": 0.5}
    }


def test_recording_without_model_traffic_writes_nothing(tmp_path):
    cassette = make_cassette([make_exchange(0, rpc="countTokens")], name="empty")
    assert write_recording_evalset(cassette, tmp_path, name="empty") is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "code", "output"),
    [
        pytest.param(["{session}", "--out", "{out}"], 0, "Check the expectations by hand", id="ok"),
        pytest.param(
            ["{session}", "--session", "a", "--latest", "1"], 2, "exclude each other", id="both"
        ),
        pytest.param(["{out}/missing.json"], 2, "source not found", id="missing"),
        # the fix names every kind of source import reads, traces and BigQuery rows too
        pytest.param(["{out}/missing.json"], 2, "a trace (OTLP JSON", id="missing-names-traces"),
        pytest.param(["{out}/missing.json"], 2, "BigQuery Agent Analytics rows", id="missing-bq"),
    ],
)
def test_import_command(travel_session, tmp_path, capsys, args, code, output):
    from rec.cli import main

    session = tmp_path / "s.json"
    session.write_text(travel_session.model_dump_json(by_alias=True), encoding="utf-8")
    argv = ["import", *[a.format(session=session, out=tmp_path / "out") for a in args]]
    assert main(argv) == code
    captured = capsys.readouterr()
    assert output in captured.out + captured.err


def test_flat_legacy_file_takes_initial_session_beside_it(tmp_path):
    initial = {"state": STATE, "app_name": "travel", "user_id": "ada"}
    (tmp_path / "initial.session.json").write_text(json.dumps(initial))
    source = tmp_path / "trip.test.json"
    source.write_text(json.dumps(FLAT))
    [case] = load_evalset(import_source(source, out_dir=tmp_path / "out").paths[0]).eval_cases
    assert case.eval_id == "trip_test"
    assert case.session_input.model_dump(exclude_none=True) == {
        "app_name": "travel",
        "user_id": "ada",
        "state": STATE,
    }


def test_database_import_skips_empty_sessions_and_is_named_after_the_database(
    standin, tmp_path, monkeypatch, capsys
):
    from google.adk.sessions.database_session_service import DatabaseSessionService

    from rec.cli import main

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", standin.url)
    monkeypatch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
    database = tmp_path / "support_sessions.db"

    async def sessions() -> None:
        service = DatabaseSessionService(f"sqlite+aiosqlite:///{database}")
        try:
            await _run(service, CONVERSATION[:1], user_id="ada")
            await service.create_session(app_name="travel", user_id="bob")  # opened, never used
        finally:
            await service.close()

    asyncio.run(sessions())
    assert main(["import", str(database), "--latest", "5", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "skipped 1 session(s) with no turns" in err
    written = tmp_path / "out" / "support_sessions.evalset.json"
    assert [c.session_input.user_id for c in _written(written).eval_cases] == ["ada"]
    assert load_evalset(written).eval_cases  # and it is runnable

    empty = tmp_path / "empty.db"

    async def unused() -> None:
        service = DatabaseSessionService(f"sqlite+aiosqlite:///{empty}")
        try:
            await service.create_session(app_name="travel", user_id="bob")
        finally:
            await service.close()

    asyncio.run(unused())
    with pytest.raises(InputError, match="holds a turn"):
        import_source(str(empty), latest=5, out_dir=tmp_path / "none")
    assert not (tmp_path / "none").exists()


LEGACY_WITH_STATE = [
    {
        "name": "thermostat",
        "data": FLAT[:1],
        "initial_state": {"unit": "celsius", "home": "Rome"},
    },
    {
        "name": "both",
        "data": FLAT[:1],
        "initial_session": {"state": {"home": "Rome"}, "app_name": "travel", "user_id": "u"},
        "initial_state": {"unit": "fahrenheit"},
    },
]


def test_legacy_initial_state_is_migrated_and_said(tmp_path, capsys):
    """adk-samples carry initial_state on a legacy case; ADK ignores it, rec moves it."""
    from google.adk.evaluation.local_eval_sets_manager import convert_eval_set_to_pydantic_schema

    from rec.cli import main

    source = tmp_path / "samples.test.json"
    source.write_text(json.dumps(LEGACY_WITH_STATE), encoding="utf-8")
    assert main(["import", str(source), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    [note] = [line for line in err.splitlines() if line.startswith("rec: note:")]
    assert "moved initial_state" in note and "2 case(s) ([0], [1])" in note
    assert "ADK ignores initial_state" in note
    ours = load_evalset(tmp_path / "out" / "samples.evalset.json")
    assert [c.session_input.state for c in ours.eval_cases] == [
        {"unit": "celsius", "home": "Rome"},
        {"unit": "fahrenheit", "home": "Rome"},
    ]
    assert ours.eval_cases[1].session_input.app_name == "travel"
    adk = convert_eval_set_to_pydantic_schema("x", LEGACY_WITH_STATE)
    assert adk.eval_cases[0].session_input is None  # what ADK would have run: no state


def test_legacy_initial_state_that_contradicts_the_session_is_refused(tmp_path):
    case = {
        "name": "c",
        "data": FLAT[:1],
        "initial_session": {"state": {"unit": "celsius"}},
        "initial_state": {"unit": "kelvin"},
    }
    source = tmp_path / "clash.test.json"
    source.write_text(json.dumps([case]), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_source(source, out_dir=tmp_path / "out")
    assert caught.value.where == "[0].initial_state" and "unit" in caught.value.problem
    assert not (tmp_path / "out").exists()


def _set(*path: Any, value: Any) -> Any:
    def change(document: Any) -> None:
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        pytest.param(
            _set("events", 0, "timestamp", value="noon"),
            "events[0].timestamp",
            "must be a number",
            id="timestamp-text",
        ),
        pytest.param(_set("state", value=[]), "state", "must be an object", id="state-list"),
        pytest.param(
            _set("events", 1, "content", "parts", 0, "txt", value="x"),
            "events[1].content.parts[0].txt",
            'Did you mean "text"',
            id="part-typo",
        ),
        pytest.param(
            _set("events", 1, "actions", "stateDelta", value=[1]),
            "events[1].actions.stateDelta",
            "must be an object",
            id="state-delta-list",
        ),
    ],
)
def test_a_malformed_session_file_is_one_input_error(tmp_path, change, where, message):
    from tests.factories import adk_session_document

    document = adk_session_document()
    change(document)
    source = tmp_path / "s.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_source(source, out_dir=tmp_path / "out")
    assert caught.value.where == where and message in str(caught.value)
    assert not (tmp_path / "out").exists()
