"""The serving side of A2A: an ADK agent served with ``to_a2a`` is recorded like any other.

``rec start -- python -m tests.agents.a2a_served PORT`` runs the agent under uvicorn (ADK's
``to_a2a`` app, whose Runner gets rec's capture plugin); a real a2a-sdk client sends it two
messages of one conversation (``SendMessage``, then ``SendStreamingMessage`` over SSE) and
``rec stop`` ends the recording. The agent's model calls land in the cassette, its turns in
the EvalSet (one case: the A2A context is the ADK session), and ``rec replay`` replays
them with the stand-in model stopped.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import httpx

from cassettes._cassette import load_cassette
from cassettes._evalset import invocation_tool_calls, load_evalset
from rec.standin.brain import RuleBrain, call, say
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.rec_process import REPO, free_port, popen, rec_replay, rec_run, start_argv, wait_for_http

SERVED = REPO / "tests" / "agents" / "a2a_served"
QUESTIONS = ("When does the Louvre open?", "And on Sundays?")


async def _ask(url: str, context: str, text: str, *, streaming: bool) -> str:
    """Send ``text`` in conversation ``context`` with the a2a-sdk's own client; the reply."""
    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest

    async with httpx.AsyncClient(timeout=60, trust_env=False) as http:
        client = await create_client(url, ClientConfig(streaming=streaming, httpx_client=http))
        message = Message(
            role=Role.ROLE_USER,
            parts=[Part(text=text)],
            message_id=uuid.uuid4().hex,
            context_id=context,
        )
        said = []
        async for event in client.send_message(SendMessageRequest(message=message)):
            said.append(str(event))
        await client.close()
    return "\n".join(said)


def test_an_agent_served_with_to_a2a_is_recorded_and_replays_like_any_adk_agent(
    tmp_path: Path,
) -> None:
    brain = RuleBrain(
        [
            call("opening_hours", {"museum": "Louvre"}, when="Louvre"),
            say("Open 9 to 6: {user_text}"),
        ]
    )
    port = free_port()
    out = tmp_path / "rec"
    with StandinGemini(brain) as model:
        served = (sys.executable, "-W", "ignore", "-m", "tests.agents.a2a_served", str(port))
        rec = popen(start_argv(out, "served", model.url, *served), GOOGLE_API_KEY=FAKE_API_KEY)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{url}/.well-known/agent-card.json", rec)
            context = uuid.uuid4().hex
            first = asyncio.run(_ask(url, context, QUESTIONS[0], streaming=False))
            second = asyncio.run(_ask(url, context, QUESTIONS[1], streaming=True))
        finally:
            stop = rec_run("stop", "--out", str(out), timeout=120, GOOGLE_API_KEY=FAKE_API_KEY)
            _, stderr = rec.communicate(timeout=120)
    assert stop.returncode == 0, stop.stdout + stop.stderr + stderr
    assert "TASK_STATE_COMPLETED" in first and "Done. opening_hours -> " in first, first
    assert f"Open 9 to 6: {QUESTIONS[1]}" in second, second

    # The served agent's model calls: the question, the tool's answer, the second question.
    cassette = load_cassette(out / "served.cassette.json")
    assert len([e for e in cassette.exchanges if e.origin != "tool"]) == 3
    # The tool's date.today() is a recorded read of the clock, served back at replay.
    assert cassette.reads is not None
    assert [i.kinds() for i in cassette.reads.invocations] == [{"clock"}]
    (case,) = load_evalset(out / "served.evalset.json").eval_cases
    # The exact session the capture plugin saw in to_a2a's Runner (traffic alone has no app).
    assert case.session_input is not None and case.session_input.app_name == "museum_helper"
    turns = case.conversation or []
    assert [t.user_content.parts[0].text for t in turns] == list(QUESTIONS)
    replies = [
        "".join(p.text or "" for p in t.final_response.parts or [])
        for t in turns
        if t.final_response
    ]
    assert "Done. opening_hours -> " in replies[0]
    assert replies[1].endswith(f"Open 9 to 6: {QUESTIONS[1]}")
    assert [c.name for c in invocation_tool_calls(turns[0])] == ["opening_hours"]

    # The model is stopped; the recording answers every call.
    replayed = rec_replay(SERVED, out / "served.evalset.json")
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-3000:]
    assert "1 passed, 0 failed, 1 case" in replayed.stdout, replayed.stdout
