"""A program that builds its own ADK Runner: ``python drive_runner.py MODULE TEXT...``.

Imports ``MODULE`` (an agent package: ``root_agent``, an agent or a workflow), runs the
user turns through one session of ``Runner(app=App(...))`` with the state in
``$DRIVE_STATE`` (JSON), and prints each final reply and the runner's plugins. rec knows
nothing of it: under ``rec start -- python drive_runner.py ...`` the capture plugin comes
from rec's ``sitecustomize``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys


async def main(module_name: str, turns: list[str]) -> None:
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    module = importlib.import_module(module_name)
    agent = getattr(module, "agent", module)
    app_name = module_name.rsplit(".", 1)[-1]
    sessions = InMemorySessionService()
    runner = Runner(app=App(name=app_name, root_agent=agent.root_agent), session_service=sessions)
    state = json.loads(os.environ.get("DRIVE_STATE", "{}"))
    session = await sessions.create_session(app_name=app_name, user_id="user", state=state)
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(
            user_id="user", session_id=session.id, new_message=message
        ):
            if event.is_final_response() and event.content and event.content.parts:
                print("reply:", "".join(p.text or "" for p in event.content.parts), flush=True)
    print("plugins:", ",".join(p.name for p in runner.plugin_manager.plugins), flush=True)
    await runner.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
