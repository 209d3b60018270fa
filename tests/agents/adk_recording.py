"""Record any ADK agent against a fresh stand-in, through rec's in-process recorder."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import rec
from rec.standin.replies import FAKE_API_KEY, Responder
from rec.standin.server import StandinGemini

__all__ = ["CAPITAL_AGENT", "USAGE", "drive_adk", "record_adk"]

CAPITAL_AGENT = Path(__file__).resolve().parent / "capital"
"""One LlmAgent with no tools: one model call per turn."""

USAGE = {
    "promptTokenCount": 100,
    "candidatesTokenCount": 7,
    "thoughtsTokenCount": 3,
    "cachedContentTokenCount": 40,
    "totalTokenCount": 110,
}
"""The usage a stand-in reply reports (thoughts and cached tokens included)."""


async def drive_adk(
    agent: Any,
    app_name: str,
    conversations: Sequence[Sequence[str]],
    run_config: Any,
    capture: Path | None,
) -> None:
    """Run each conversation as one session of a Runner over ``agent`` (with rec's ADK
    capture plugin writing to ``capture`` when given)."""
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from recorder._adk_plugin import RecCapturePlugin

    sessions = InMemorySessionService()
    plugins = [RecCapturePlugin(path=capture)] if capture is not None else []
    app = App.model_construct(name=app_name, root_agent=agent, plugins=plugins)
    runner = Runner(app=app, session_service=sessions)
    try:
        for number, turns in enumerate(conversations):
            config = run_config[number] if isinstance(run_config, (list, tuple)) else run_config
            session = await sessions.create_session(app_name=app_name, user_id="user")
            for text in turns:
                message = types.Content(role="user", parts=[types.Part(text=text)])
                async for _ in runner.run_async(
                    user_id="user", session_id=session.id, new_message=message, run_config=config
                ):
                    pass
    finally:
        # Closing the runner closes the capture plugin, which stops capturing the tools'
        # HTTP traffic in this process (left open, it captured every later test's calls).
        await runner.close()


def record_adk(
    folder: Path,
    agent: Any,
    conversations: Sequence[Sequence[str]],
    *,
    responder: Responder,
    app_name: str,
    name: str = "recording",
    run_config: Any = None,
    clock: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
    capture: bool = False,
) -> Path:
    """Run ``agent`` (an ADK root agent) through the recording proxy; return the EvalSet path.

    The stand-in answers with ``responder`` and is stopped afterwards; each conversation is
    one session, its texts the user turns; ``run_config`` (or a list, one per conversation)
    is passed to ``Runner.run_async``; the agent runs inside ``clock()`` (e.g. a
    ``time_machine.travel``). With ``capture`` rec's ADK capture plugin rides along, so the
    EvalSet is ADK's exact sessions.
    """
    from cassettes._evalset_writer import adk_capture_path

    with StandinGemini(responder) as api, pytest.MonkeyPatch.context() as env:
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        with rec.record(folder, name=name, upstream=api.url, app_name=app_name):
            with clock():
                path = adk_capture_path(folder, name) if capture else None
                asyncio.run(drive_adk(agent, app_name, conversations, run_config, path))
    return folder / f"{name}.evalset.json"
