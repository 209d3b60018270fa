"""A program that asks the A2A caller to buy a ticket and approves the remote agent's pause.

``python a2a_approval_driver.py``: one session of ``tests/agents/a2a_caller``. The first
turn asks for a museum ticket; the remote agent calls its long-running ``request_ticket``
tool, so its A2A task pauses in the ``input-required`` state and the caller shows the call.
The second turn answers that call with a function response, which the caller sends to the
paused task (the same task and context): the remote resumes and finishes.
"""

from __future__ import annotations

import asyncio


async def main() -> None:
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from tests.agents.a2a_caller.agent import root_agent

    sessions = InMemorySessionService()
    runner = Runner(app=App(name="a2a_caller", root_agent=root_agent), session_service=sessions)
    session = await sessions.create_session(app_name="a2a_caller", user_id="user")
    message = types.Content(role="user", parts=[types.Part(text="Buy a museum ticket, please")])
    pending = None
    for _ in range(2):
        async for event in runner.run_async(
            user_id="user", session_id=session.id, new_message=message
        ):
            for call in event.get_function_calls():
                if call.id in (event.long_running_tool_ids or ()):
                    pending = call
            if event.is_final_response() and event.content and event.content.parts:
                print("reply:", "".join(p.text or "" for p in event.content.parts), flush=True)
        if pending is None:
            break
        answer = types.FunctionResponse(
            id=pending.id, name=pending.name, response={"approved": True}
        )
        message = types.Content(role="user", parts=[types.Part(function_response=answer)])
        pending = None
    await runner.close()


if __name__ == "__main__":
    asyncio.run(main())
