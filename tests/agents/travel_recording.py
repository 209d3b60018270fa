"""Record the travel agent against a fresh stand-in: the recording many tests replay."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

import rec
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.travel_brain import CONVERSATION, travel_brain

__all__ = ["CONVERSATIONS", "STATE", "TRAVEL_AGENT", "record_travel"]

TRAVEL_AGENT = Path(__file__).resolve().parent / "travel"
STATE = {"user_name": "Ada", "home_city": "Paris"}

CONVERSATIONS: tuple[tuple[str, ...], ...] = (
    CONVERSATION,
    ("What's the weather in Tokyo?",),
)


async def _drive(conversations: Sequence[Sequence[str]], state: dict[str, object]) -> None:
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from tests.agents.travel import agent

    sessions = InMemorySessionService()
    runner = Runner(app_name="travel", agent=agent.root_agent, session_service=sessions)
    for turns in conversations:
        session = await sessions.create_session(app_name="travel", user_id="user", state=state)
        for text in turns:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(
                user_id="user", session_id=session.id, new_message=message
            ):
                pass


def record_travel(
    folder: Path,
    conversations: Sequence[Sequence[str]],
    *,
    name: str = "travel",
    state: dict[str, object] = STATE,
) -> Path:
    """Record the travel agent against a fresh stand-in (stopped afterwards); return the EvalSet.

    The recording proxy writes ``<name>.cassette.json`` and ``<name>.evalset.json``; the
    initial session state (which traffic cannot show) is then written into each case's
    ``session_input``, as a user (or rec's ADK capture plugin) would.
    """
    with (
        StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api,
        pytest.MonkeyPatch.context() as env,
    ):
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        env.setenv("TRAVEL_RATES_URL", f"{api.url}/rates")
        with rec.record(folder, name=name, upstream=api.url, app_name="travel"):
            asyncio.run(_drive(conversations, state))
    path = folder / f"{name}.evalset.json"
    data = json.loads(path.read_text())
    for case in data["eval_cases"]:
        case["session_input"]["state"] = dict(state)
    path.write_text(json.dumps(data, indent=2))
    return path
