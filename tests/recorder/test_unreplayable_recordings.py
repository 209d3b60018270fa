"""Recordings that cannot replay are said so when written (issue 20 item 6).

The real single travel agent runs under ADK's Runner with rec's capture plugin, recorded
through the real proxy against the stand-in model: a turn the client aborts, and a saved
session resumed under a new recording, each get a warning naming the cause and the fix,
and the EvalSet holds only what the recording can answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from google.genai import types

from cassettes._evalset import load_evalset
from recorder._api import record
from tests.agents.solo_travel import STATE, single_agent
from tests.agents.travel_brain import CONVERSATION
from tests.factories import FAKE_API_KEY


def _message(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def _turns(runner: Any, session_id: str, turns: tuple[str, ...], *, abort_last: bool) -> None:
    """Run the turns; with ``abort_last`` the client aborts the last one after its first
    event, as ``adk web``'s stop button does (ADK seals it: "Invocation was aborted by
    client.")."""
    for index, text in enumerate(turns):
        abort = asyncio.Event()
        events = runner.run_async(
            user_id="ada", session_id=session_id, new_message=_message(text), abort_signal=abort
        )
        async with contextlib.aclosing(events) as stream:
            async for _ in stream:
                if abort_last and index == len(turns) - 1:
                    abort.set()


def _record_with_last_turn_aborted(standin, tmp_path, monkeypatch, caplog, *, turns: int) -> None:
    """Record the travel agent for the first ``turns`` turns of one session, the client
    aborting the last one; warnings are captured in ``caplog``."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from cassettes._evalset_writer import adk_capture_path
    from recorder._adk_plugin import RecCapturePlugin

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    monkeypatch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")

    async def run() -> None:
        plugin = RecCapturePlugin(path=adk_capture_path(tmp_path, "trip"))
        service = InMemorySessionService()
        runner = Runner(
            app_name="travel", agent=single_agent(), session_service=service, plugins=[plugin]
        )
        session = await service.create_session(app_name="travel", user_id="ada", state=STATE)
        await _turns(runner, session.id, CONVERSATION[:turns], abort_last=True)
        await runner.close()

    with (
        caplog.at_level(logging.WARNING),
        record(tmp_path, name="trip", upstream=standin.url, app_name="travel"),
    ):
        asyncio.run(run())


def test_item6_a_client_aborted_turn_is_warned_and_left_out(standin, tmp_path, monkeypatch, caplog):
    _record_with_last_turn_aborted(standin, tmp_path, monkeypatch, caplog, turns=2)
    [case] = load_evalset(tmp_path / "trip.evalset.json").eval_cases
    assert [inv.user_content.parts[0].text for inv in case.conversation] == [CONVERSATION[0]]
    warned = caplog.text
    assert "turn 2 the client aborted it ('Invocation was aborted by client.')" in warned
    assert "its eval case ends before that turn" in warned


def test_item6_a_resumed_saved_session_is_warned_and_not_written(
    standin, tmp_path, monkeypatch, caplog
):
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from cassettes._evalset_writer import adk_capture_path
    from recorder._adk_plugin import RecCapturePlugin

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    monkeypatch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
    service = InMemorySessionService()  # the saved sessions outlive one recording

    async def earlier() -> str:
        # The first turn runs before the recording, straight against the model.
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", standin.url)
        runner = Runner(app_name="travel", agent=single_agent(), session_service=service)
        saved = await service.create_session(app_name="travel", user_id="ada", state=STATE)
        await _turns(runner, saved.id, CONVERSATION[:1], abort_last=False)
        await runner.close()
        monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL")
        return saved.id

    async def resumed(saved: str) -> None:
        plugin = RecCapturePlugin(path=adk_capture_path(tmp_path, "trip"))
        runner = Runner(
            app_name="travel", agent=single_agent(), session_service=service, plugins=[plugin]
        )
        await _turns(runner, saved, CONVERSATION[1:2], abort_last=False)
        fresh = await service.create_session(app_name="travel", user_id="ada", state=STATE)
        await _turns(runner, fresh.id, CONVERSATION[:1], abort_last=False)
        await runner.close()

    saved = asyncio.run(earlier())
    with (
        caplog.at_level(logging.WARNING),
        record(tmp_path, name="trip", upstream=standin.url, app_name="travel"),
    ):
        asyncio.run(resumed(saved))
    [case] = load_evalset(tmp_path / "trip.evalset.json").eval_cases
    assert len(case.conversation) == 1  # the fresh session; the resumed one is left out
    assert (
        f"session {saved} is not written: its first 1 turn(s) ran before this recording started"
        in caplog.text
    )
    assert "start a new session after `rec start`" in caplog.text


def test_item6_a_session_whose_only_turn_was_aborted_is_not_written(
    standin, tmp_path, monkeypatch, caplog
):
    _record_with_last_turn_aborted(standin, tmp_path, monkeypatch, caplog, turns=1)
    assert "turn 1 the client aborted it" in caplog.text
    assert "the session is not written" in caplog.text
    assert not (tmp_path / "trip.evalset.json").exists()
