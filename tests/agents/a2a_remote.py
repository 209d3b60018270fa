"""A remote ADK agent served over A2A with ``to_a2a``: ``python -m tests.agents.a2a_remote PORT``.

It runs its own stand-in model in the same process (so stopping the process stops the
remote and its model; the caller sets ``GOOGLE_API_KEY`` to a fake key), serves the agent
with uvicorn on 127.0.0.1:PORT, and prints ``ready`` once the agent card answers. The agent
answers ``Museum hours for: <text>``.
``caller_brain`` is the model of the agent that calls it (``tests/agents/a2a_caller``).
"""

from __future__ import annotations

import sys
import threading
import time

from rec.standin.brain import RuleBrain, call, say

REMOTE_REPLY = "Museum hours for: {user_text}"


def caller_brain() -> RuleBrain:
    """The caller's model (``tests/agents/a2a_caller``): transfer museum questions to
    ``helper``, answer the rest itself."""
    return RuleBrain(
        [
            call("transfer_to_agent", lambda t: {"agent_name": "helper"}, when="museum"),
            say("Caller: {user_text}"),
        ]
    )


def request_ticket(museum: str) -> dict[str, str]:
    """Ask the user to approve buying a ticket (a long-running tool: the task then waits
    for the user's input, A2A's ``input-required`` state).

    Args:
        museum: The museum.
    """
    return {"status": f"waiting for approval of a ticket to {museum}"}


def main(port: int) -> None:
    import uvicorn
    from google.adk.a2a.utils.agent_to_a2a import to_a2a
    from google.adk.agents import LlmAgent
    from google.adk.models import Gemini
    from google.adk.tools import LongRunningFunctionTool

    from rec.standin.server import StandinGemini

    rules = [
        call("request_ticket", lambda t: {"museum": "Louvre"}, when="ticket"),
        say(REMOTE_REPLY),
    ]
    model = StandinGemini(RuleBrain(rules)).start()
    agent = LlmAgent(
        name="museum_helper",
        model=Gemini(model="gemini-2.0-flash", base_url=model.url),
        instruction="Tell museum opening hours; ask before buying a ticket.",
        description="Knows the opening hours of every museum.",
        tools=[LongRunningFunctionTool(request_ticket)],
    )
    app = to_a2a(agent, host="127.0.0.1", port=port)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    print("ready", flush=True)
    thread.join()


if __name__ == "__main__":
    main(int(sys.argv[1]))
