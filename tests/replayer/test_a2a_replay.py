"""An ADK agent delegating to a remote agent over A2A, recorded and replayed with the remote
gone.

The remote is a real ``to_a2a`` server (uvicorn on 127.0.0.1, its own stand-in model, in a
subprocess: ``tests/agents/a2a_remote.py``); the caller is a ``RemoteA2aAgent`` sub-agent
(``tests/agents/a2a_caller``), streaming (``SendStreamingMessage``) or not
(``SendMessage``). It is recorded with ``rec start -- python drive_runner.py`` and again
with ``rec replay --mode record``; then the remote is stopped, a listener that counts the
connections it accepts takes its port, and ``rec replay`` must pass without one. A task
polled with ``GetTask`` (a2a-sdk's own client: ``RemoteA2aAgent`` never polls) replays the
same way from a google-genai program.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cassettes._cassette import load_cassette
from rec.standin.brain import RuleBrain, say
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.a2a_remote import caller_brain
from tests.factories import ConnectionCounter
from tests.rec_process import (
    DRIVER,
    REPO,
    free_port,
    rec_environment,
    rec_replay,
    rec_run,
    rec_start,
    wait_for_http,
)

CALLER = REPO / "tests" / "agents" / "a2a_caller"
TURNS = ("When does the museum open?", "And the museum cafe?")


@contextlib.contextmanager
def remote_agent(port: int) -> Iterator[str]:
    """The remote A2A agent on 127.0.0.1:``port`` while the block runs; its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-W", "ignore", "-m", "tests.agents.a2a_remote", str(port)],
        env=rec_environment(GOOGLE_API_KEY=FAKE_API_KEY),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{url}/.well-known/agent-card.json", process)
        yield url
    finally:
        process.terminate()
        process.communicate(timeout=60)


@contextlib.contextmanager
def caller_world(streaming: str) -> Iterator[tuple[str, int, dict[str, str]]]:
    """The stand-in model for the caller and the remote agent on a free port while the block
    runs: the model's URL, the port, and the caller's environment (where the remote is, and
    whether it streams: ``"1"`` or ``"0"``)."""
    port = free_port()
    env = {"A2A_REMOTE_URL": f"http://127.0.0.1:{port}", "A2A_STREAMING": streaming}
    with StandinGemini(caller_brain()) as model, remote_agent(port):
        yield model.url, port, env


@dataclass
class Recorded:
    evalset: Path
    port: int
    env: dict[str, str]


def _a2a_methods(cassette: Path) -> list[str]:
    methods = []
    for exchange in load_cassette(cassette).exchanges:
        body = exchange.request.body
        value = getattr(body, "value", None)
        if exchange.origin == "tool" and isinstance(value, dict) and "method" in value:
            methods.append(value["method"])
    return methods


@pytest.fixture(scope="module", params=["1", "0"], ids=["streaming", "not-streaming"])
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    streaming = request.param
    out = tmp_path_factory.mktemp("a2a")
    with caller_world(streaming) as (model_url, port, env):
        done = rec_start(
            out,
            "museum",
            model_url,
            sys.executable,
            str(DRIVER),
            "tests.agents.a2a_caller",
            *TURNS,
            GOOGLE_API_KEY=FAKE_API_KEY,
            **env,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        evalset = out / "museum.evalset.json"
        sent = "SendStreamingMessage" if streaming == "1" else "SendMessage"
        assert _a2a_methods(out / "museum.cassette.json") == [sent, sent]

        # Recorded again by `rec replay --mode record`, from the EvalSet's user turns.
        again = rec_run(
            "replay", str(CALLER), str(evalset), "--mode", "record", "--upstream", model_url,
            timeout=300, GOOGLE_API_KEY=FAKE_API_KEY, **env,
        )  # fmt: skip
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
        assert _a2a_methods(out / "museum.cassette.json") == [sent, sent]
    return Recorded(evalset, port, env)


def test_replay_serves_the_remote_agent_and_its_port_sees_no_connection(
    recorded: Recorded,
) -> None:
    listener = ConnectionCounter(recorded.port)  # the remote and its model are stopped
    try:
        done = rec_replay(CALLER, recorded.evalset, **recorded.env)
    finally:
        listener.close()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "1 passed, 0 failed, 1 case" in done.stdout, done.stdout
    assert listener.connections == 0


def test_the_evalset_scores_the_caller_with_the_remote_reply_as_adk_shows_it(
    recorded: Recorded,
) -> None:
    (case,) = json.loads(recorded.evalset.read_text())["eval_cases"]
    first, second = case["conversation"]
    for turn, text in zip((first, second), TURNS, strict=True):
        assert turn["user_content"]["parts"][0]["text"] == text
        reply = "".join(p.get("text", "") for p in turn["final_response"]["parts"])
        # The remote agent's answer (its model saw the caller's message) is the reply.
        assert reply.startswith("[museum_helper #") and f"Museum hours for: {text}" in reply
    events = first["intermediate_data"]["invocation_events"]
    calls = [
        p["function_call"]["name"]
        for e in events
        for p in (e.get("content") or {}).get("parts", [])
        if "function_call" in p
    ]
    assert calls == ["transfer_to_agent"]
    # ADK's converter keeps the remote agent's events under its name, the final one
    # without its content (the final response holds it).
    assert [e["author"] for e in events][-1] == "helper" and events[-1].get("content") is None


def test_a_changed_delegated_message_fails_with_an_a2a_diff(
    recorded: Recorded, tmp_path: Path
) -> None:
    copy = tmp_path / "changed"
    copy.mkdir()
    for path in recorded.evalset.parent.iterdir():
        if path.is_file():
            (copy / path.name).write_bytes(path.read_bytes())
    cassette = copy / "museum.cassette.json"
    data = json.loads(cassette.read_text())
    for exchange in data["exchanges"]:
        value = (exchange["request"].get("body") or {}).get("value")
        if isinstance(value, dict) and value.get("method", "").startswith("Send"):
            # The recording holds another question than the one the caller now delegates.
            value["params"]["message"]["parts"][0]["text"] = "When does the zoo open?"
            break
    cassette.write_text(json.dumps(data, indent=1))
    listener = ConnectionCounter(recorded.port)
    try:
        done = rec_replay(CALLER, copy / "museum.evalset.json", **recorded.env)
    finally:
        listener.close()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the A2A call Send" in done.stdout
    assert (
        'message.parts[0].text changed: "When does the zoo open?" -> '
        '"When does the museum open?"' in done.stdout.replace("\n    ", " ")
    ), done.stdout
    assert listener.connections == 0


def test_a_task_paused_for_input_is_recorded_and_replayed_without_the_remote(
    tmp_path: Path,
) -> None:
    """The remote's long-running tool pauses its task (``input-required``); the caller's
    function response resumes the same task. Both calls are recorded; ADK's eval cannot
    replay a function-response turn, so the case ends at the pause, which replays."""
    from importlib.metadata import version

    adk = version("google-adk")
    if tuple(int(n) for n in adk.split(".")[:2]) >= (2, 15):
        pytest.skip(
            f"google-adk {adk}: RemoteA2aAgent sends the caller's function response to no "
            "paused remote task (one A2A call), so there is no resume to record"
        )
    out = tmp_path / "rec"
    with caller_world("1") as (model_url, port, env):
        done = rec_start(
            out,
            "ticket",
            model_url,
            sys.executable,
            str(REPO / "tests" / "agents" / "a2a_approval_driver.py"),
            GOOGLE_API_KEY=FAKE_API_KEY,
            **env,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    calls = [
        e
        for e in load_cassette(out / "ticket.cassette.json").exchanges
        if e.origin == "tool" and e.request.body is not None and e.request.body.kind == "json"
    ]
    assert len(calls) == 2
    paused, resumed = (str(getattr(c.response.body, "text", "")) for c in calls)
    assert paused.rstrip().endswith("}") and "TASK_STATE_INPUT_REQUIRED" in paused
    assert "TASK_STATE_COMPLETED" in resumed
    resuming = getattr(calls[1].request.body, "value", {})["params"]["message"]
    assert resuming["taskId"] and resuming["contextId"]  # the paused task, continued

    (case,) = json.loads((out / "ticket.evalset.json").read_text())["eval_cases"]
    assert len(case["conversation"]) == 1
    listener = ConnectionCounter(port)
    try:
        replayed = rec_replay(CALLER, out / "ticket.evalset.json", **env)
    finally:
        listener.close()
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-3000:]
    assert "1 passed, 0 failed, 1 case" in replayed.stdout
    assert listener.connections == 0


POLLING_PROGRAM = '''
import asyncio, os, uuid

import httpx
from a2a.client import ClientConfig, create_client
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState
from google import genai

DONE = (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED)


async def _ask_remote(text):
    """SendMessage with return_immediately (the client's polling), then GetTask until done."""
    async with httpx.AsyncClient(timeout=60) as http:
        config = ClientConfig(streaming=False, polling=True, httpx_client=http)
        client = await create_client(os.environ["A2A_REMOTE_URL"], config)
        message = Message(role=Role.ROLE_USER, parts=[Part(text=text)], message_id=uuid.uuid4().hex)
        async for event in client.send_message(SendMessageRequest(message=message)):
            task = event.task
        states = [task.status.state]
        while task.status.state not in DONE:
            await asyncio.sleep(0.05)
            task = await client.get_task(GetTaskRequest(id=task.id))
            states.append(task.status.state)
        await client.close()
    answer = "".join(p.text for a in task.artifacts for p in a.parts)
    return answer, states


async def ask(text, session):
    answer, states = await _ask_remote(text)
    session.data.setdefault("states", []).append(states)
    client = genai.Client()
    config = {"system_instruction": f"The helper said: {answer}"}
    reply = await client.aio.models.generate_content(
        model="gemini-2.0-flash", contents=text, config=config
    )
    return reply.text
'''


def test_a_polled_task_is_recorded_and_replayed_without_the_remote(tmp_path: Path) -> None:
    """a2a-sdk's own client with ``polling`` (``SendMessage`` with ``return_immediately``,
    then ``GetTask`` until the task completes: ADK's ``RemoteA2aAgent`` never polls) in a
    google-genai program: recorded with ``rec.record``, replayed by ``rec replay
    module:function`` with the remote stopped, its port counting connections."""
    import asyncio

    import rec
    from replayer._agent_loading import ProgramSession, load_agent

    program = tmp_path / "polling_program.py"
    program.write_text(POLLING_PROGRAM)
    spec = f"{program}:ask"
    loaded = load_agent(spec)
    assert loaded.program is not None
    port = free_port()
    env = {"A2A_REMOTE_URL": f"http://127.0.0.1:{port}"}
    out = tmp_path / "rec"
    session = ProgramSession("polling_program", "user", "s1")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        patch.setenv("A2A_REMOTE_URL", env["A2A_REMOTE_URL"])
        with StandinGemini(RuleBrain([say("Caller: {user_text}")])) as model, remote_agent(port):
            with rec.record(out, name="poll", upstream=model.url):
                asyncio.run(loaded.program("When does the museum open?", session))  # type: ignore[misc]
    (states,) = session.data["states"]
    assert len(states) >= 2  # submitted, then polled until completed
    methods = _a2a_methods(out / "poll.cassette.json")
    assert methods == ["SendMessage"] + ["GetTask"] * (len(states) - 1)

    listener = ConnectionCounter(port)  # the remote and its model are stopped
    try:
        done = rec_replay(spec, out / "poll.evalset.json", **env)
    finally:
        listener.close()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "1 passed, 0 failed, 1 case" in done.stdout, done.stdout
    assert listener.connections == 0
