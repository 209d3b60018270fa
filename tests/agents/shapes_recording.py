"""Drive and record the shape agents (``tests/agents/shapes``) against the stand-in.

:func:`drive` runs one agent's conversations with ADK's Runner (optionally with rec's
capture plugin attached); :func:`record_shape` records that through the real proxy in
process. ``python -m tests.agents.shapes_recording NAME [--plugin PATH]`` drives one agent
from a child process (for ``rec start -- python ...``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import rec
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.shapes_brain import CONVERSATIONS, SLOW_AGENTS, shapes_brain

__all__ = ["SHAPES", "drive", "record_shape", "shape_folder"]

SHAPES = Path(__file__).resolve().parent / "shapes"
USER = "ada"


def shape_folder(name: str) -> Path:
    """The agent folder of one shape (what ``adk eval`` and ``rec replay`` load)."""
    return SHAPES / name


def _root_agent(name: str) -> Any:
    return importlib.import_module(f"tests.agents.shapes.{name}.agent").root_agent


async def _turn(runner: Any, session_id: str, message: Any) -> list[Any]:
    events = []
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        events.append(event)
    return events


def _approval(events: list[Any]) -> Any:
    """The user's answer to the pending long-running call in ``events``."""
    from google.genai import types

    for event in events:
        for call in event.get_function_calls():
            if call.id in (event.long_running_tool_ids or set()):
                response = types.FunctionResponse(
                    id=call.id, name=call.name, response={"approved": True, "ticket": "T-1"}
                )
                return types.Content(role="user", parts=[types.Part(function_response=response)])
    raise AssertionError("no long-running call to approve")


async def drive(name: str, *, plugin_path: Path | None = None, sessions: int = 1) -> list[Any]:
    """Run ``name``'s conversation ``sessions`` times, each in its own session; return the
    sessions as ADK holds them afterwards."""
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    plugins: list[Any] = []
    if plugin_path is not None:
        from recorder._adk_plugin import RecCapturePlugin

        plugins.append(RecCapturePlugin(path=plugin_path))
    service = InMemorySessionService()
    app = App(name=name, root_agent=_root_agent(name), plugins=plugins)
    runner = Runner(app=app, session_service=service)
    done = []
    for _ in range(sessions):
        session = await service.create_session(app_name=name, user_id=USER)
        for text in CONVERSATIONS[name]:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            events = await _turn(runner, session.id, message)
            if name == "approvals":
                await _turn(runner, session.id, _approval(events))
        done.append(await service.get_session(app_name=name, user_id=USER, session_id=session.id))
    await runner.close()
    return done


def record_shape(
    folder: Path,
    name: str,
    *,
    plugin: bool = False,
    sessions: int = 1,
    slow: tuple[str, ...] = SLOW_AGENTS,
) -> tuple[Path, list[Any]]:
    """Record one shape agent against a fresh stand-in; return the EvalSet path and the
    sessions ADK held."""
    from cassettes._evalset_writer import adk_capture_path

    with (
        StandinGemini(shapes_brain(slow)) as api,
        pytest.MonkeyPatch.context() as env,
    ):
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        capture = adk_capture_path(folder, name) if plugin else None
        with rec.record(folder, name=name, upstream=api.url, app_name=name):
            done = asyncio.run(drive(name, plugin_path=capture, sessions=sessions))
    return folder / f"{name}.evalset.json", done


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("name", choices=sorted(CONVERSATIONS))
    parser.add_argument("--plugin", type=Path, default=None, help="attach the capture plugin")
    parser.add_argument("--sessions", type=int, default=1)
    options = parser.parse_args(argv)
    asyncio.run(drive(options.name, plugin_path=options.plugin, sessions=options.sessions))


if __name__ == "__main__":
    main()
