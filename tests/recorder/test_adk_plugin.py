"""rec's ADK capture plugin: the EvalSet from captured sessions equals the traffic-derived one.

The real travel agent (and a single-agent variant) runs under ADK's Runner with the plugin
attached, recorded through the real proxy against the stand-in model.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.genai import types

from cassettes._cassette import load_cassette
from cassettes._evalset import load_evalset
from cassettes._extraction import extract_conversations
from recorder._api import record
from tests.agents.solo_travel import STATE, single_agent
from tests.agents.travel_brain import CONVERSATION
from tests.factories import FAKE_API_KEY


def _multi_agent() -> Any:
    from tests.agents.travel.agent import root_agent

    return root_agent


async def _run(agent: Any, plugin: Any, turns: tuple[str, ...]) -> None:
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    service = InMemorySessionService()
    runner = Runner(app_name="travel", agent=agent, session_service=service, plugins=[plugin])
    session = await service.create_session(app_name="travel", user_id="ada", state=dict(STATE))
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="ada", session_id=session.id, new_message=message):
            pass
    await runner.close()


def _comparable(invocation: Any) -> list[Any]:
    events = invocation.intermediate_data.invocation_events
    return [
        "".join(p.text or "" for p in invocation.user_content.parts),
        "".join(p.text or "" for p in invocation.final_response.parts),
        [
            (
                e.author,
                [
                    (p.function_call.name, p.function_call.args)
                    if p.function_call
                    else (p.function_response.name, p.function_response.response)
                    if p.function_response
                    else p.text
                    for p in (e.content.parts if e.content else [])
                ],
                e.model_version,
            )
            for e in events
        ],
    ]


@pytest.mark.parametrize(
    ("make_agent", "turns"),
    [
        pytest.param(single_agent, CONVERSATION[:2], id="single-agent"),
        pytest.param(_multi_agent, CONVERSATION, id="with-sub-agent"),
    ],
)
def test_plugin_path_equals_traffic_path_and_adds_state(
    standin, tmp_path, monkeypatch, make_agent, turns
):
    from cassettes._evalset_writer import adk_capture_path
    from recorder._adk_plugin import RecCapturePlugin

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    monkeypatch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
    plugin = RecCapturePlugin(path=adk_capture_path(tmp_path, "trip"))
    with record(tmp_path, name="trip", upstream=standin.url, app_name="travel"):
        asyncio.run(_run(make_agent(), plugin, turns))
    [case] = load_evalset(tmp_path / "trip.evalset.json").eval_cases
    assert case.session_input.app_name == "travel" and case.session_input.user_id == "ada"
    assert case.session_input.state == STATE
    # The capture holds the sessions (prompts, answers, state): private like the recording.
    assert adk_capture_path(tmp_path, "trip").stat().st_mode & 0o777 == 0o600
    traffic = extract_conversations(load_cassette(tmp_path / "trip.cassette.json").exchanges)
    [conversation] = traffic
    assert [_comparable(i) for i in case.conversation] == [
        _comparable(i) for i in conversation.invocations
    ]
    if make_agent is _multi_agent:
        assert case.final_session_state["last_booking"] == "HTL-ROM-3-1"


def test_plugin_without_a_capture_file_does_nothing(standin, tmp_path, monkeypatch):
    from recorder._adk_plugin import RecCapturePlugin

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", standin.url)
    monkeypatch.chdir(tmp_path)
    asyncio.run(_run(single_agent(), RecCapturePlugin(), ("hi there",)))
    assert list(tmp_path.iterdir()) == []
