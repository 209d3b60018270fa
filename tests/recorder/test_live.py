"""Gemini Live sessions recorded through the real proxy and replayed with the upstream gone.

Every test runs google-genai's real Live client (``client.aio.live.connect``) over real
WebSockets on loopback: live through ``rec.record`` against the Live stand-in
(``rec.standin.live``), then through ``replay`` with the stand-in stopped, no API key and
sockets limited to loopback. What the program received must be the same, frame for frame.
"""

from __future__ import annotations

import asyncio
import math
import shutil
import signal
import struct
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from cassettes._cassette import load_cassette
from cassettes._errors import InputError
from cassettes._live import LiveJournalLine
from cassettes._matching import MatchRules
from rec.standin.live import StandinLive
from rec.standin.replies import FAKE_API_KEY
from recorder._api import record
from recorder._capture_files import read_json_lines
from recorder._recording import Finishing, RecordingPaths, finalize_recording
from replayer._replay_api import replay
from tests.rec_process import popen, rec_argv, rec_environment, rec_run, rec_start, served_exports
from tests.script_loading import load_script

MODEL = "gemini-live-2.5-flash"
TEXT_ONLY: dict[str, Any] = {"response_modalities": ["TEXT"]}

Program = Callable[[genai.Client], Awaitable[list[dict[str, Any]]]]


@pytest.fixture
def live_api() -> Iterator[StandinLive]:
    with StandinLive(tool_calls={"weather": ("get_weather", {"city": "Paris"})}) as api:
        yield api


async def _turn(session: Any, text: str, out: list[dict[str, Any]]) -> None:
    await session.send_client_content(
        turns={"role": "user", "parts": [{"text": text}]}, turn_complete=True
    )
    answered = True
    while answered:  # a tool call ends its turn; the model's answer to it is the next one
        answered = False
        async for message in session.receive():
            out.append(message.model_dump(exclude_none=True))
            if message.tool_call is not None:
                responses = [
                    types.FunctionResponse(id=call.id, name=call.name, response={"sky": "sunny"})
                    for call in message.tool_call.function_calls or []
                ]
                await session.send_tool_response(function_responses=responses)
                answered = True


def two_turns(texts: tuple[str, str] = ("hello", "tell me more")) -> Program:
    async def program(client: genai.Client) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        async with client.aio.live.connect(model=MODEL, config=TEXT_ONLY) as session:
            for text in texts:
                await _turn(session, text, out)
        return out

    return program


def _pcm(seconds: float, pitch: float, rate: int = 16000) -> bytes:
    """Synthetic 16-bit mono PCM: a sine tone."""
    count = int(seconds * rate)
    return b"".join(
        struct.pack("<h", int(12000 * math.sin(2 * math.pi * pitch * n / rate)))
        for n in range(count)
    )


def audio_session(pitch: float = 440.0, chunks: int = 3) -> Program:
    async def program(client: genai.Client) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        sound = _pcm(0.3, pitch)
        size = -(-len(sound) // chunks)
        async with client.aio.live.connect(model=MODEL, config=TEXT_ONLY) as session:
            for start in range(0, len(sound), size):
                blob = types.Blob(
                    data=sound[start : start + size], mime_type="audio/pcm;rate=16000"
                )
                await session.send_realtime_input(audio=blob)
            await session.send_realtime_input(audio_stream_end=True)
            async for message in session.receive():
                out.append(message.model_dump(exclude_none=True))
        return out

    return program


def _run(program: Program) -> list[dict[str, Any]]:
    return asyncio.run(program(genai.Client()))


def _record(
    tmp_path: Path, api: StandinLive, program: Program, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[dict[str, Any]], Path]:
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name="live", upstream=api.url) as session:
        got = _run(program)
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert session.result is not None
    return got, session.result.cassette_path


@pytest.fixture
def two_turns_recorded(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> tuple[list[dict[str, Any]], Path]:
    """:func:`two_turns` recorded (what it received, the cassette), then the stand-in
    stopped: a replay that reached upstream would fail."""
    recorded = _record(tmp_path, live_api, two_turns(), monkeypatch)
    live_api.stop()
    return recorded


def test_two_turn_text_session_replays_frame_for_frame_with_the_upstream_gone(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    recorded, cassette_path = _record(tmp_path, live_api, two_turns(), monkeypatch)
    assert [m["server_content"].get("turn_complete") for m in recorded].count(True) == 2
    assert live_api.connections == 1
    cassette = load_cassette(cassette_path)
    assert cassette.live is not None and len(cassette.live.sessions) == 1
    session = cassette.live.sessions[0]
    senders = [f.sender for f in session.frames]
    assert senders.count("client") == 3  # setup and two turns
    assert session.complete and session.close_code == 1000

    live_api.stop()
    with replay(cassette_path) as replaying:
        replayed = _run(two_turns())
    assert replaying.misses == []
    assert replayed == recorded
    assert live_api.connections == 1  # the replay opened none


def test_tool_call_inside_a_live_session_is_recorded_and_replayed(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    program = two_turns(("hi", "what is the weather?"))
    recorded, cassette_path = _record(tmp_path, live_api, program, monkeypatch)
    assert any("tool_call" in m for m in recorded)
    cassette = load_cassette(cassette_path)
    assert cassette.live is not None
    kinds = [next(iter(f.data)) for f in cassette.live.sessions[0].frames]
    assert "toolCall" in kinds and "tool_response" in kinds

    live_api.stop()
    with replay(cassette_path) as replaying:
        replayed = _run(program)
    assert replaying.misses == []
    assert replayed == recorded


def test_audio_session_replays_and_matches_chunks_by_hash_or_by_turns(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    recorded, cassette_path = _record(tmp_path, live_api, audio_session(), monkeypatch)
    assert any("input_transcription" in m.get("server_content", {}) for m in recorded)
    live_api.stop()

    with replay(cassette_path) as replaying:
        assert _run(audio_session()) == recorded
    assert replaying.misses == []

    other = audio_session(pitch=523.0, chunks=5)  # other bytes, other chunk count
    with replay(cassette_path) as replaying, pytest.raises(genai_errors.APIError):
        _run(other)
    assert len(replaying.misses) == 1
    miss = replaying.misses[0]
    assert "turn 1" in str(miss) and "realtimeInput" in str(miss)
    assert any("media sha256 changed" in line for line in miss.diff)
    assert "--live-audio turns" in (miss.fix or "")

    with replay(cassette_path, rules=MatchRules(live_audio="turns")) as replaying:
        assert _run(other) == recorded
    assert replaying.misses == []


def test_a_changed_turn_fails_closed_with_a_diff_naming_the_frame_and_turn(
    two_turns_recorded: tuple[list[dict[str, Any]], Path],
) -> None:
    _, cassette_path = two_turns_recorded
    with replay(cassette_path) as replaying:
        with pytest.raises(genai_errors.APIError) as raised:
            _run(two_turns(("hello", "something else")))
    assert raised.value.code == 1008
    assert len(replaying.misses) == 1
    miss = replaying.misses[0]
    assert replaying.channel.miss_behind(raised.value) is miss
    assert "Live session 0" in str(miss) and "(turn 2)" in str(miss)
    assert miss.where is not None and miss.where.startswith("live.sessions[0].frames[")
    assert any('"tell me more" -> "something else"' in line for line in miss.diff)


def test_ignore_paths_loosen_live_frames_as_they_loosen_request_bodies(
    two_turns_recorded: tuple[list[dict[str, Any]], Path],
) -> None:
    recorded, cassette_path = two_turns_recorded
    rules = MatchRules(ignore_paths=("client_content.turns",))
    with replay(cassette_path, rules=rules) as replaying:
        assert _run(two_turns(("other", "words"))) == recorded
    assert replaying.misses == []


def test_the_api_key_reaches_no_file(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch
) -> None:
    _record(tmp_path, live_api, two_turns(), monkeypatch)
    assert live_api.sessions[0].api_key == FAKE_API_KEY  # it was sent, in the URL
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for file in files:
        assert FAKE_API_KEY.encode() not in file.read_bytes(), file
    cassette = load_cassette(tmp_path / "live.cassette.json")
    assert cassette.live is not None and "key=" not in cassette.live.sessions[0].url


def test_frames_are_journaled_while_the_session_is_open_and_recovered_after_a_crash(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "crashed"

    async def program(client: genai.Client) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        async with client.aio.live.connect(model=MODEL, config=TEXT_ONLY) as session:
            await _turn(session, "hello", out)
            journal = tmp_path / "rec" / ".rec" / "live.live.jsonl"
            for _ in range(200):  # the last frame's line may follow the client's read
                lines, _ = read_json_lines(journal, LiveJournalLine, what="Live journal")
                if sum(line.frame is not None for line in lines) >= 7:
                    break
                await asyncio.sleep(0.01)
            shutil.copytree(tmp_path / "rec", copy)  # the folder as a crash would leave it
        return out

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path / "rec", name="live", upstream=live_api.url):
        _run(program)
    result = finalize_recording(
        RecordingPaths(copy, "live"), upstream=None, how=Finishing(recovered=True)
    )
    cassette = load_cassette(result.cassette_path)
    assert cassette.live is not None
    session = cassette.live.sessions[0]
    assert not session.complete  # its close was never journaled
    assert [f.sender for f in session.frames][:2] == ["client", "server"]
    assert len(session.frames) == 7  # setup, setupComplete, the turn and its four replies


def test_a_cassette_with_an_unknown_live_version_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "x.cassette.json"
    path.write_text('{"format_version": 1, "name": "x", "live": {"format_version": 9}}')
    with pytest.raises(InputError) as raised:
        load_cassette(path)
    assert "live.format_version" in str(raised.value) and "Upgrade rec" in str(raised.value)


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "live_text" / "live_chat.py"


def test_rec_start_records_a_live_program_and_rec_serve_replays_it_to_another_process(
    tmp_path: Path, live_api: StandinLive
) -> None:
    out = tmp_path / "rec"
    recorded = rec_start(
        out,
        "chat",
        live_api.url,
        sys.executable,
        str(EXAMPLE),
        "hello",
        "again",
        GOOGLE_API_KEY=FAKE_API_KEY,
    )
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stdout.splitlines() == ["You said: hello", "You said: again"]
    cassette = load_cassette(out / "chat.cassette.json")
    assert cassette.live is not None and len(cassette.live.sessions) == 1
    live_api.stop()

    server = popen(rec_argv("serve", str(out), "--quiet"))
    try:
        script = served_exports(server) + f"exec {sys.executable} {EXAMPLE} hello again\n"
        replayed = subprocess.run(
            ["bash", "-c", script],
            env=rec_environment(GOOGLE_API_KEY="placeholder"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert replayed.returncode == 0, replayed.stderr
        assert replayed.stdout.splitlines() == ["You said: hello", "You said: again"]
        server.send_signal(signal.SIGINT)
        _, said = server.communicate(timeout=60)
        # The session it played is counted (a Live program sends no HTTP request).
        assert "rec: served 0 request(s) and 1 Live session(s), 0 miss(es)" in said, said
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)


# -- an ADK agent run with Runner.run_live ---------------------------------------------------


def get_weather(city: str) -> dict[str, Any]:
    """Weather for a city."""
    return {"city": city, "sky": "sunny"}


async def _run_live_agent(turns: tuple[str, ...]) -> list[dict[str, Any]]:
    """Run an ADK agent through ``Runner.run_live`` (text modality), one turn at a time."""
    from google.adk.agents import Agent, LiveRequestQueue
    from google.adk.agents.run_config import RunConfig
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    agent = Agent(name="voice", model=MODEL, instruction="Be brief.", tools=[get_weather])
    service = InMemorySessionService()
    runner = Runner(app_name="live_app", agent=agent, session_service=service)
    session = await service.create_session(app_name="live_app", user_id="u")
    queue = LiveRequestQueue()
    events = runner.run_live(
        user_id="u",
        session_id=session.id,
        live_request_queue=queue,
        run_config=RunConfig(response_modalities=["TEXT"]),
    )
    stream = events.__aiter__()
    out: list[dict[str, Any]] = []
    try:
        for text in turns:
            queue.send_content(types.Content(role="user", parts=[types.Part(text=text)]))
            replied = False
            while True:  # a turn ends with the model's full reply and its turnComplete
                event = await asyncio.wait_for(stream.__anext__(), 60)
                content = event.content.model_dump(exclude_none=True) if event.content else None
                out.append({"content": content, "turn_complete": event.turn_complete})
                parts = event.content.parts or [] if event.content else []
                if not event.partial and any(part.text for part in parts):
                    replied = True
                if event.turn_complete and replied:
                    break
    finally:
        queue.close()
        await events.aclose()
    return out


def test_an_adk_run_live_agent_with_a_tool_is_recorded_and_replayed_credential_free(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    turns = ("hello", "what is the weather?")
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name="adk", upstream=live_api.url) as session:
        recorded = asyncio.run(_run_live_agent(turns))
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert session.result is not None
    calls = [e for e in recorded if e["content"] and "function_call" in e["content"]["parts"][0]]
    assert calls and calls[0]["content"]["parts"][0]["function_call"]["name"] == "get_weather"
    live_api.stop()

    with replay(session.result.cassette_path) as replaying:
        replayed = asyncio.run(_run_live_agent(turns))
    assert replaying.misses == []
    assert replayed == recorded
    assert live_api.connections == 1


def test_a_session_replays_again_and_a_changed_setup_fails_closed(
    two_turns_recorded: tuple[list[dict[str, Any]], Path],
) -> None:
    recorded, cassette_path = two_turns_recorded
    with replay(cassette_path) as replaying:
        assert _run(two_turns()) == recorded
        assert _run(two_turns()) == recorded  # the last matching session plays again

        async def other_model(client: genai.Client) -> list[dict[str, Any]]:
            async with client.aio.live.connect(model="gemini-other", config=TEXT_ONLY):
                return []

        with pytest.raises(genai_errors.APIError):
            _run(other_model)
    assert len(replaying.misses) == 1
    assert "the setup" in str(replaying.misses[0])
    assert any("gemini-other" in line for line in replaying.misses[0].diff)


def test_the_bundled_live_example_replays_with_no_key(loopback_only: Any) -> None:
    module = load_script(EXAMPLE)
    with replay(EXAMPLE.parent / "recordings") as replaying:
        replies = asyncio.run(module.chat(["hello", "tell me more"]))
    assert replaying.misses == []
    assert replies == ["You said: hello", "You said: tell me more"]


# -- Live sessions as eval cases: the EvalSet, and `rec replay` through Runner.run_live --------

VOICE_AGENT = '''
from google.adk.agents import Agent


def get_weather(city: str) -> dict:
    """Weather for a city."""
    return {"city": city, "sky": "sunny"}


root_agent = Agent(name="voice", model="gemini-live-2.5-flash", instruction="Be brief.",
                   tools=[get_weather])
'''


def _voice_agent(tmp_path: Path) -> tuple[Path, Any]:
    """An ADK agent folder (as ``rec replay`` loads it) and its loaded ``root_agent``."""

    folder = tmp_path / "voice_agent"
    folder.mkdir()
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(VOICE_AGENT)
    return folder, load_script(folder / "agent.py", "voice_agent_module").root_agent


async def _drive_live(
    agent: Any, turns: list[types.Content], run_config: Any
) -> list[dict[str, Any]]:
    """Run ``agent`` through ``Runner.run_live``: a text turn as content, an audio turn as
    ``activity_start``, its chunks, ``activity_end`` (as ADK's live eval sends audio)."""
    from google.adk.agents import LiveRequestQueue
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    service = InMemorySessionService()
    runner = Runner(app_name="live_app", agent=agent, session_service=service)
    session = await service.create_session(app_name="live_app", user_id="u")
    queue = LiveRequestQueue()
    events = runner.run_live(
        user_id="u", session_id=session.id, live_request_queue=queue, run_config=run_config
    )
    stream = events.__aiter__()
    out: list[dict[str, Any]] = []
    try:
        for turn in turns:
            blobs = [p.inline_data for p in turn.parts or [] if p.inline_data is not None]
            if blobs:
                queue.send_activity_start()
                for blob in blobs:
                    queue.send_realtime(blob)
                queue.send_activity_end()
            else:
                queue.send_content(turn)
            in_tool_call = False
            while True:
                event = await asyncio.wait_for(stream.__anext__(), 60)
                if not event.partial:
                    out.append(event.model_dump(exclude_none=True, include={"content", "author"}))
                in_tool_call = in_tool_call or bool(event.get_function_calls())
                if event.turn_complete and event.author != "user":
                    if not in_tool_call:
                        break
                    in_tool_call = False
    finally:
        queue.close()
        await events.aclose()
    return out


def _text(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _audio_turn(pitch: float, chunks: int = 3) -> types.Content:
    sound = _pcm(0.3, pitch)
    size = -(-len(sound) // chunks)
    return types.Content(
        role="user",
        parts=[
            types.Part(
                inline_data=types.Blob(data=sound[i : i + size], mime_type="audio/pcm;rate=16000")
            )
            for i in range(0, len(sound), size)
        ],
    )


def _rec_replay(agent_dir: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return rec_run("replay", str(agent_dir), str(out), *extra, timeout=180)


def _set_live_timeout(evalset: Path, seconds: float) -> None:
    """``live_model_config.timeout_seconds`` in the eval config beside ``evalset`` (kept
    with its other settings when there is one)."""
    import json

    config_path = evalset.parent / "test_config.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    config["live_model_config"] = {"timeout_seconds": seconds}
    config_path.write_text(json.dumps(config))


def test_an_adk_run_live_session_becomes_an_eval_case_that_rec_replay_runs_through_run_live(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch
) -> None:
    from google.adk.agents.run_config import RunConfig

    from cassettes._evalset import load_evalset

    agent_dir, agent = _voice_agent(tmp_path)
    out = tmp_path / "rec"
    turns = [_text("hello"), _text("what is the weather?")]
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(out, name="voice", upstream=live_api.url) as session:
        asyncio.run(_drive_live(agent, turns, RunConfig(response_modalities=["TEXT"])))
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert session.result is not None and session.result.evalset_path is not None

    (case,) = load_evalset(session.result.evalset_path).eval_cases
    assert case.eval_id == "hello"
    conversation = case.conversation or []
    assert [inv.user_content.parts[0].text for inv in conversation] == [  # type: ignore[index]
        "hello",
        "what is the weather?",
    ]
    final = [inv.final_response.parts[0].text for inv in conversation]  # type: ignore[union-attr,index]
    assert final == ["You said: hello", 'The tool said: [{"city": "Paris", "sky": "sunny"}]']
    events = conversation[1].intermediate_data.invocation_events  # type: ignore[union-attr]
    call = events[0].content.parts[0].function_call  # type: ignore[union-attr,index]
    response = events[1].content.parts[0].function_response  # type: ignore[union-attr,index]
    assert call is not None and (call.name, call.args) == ("get_weather", {"city": "Paris"})
    assert response is not None and response.response == {"city": "Paris", "sky": "sunny"}
    live_api.stop()

    replayed = _rec_replay(agent_dir, out)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "PASSED  hello" in replayed.stdout
    assert "tool_trajectory_avg_score=1.000" in replayed.stdout
    assert live_api.connections == 1  # the replay opened none

    # The agent's instruction changed: the Live setup no longer matches; the case fails closed.
    (agent_dir / "agent.py").write_text(VOICE_AGENT.replace("Be brief.", "Be verbose."))
    changed = _rec_replay(agent_dir, out)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "FAILED  hello" in changed.stdout and "the setup" in changed.stdout
    assert live_api.connections == 1


def test_an_adk_run_live_agent_in_audio_modality_replays_and_scores_on_its_transcriptions(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch
) -> None:
    from google.adk.agents.run_config import RunConfig

    from cassettes._evalset import load_evalset

    agent_dir, agent = _voice_agent(tmp_path)
    out = tmp_path / "rec"
    run_config = RunConfig(
        response_modalities=["AUDIO"],
        input_audio_transcription=types.AudioTranscriptionConfig(),
        output_audio_transcription=types.AudioTranscriptionConfig(),
    )
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(out, name="spoken", upstream=live_api.url) as session:
        recorded = asyncio.run(
            _drive_live(agent, [_audio_turn(440.0), _audio_turn(660.0, chunks=2)], run_config)
        )
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert session.result is not None and session.result.evalset_path is not None
    spoken = [
        part
        for event in recorded
        for part in (event.get("content") or {}).get("parts", [])
        if "inline_data" in part
    ]
    assert spoken and spoken[0]["inline_data"]["mime_type"] == "audio/pcm;rate=24000"

    (case,) = load_evalset(session.result.evalset_path).eval_cases
    conversation = case.conversation or []
    heard = [inv.user_content.parts[0].text for inv in conversation]  # type: ignore[index]
    assert heard == ["9600 bytes of sound", "9600 bytes of sound"]
    assert [len(inv.user_content.parts) for inv in conversation] == [4, 3]  # type: ignore[arg-type]
    final = [inv.final_response.parts[0].text for inv in conversation]  # type: ignore[union-attr,index]
    assert final == ["I heard 9600 bytes of audio", "I heard 9600 bytes of audio"]
    live_api.stop()

    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe has no width: the report cuts no line
    replayed = _rec_replay(agent_dir, out)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "PASSED" in replayed.stdout and "FAILED" not in replayed.stdout
    assert "response_match_score=1.000" in replayed.stdout
    assert live_api.connections == 1  # the replay opened none


def test_an_eval_config_with_live_model_config_makes_rec_replay_run_the_case_live(
    tmp_path: Path, standin: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADK's ``adk eval`` runs every case through ``run_live`` when the eval config has
    ``live_model_config``; ``rec replay`` does too, so a case recorded over REST, with no Live
    session to answer it, fails closed instead of passing over REST."""

    from google.adk.runners import InMemoryRunner

    agent_dir, agent = _voice_agent(tmp_path)
    out = tmp_path / "rec"

    async def over_rest() -> None:
        runner = InMemoryRunner(agent=agent, app_name="rest_app")
        session = await runner.session_service.create_session(app_name="rest_app", user_id="u")
        async for _ in runner.run_async(
            user_id="u", session_id=session.id, new_message=_text("hello")
        ):
            pass

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(out, name="rest", upstream=standin.url) as session:
        asyncio.run(over_rest())
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert session.result is not None and session.result.evalset_path is not None
    assert _rec_replay(agent_dir, out).returncode == 0

    _set_live_timeout(session.result.evalset_path, 30)
    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe has no width: the report cuts no line
    live = _rec_replay(agent_dir, out)
    assert live.returncode == 1, live.stdout + live.stderr
    assert "FAILED  hello" in live.stdout
    assert "a Live session opened with setup" in " ".join(live.stdout.split())


def test_a_live_turn_that_never_completes_fails_the_case_after_the_configs_timeout_seconds(
    tmp_path: Path, live_api: StandinLive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``live_model_config.timeout_seconds`` bounds each Live turn, as in ADK's live eval:
    a recording whose turn never completes fails the case with the setting named, and a
    setting ADK would refuse is refused before any case runs."""
    import json

    from google.adk.agents.run_config import RunConfig

    agent_dir, agent = _voice_agent(tmp_path)
    out = tmp_path / "rec"
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(out, name="voice", upstream=live_api.url) as session:
        asyncio.run(_drive_live(agent, [_text("hello")], RunConfig(response_modalities=["TEXT"])))
    monkeypatch.delenv("GOOGLE_API_KEY")
    live_api.stop()
    assert session.result is not None and session.result.evalset_path is not None
    assert _rec_replay(agent_dir, out).returncode == 0

    cassette_path = session.result.cassette_path
    document = json.loads(cassette_path.read_text())
    for live_session in document["live"]["sessions"]:
        live_session["frames"] = [
            frame
            for frame in live_session["frames"]
            if not (frame.get("data") or {}).get("serverContent", {}).get("turnComplete")
        ]
    cassette_path.write_text(json.dumps(document, indent=2))
    _set_live_timeout(session.result.evalset_path, 2)
    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe has no width: the report cuts no line

    stalled = _rec_replay(agent_dir, out)
    output = " ".join(stalled.stdout.split())
    assert stalled.returncode == 1, stalled.stdout + stalled.stderr
    assert "FAILED hello" in output
    assert "did not complete the turn within 2 s" in output
    assert "live_model_config.timeout_seconds" in output

    _set_live_timeout(session.result.evalset_path, 0)
    refused = _rec_replay(agent_dir, out)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "timeout_seconds is 0" in " ".join(refused.stderr.split())


LIVE_SCRIPT = """
import asyncio, sys

from google.adk.agents import LiveRequestQueue
from google.adk.agents.run_config import RunConfig
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

sys.path.insert(0, sys.argv[1])
from voice_agent.agent import root_agent


async def main(texts):
    service = InMemorySessionService()
    runner = Runner(app_name="voice_agent", agent=root_agent, session_service=service)
    session = await service.create_session(app_name="voice_agent", user_id="u")
    queue = LiveRequestQueue()
    events = runner.run_live(
        user_id="u", session_id=session.id, live_request_queue=queue,
        run_config=RunConfig(response_modalities=["TEXT"]),
    )
    stream = events.__aiter__()
    try:
        for text in texts:
            queue.send_content(types.Content(role="user", parts=[types.Part(text=text)]))
            in_tool_call = False
            while True:
                event = await asyncio.wait_for(stream.__anext__(), 60)
                in_tool_call = in_tool_call or bool(event.get_function_calls())
                if event.turn_complete and event.author != "user":
                    if not in_tool_call:
                        break
                    in_tool_call = False
            print("turn done:", text, flush=True)
        queue.close()  # the session ends as a user ends it: the stream runs out
        async for _ in stream:
            pass
    finally:
        await events.aclose()
    await runner.close()


asyncio.run(main(sys.argv[2:]))
"""


@pytest.mark.parametrize(
    "plugin",
    [pytest.param((), id="capture-plugin"), pytest.param(("--no-adk-plugin",), id="traffic")],
)
def test_rec_start_records_a_run_live_script_as_one_live_case_per_session_turn_by_turn(
    tmp_path: Path, live_api: StandinLive, plugin: tuple[str, ...]
) -> None:
    """``rec start -- python script.py`` around ``Runner.run_live``: with the capture
    plugin ADK keeps every turn of the Live session under one invocation id; the EvalSet
    still holds one invocation per turn, and the case replays through ``run_live``."""
    from cassettes._evalset import load_evalset

    agent_dir, _ = _voice_agent(tmp_path)
    script = tmp_path / "talk.py"
    script.write_text(LIVE_SCRIPT)
    out = tmp_path / "rec"
    texts = ["hello", "what is the weather?"]
    recorded = subprocess.run(
        rec_argv(
            "start",
            "--out",
            str(out),
            "--name",
            "voice",
            "--upstream",
            live_api.url,
            *plugin,
            "--",
            sys.executable,
            str(script),
            str(tmp_path),
            *texts,
        ),
        env=rec_environment(GOOGLE_API_KEY=FAKE_API_KEY),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert recorded.stdout.count("turn done:") == 2, recorded.stdout + recorded.stderr
    (case,) = load_evalset(out / "voice.evalset.json").eval_cases
    conversation = case.conversation or []
    assert [inv.user_content.parts[0].text for inv in conversation] == texts  # type: ignore[index]
    final = [inv.final_response.parts[0].text for inv in conversation]  # type: ignore[union-attr,index]
    assert final == ["You said: hello", 'The tool said: [{"city": "Paris", "sky": "sunny"}]']
    live_api.stop()

    replayed = _rec_replay(agent_dir, out, "--workers", "1")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "PASSED" in replayed.stdout and "tool_trajectory_avg_score=1.000" in replayed.stdout
    assert live_api.connections == 1  # the replay opened none: it ran Live, from the recording
