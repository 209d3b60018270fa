"""Live sessions as people run them: a camera frame, and a session resumed after ``goAway``.

google-genai's real Live client talks through ``rec.record`` to the Live stand-in
(``rec.standin.live``), which speaks the real wire: ``realtime_input`` video blobs
(``image/jpeg``), ``sessionResumptionUpdate`` handles after each turn and ``goAway`` before
it ends a connection. Replay runs the same program with the stand-in stopped and sockets
limited to loopback; it must receive the same messages, and a changed frame must fail closed.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from cassettes._cassette import load_cassette
from rec.standin.live import StandinLive
from rec.standin.replies import FAKE_API_KEY
from recorder._api import record
from replayer._replay_api import replay

MODEL = "gemini-live-2.5-flash"


def _jpeg(seed: int, size: int) -> bytes:
    """Bytes shaped like a JPEG (start and end markers around noise), ``size`` long."""
    return b"\xff\xd8\xff\xe0" + random.Random(seed).randbytes(size - 6) + b"\xff\xd9"


def _texts(message: types.LiveServerMessage) -> list[str]:
    content = message.server_content
    parts = (content and content.model_turn and content.model_turn.parts) or []
    return [part.text for part in parts if part.text]


async def _look(client: genai.Client, frames: list[bytes]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
    async with client.aio.live.connect(model=MODEL, config=config) as session:
        for frame in frames:
            await session.send_realtime_input(video=types.Blob(data=frame, mime_type="image/jpeg"))
        await session.send_realtime_input(text="what do you see?")
        async for message in session.receive():
            out.append(message.model_dump(exclude_none=True))
    return out


def _record(tmp_path: Path, api: StandinLive, program: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name="live", upstream=api.url) as recording:
        got = asyncio.run(program(genai.Client()))
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert recording.result is not None
    return got, recording.result.cassette_path


def test_video_frames_are_recorded_and_replayed_and_a_changed_frame_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    # One small frame stays inline; one large one goes beside the cassette.
    frames = [_jpeg(1, 20_000), _jpeg(2, 90_000)]
    with StandinLive() as api:
        recorded, cassette_path = _record(
            tmp_path, api, lambda client: _look(client, frames), monkeypatch
        )
    said = "".join(text for m in recorded for text in _texts(types.LiveServerMessage(**m)))
    assert said == "You said: what do you see? (I saw 2 video frames)"
    stored = json.loads(cassette_path.read_text())["live"]["sessions"][0]["frames"]
    videos = [f for f in stored if "video" in f.get("data", {}).get("realtime_input", {})]
    assert len(videos) == 2
    assert videos[0]["data"]["realtime_input"]["video"]["mime_type"] == "image/jpeg"
    assert "media" not in videos[0] and videos[1]["media"][0]["file"].endswith(".jpg")

    with replay(cassette_path) as replaying:
        replayed = asyncio.run(_look(genai.Client(), frames))
    assert replaying.misses == []
    assert replayed == recorded

    with replay(cassette_path) as replaying:
        with pytest.raises(genai_errors.APIError):
            asyncio.run(_look(genai.Client(), [frames[0], _jpeg(3, 90_000)]))
    (miss,) = replaying.misses
    assert "live.sessions[0].frames[3]" in str(miss)  # setup, setupComplete, two frames
    assert any("media sha256 changed" in line for line in miss.diff)


async def _until_complete_or_go_away(session: Any, seen: dict[str, Any]) -> None:
    """Read one turn's messages, noting the latest resumption handle; stop at ``goAway``."""
    async for message in session.receive():
        seen["messages"].append(message.model_dump(exclude_none=True))
        update = message.session_resumption_update
        if update is not None and update.resumable and update.new_handle:
            seen["handle"] = update.new_handle
        if message.go_away is not None:
            seen["go_away"] = message.go_away.time_left
            return


async def _say(session: Any, text: str, seen: dict[str, Any]) -> None:
    await session.send_client_content(
        turns={"role": "user", "parts": [{"text": text}]}, turn_complete=True
    )
    await _until_complete_or_go_away(session, seen)


async def _resumed(client: genai.Client) -> dict[str, Any]:
    """Two turns, then (on ``goAway``) a new socket resuming with the latest handle."""
    seen: dict[str, Any] = {"messages": [], "handle": None, "go_away": None}
    config = types.LiveConnectConfig(
        response_modalities=[types.Modality.TEXT],
        session_resumption=types.SessionResumptionConfig(),
    )
    async with client.aio.live.connect(model=MODEL, config=config) as session:
        await _say(session, "hello", seen)
        await _say(session, "tell me more", seen)
        while seen["go_away"] is None:
            await _until_complete_or_go_away(session, seen)
    handle = seen["handle"]
    assert handle is not None
    config.session_resumption = types.SessionResumptionConfig(handle=handle)
    async with client.aio.live.connect(model=MODEL, config=config) as session:
        await _say(session, "and then?", seen)
    return seen


def test_a_session_resumed_after_go_away_is_recorded_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    with StandinLive(go_away_after=2) as api:
        recorded, cassette_path = _record(tmp_path, api, _resumed, monkeypatch)
        assert api.connections == 2
        resumed_setup = api.sessions[1].frames[0]["setup"]
    assert recorded["go_away"] == "1s"
    assert resumed_setup["sessionResumption"] == {"handle": recorded["handle"]}
    said = "".join(t for m in recorded["messages"] for t in _texts(types.LiveServerMessage(**m)))
    assert said.endswith("You said: and then? (turn 3 of the conversation)")  # it went on
    cassette = load_cassette(cassette_path)
    assert cassette.live is not None
    first, second = cassette.live.sessions
    kinds = [next(iter(f.data)) for f in first.frames if f.sender == "server"]
    assert kinds[-2:] == ["sessionResumptionUpdate", "goAway"]
    assert second.frames[0].data["setup"]["sessionResumption"]["handle"] == recorded["handle"]

    with replay(cassette_path) as replaying:
        replayed = asyncio.run(_resumed(genai.Client()))
    assert replaying.misses == []
    assert replayed == recorded


# -- Vertex AI Live (LlmBidiService) -----------------------------------------------------------

VERTEX_TOKEN = "ya29.FAKE-oauth-token-for-tests-only"


def _vertex_client() -> genai.Client:
    from google.oauth2.credentials import Credentials

    return genai.Client(
        vertexai=True,
        project="demo-project",
        location="us-central1",
        credentials=Credentials(token=VERTEX_TOKEN),  # type: ignore[no-untyped-call]
    )


async def _vertex_turns(client: genai.Client) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
    async with client.aio.live.connect(model=MODEL, config=config) as session:
        for text in ("hello", "what is the weather?"):
            await session.send_client_content(
                turns={"role": "user", "parts": [{"text": text}]}, turn_complete=True
            )
            called = False
            async for message in session.receive():
                out.append(message.model_dump(exclude_none=True))
                if message.tool_call is not None:
                    called = True
                    responses = [
                        types.FunctionResponse(id=call.id, name=call.name, response={"sky": "grey"})
                        for call in message.tool_call.function_calls or []
                    ]
                    await session.send_tool_response(function_responses=responses)
            if called:  # the tool call ended its turn; the answer to it is the next one
                async for message in session.receive():
                    out.append(message.model_dump(exclude_none=True))
    return out


def test_a_vertex_ai_live_session_is_recorded_and_replayed_through_the_same_path(
    tmp_path: Path, loopback_only: Any
) -> None:
    with StandinLive(tool_calls={"weather": ("get_weather", {"city": "Paris"})}) as api:
        with record(tmp_path, name="vx", upstream=api.url, vertex_upstream=api.url):
            recorded = asyncio.run(_vertex_turns(_vertex_client()))
        (opened,) = api.sessions
    assert opened.path.endswith(".LlmBidiService/BidiGenerateContent")
    assert "locations/us-central1" in json.dumps(api.sessions[0].frames[0])
    said = "".join(t for m in recorded for t in _texts(types.LiveServerMessage(**m)))
    assert "You said: hello" in said and 'The tool said: [{"sky": "grey"}]' in said
    text = (tmp_path / "vx.cassette.json").read_text()
    assert "LlmBidiService" in text and VERTEX_TOKEN not in text
    assert "authorization" not in text.lower()

    with replay(tmp_path / "vx.cassette.json") as replaying:
        replayed = asyncio.run(_vertex_turns(_vertex_client()))
    assert replaying.misses == []
    assert replayed == recorded


def test_a_vertex_ai_live_session_goes_to_the_location_its_setup_names() -> None:
    from cassettes._errors import InputError
    from recorder._traffic import Upstreams, setup_location

    path = "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent"
    model = "projects/demo/locations/europe-west4/publishers/google/models/" + MODEL
    location = setup_location({"setup": {"model": model}})
    assert location == "europe-west4"
    assert Upstreams().url_for(path, location=location) == (
        "https://europe-west4-aiplatform.googleapis.com" + path
    )
    assert Upstreams(vertex="http://127.0.0.1:9").url_for(path) == "http://127.0.0.1:9" + path
    with pytest.raises(InputError) as raised:
        Upstreams().url_for(path, location=setup_location({"setup": {"model": MODEL}}))
    assert "--vertex-upstream" in str(raised.value)
    with pytest.raises(InputError):
        Upstreams().url_for(path, location="evil.example.com/x")


def test_without_vertex_upstream_the_relay_reads_the_setup_for_the_location(
    tmp_path: Path, loopback_only: Any
) -> None:
    with StandinLive() as api:
        with record(tmp_path, name="vx", upstream=api.url) as recording:
            with pytest.raises(genai_errors.APIError) as raised:
                asyncio.run(_vertex_turns(_vertex_client()))
        assert api.connections == 0  # a Vertex AI session never goes to the Gemini upstream
    # The location came from the setup; the loopback guard refused the host it names.
    assert "us-central1-aiplatform.googleapis.com" in " ".join(loopback_only.attempts)
    assert raised.value.code == 1011 and "us-central1-aiplatform" in str(raised.value)
    assert recording.result is not None and recording.result.live_sessions == 0
