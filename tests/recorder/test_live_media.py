"""Large Live media kept beside the cassette: recorded, replayed byte for byte, checked.

google-genai's real Live client streams 10 MiB of audio through ``rec.record`` to the Live
stand-in (``rec.standin.live``) and gets megabytes of synthetic speech back; the cassette
must stay small JSON with the media in ``NAME.media/``, and replay (in process and through
``rec serve`` to another process) must hand the program the same bytes. A missing or
changed side file is refused by loading and reported by ``rec check``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

from cassettes._cassette import Cassette, load_cassette
from cassettes._cassette_writer import save_cassette
from cassettes._checking import check_file
from cassettes._errors import InputError
from cassettes._live import LiveFrame, LiveRecording, LiveSession
from rec.standin.live import StandinLive
from rec.standin.replies import FAKE_API_KEY
from recorder._api import record
from replayer._replay_api import replay
from tests.rec_process import popen, rec_argv, rec_environment, rec_start, served_exports

MODEL = "gemini-live-2.5-flash"
MIB = 1024 * 1024
CHUNK = MIB // 2
"""Bytes of audio a realtime_input frame carries (a WebSocket message stays under 1 MiB)."""

# A program run once recording and once replaying; it prints the digest of all it received.
PROGRAM = """
import asyncio, hashlib, random
from google import genai
from google.genai import types

async def receive(session, digest):
    heard = 0
    async for message in session.receive():
        content = message.server_content
        for part in (content and content.model_turn and content.model_turn.parts) or []:
            digest.update(part.inline_data.data)
            heard += len(part.inline_data.data)
    return heard

async def main():
    sound = random.Random(7).randbytes(10 * 1024 * 1024)
    digest = hashlib.sha256()
    config = {"response_modalities": ["AUDIO"]}
    client = genai.Client()
    async with client.aio.live.connect(model="gemini-live-2.5-flash", config=config) as s:
        for start in range(0, len(sound), 512 * 1024):
            chunk = sound[start : start + 512 * 1024]
            await s.send_realtime_input(audio=types.Blob(data=chunk, mime_type="audio/pcm"))
        await s.send_realtime_input(audio_stream_end=True)
        heard = await receive(s, digest)
        turn = {"role": "user", "parts": [{"text": "sing"}]}
        await s.send_client_content(turns=turn, turn_complete=True)
        heard += await receive(s, digest)
    print(heard, digest.hexdigest())

asyncio.run(main())
"""


def _long_song(text: str) -> str:
    """The stand-in's reply: long enough to be megabytes of synthetic speech."""
    return "la " * 4000 if text == "sing" else f"You said: {text}"


def _received(out: list[bytes]) -> tuple[int, str]:
    digest = hashlib.sha256()
    for piece in out:
        digest.update(piece)
    return sum(map(len, out)), digest.hexdigest()


async def _media_session(client: genai.Client) -> tuple[int, str]:
    sound = random.Random(7).randbytes(10 * MIB)
    out: list[bytes] = []
    config = types.LiveConnectConfig(response_modalities=[types.Modality.AUDIO])
    async with client.aio.live.connect(model=MODEL, config=config) as session:
        for start in range(0, len(sound), CHUNK):
            blob = types.Blob(data=sound[start : start + CHUNK], mime_type="audio/pcm;rate=16000")
            await session.send_realtime_input(audio=blob)
        await session.send_realtime_input(audio_stream_end=True)
        await _collect(session, out)
        await session.send_client_content(
            turns={"role": "user", "parts": [{"text": "sing"}]}, turn_complete=True
        )
        await _collect(session, out)
    return _received(out)


async def _collect(session: Any, out: list[bytes]) -> None:
    async for message in session.receive():
        content = message.server_content
        for part in (content and content.model_turn and content.model_turn.parts) or []:
            assert part.inline_data is not None and part.inline_data.data is not None
            out.append(part.inline_data.data)


def test_ten_mib_of_audio_each_way_leaves_a_small_cassette_and_replays_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    with StandinLive(reply=_long_song, chunks=24) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        with record(tmp_path, name="talk", upstream=api.url) as recording:
            heard, digest = asyncio.run(_media_session(genai.Client()))
        monkeypatch.delenv("GOOGLE_API_KEY")
        sent = b"".join(
            base64_bytes(frame["realtime_input"]["audio"]["data"])
            for frame in api.sessions[0].frames
            if "audio" in frame.get("realtime_input", {})
        )
    assert sent == random.Random(7).randbytes(10 * MIB)  # the stand-in got every byte
    assert heard > 5 * MIB
    assert recording.result is not None
    cassette_path = recording.result.cassette_path
    assert cassette_path.stat().st_size < MIB
    media = sorted((tmp_path / "talk.media").iterdir())
    assert all(p.name.startswith("sha256-") and p.suffix == ".pcm" for p in media)
    assert sum(p.stat().st_size for p in media) >= 10 * MIB
    stored = json.loads(cassette_path.read_text())
    frames = stored["live"]["sessions"][0]["frames"]
    refs = [ref for frame in frames for ref in frame.get("media", [])]
    assert {ref["file"] for ref in refs} == {f"talk.media/{p.name}" for p in media}
    # Twenty chunks sent, twenty-four song pieces received (the same piece is one file).
    assert len(refs) >= 44 and len(media) < len(refs)
    for ref in refs:
        assert hashlib.sha256((tmp_path / ref["file"]).read_bytes()).hexdigest() == ref["sha256"]
    assert check_file(cassette_path) == []

    with replay(cassette_path) as replaying:
        replayed = asyncio.run(_media_session(genai.Client()))
    assert replaying.misses == []
    assert replayed == (heard, digest)


def base64_bytes(text: str) -> bytes:
    """The bytes of base64 as google-genai sends them (URL-safe)."""
    return base64.urlsafe_b64decode(text + "==" if len(text) % 4 else text)


def test_rec_serve_hands_another_process_the_side_files_bytes(tmp_path: Path) -> None:
    script = tmp_path / "talk.py"
    script.write_text(PROGRAM)
    out = tmp_path / "rec"
    with StandinLive(reply=_long_song, chunks=24) as api:
        recorded = rec_start(
            out, "talk", api.url, sys.executable, str(script), GOOGLE_API_KEY=FAKE_API_KEY
        )
    assert recorded.returncode == 0, recorded.stderr
    assert (out / "talk.cassette.json").stat().st_size < MIB
    assert any((out / "talk.media").iterdir())
    server = popen(rec_argv("serve", str(out), "--quiet"))
    try:
        replayed = subprocess.run(
            ["bash", "-c", served_exports(server) + f"exec {sys.executable} {script}\n"],
            env=rec_environment(GOOGLE_API_KEY="placeholder"),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert replayed.returncode == 0, replayed.stderr
        assert replayed.stdout == recorded.stdout
        assert int(recorded.stdout.split()[0]) > 5 * MIB
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)


# -- side files written and read by the cassette's own writer and reader ---------------------


def _cassette_with_media(tmp_path: Path, encoded: str) -> Path:
    blob = {"mimeType": "image/jpeg", "data": encoded}
    frames = [
        LiveFrame(sender="client", offset_ms=0, data={"setup": {"model": "models/m"}}),
        LiveFrame(sender="client", offset_ms=1, data={"realtimeInput": {"video": blob}}),
        LiveFrame(sender="server", offset_ms=2, data={"serverContent": {"turnComplete": True}}),
    ]
    session = LiveSession(id=0, opened_at="2026-12-07T12:00:00+00:00", url="ws://x/", frames=frames)
    cassette = Cassette(name="cam", live=LiveRecording(sessions=[session]))
    return save_cassette(cassette, tmp_path / "cam.cassette.json")


@pytest.mark.parametrize("alphabet", ["standard", "urlsafe-unpadded"])
def test_media_comes_back_spelled_as_recorded(tmp_path: Path, alphabet: str) -> None:
    raw = random.Random(3).randbytes(70 * 1024 + 1)
    encoded = base64.b64encode(raw).decode()
    if alphabet != "standard":
        encoded = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    path = _cassette_with_media(tmp_path, encoded)
    assert encoded not in path.read_text()
    (side,) = (tmp_path / "cam.media").iterdir()
    assert side.suffix == ".jpg" and side.read_bytes() == raw
    loaded = load_cassette(path)
    assert loaded.live is not None
    frame = loaded.live.sessions[0].frames[1]
    assert frame.data["realtimeInput"]["video"]["data"] == encoded and frame.media is None
    save_cassette(loaded, path)  # saved again: the same file, the same reference
    assert [p.name for p in (tmp_path / "cam.media").iterdir()] == [side.name]
    assert load_cassette(path, lazy=True).live == loaded.live


def test_small_media_stays_inline(tmp_path: Path) -> None:
    encoded = base64.b64encode(b"\xff" * (60 * 1024)).decode()
    path = _cassette_with_media(tmp_path, encoded)
    assert encoded in path.read_text() and not (tmp_path / "cam.media").exists()


def test_a_missing_or_changed_side_file_is_refused_naming_the_frame_and_the_fix(
    tmp_path: Path,
) -> None:
    raw = random.Random(5).randbytes(100 * 1024)
    path = _cassette_with_media(tmp_path, base64.b64encode(raw).decode())
    (side,) = (tmp_path / "cam.media").iterdir()
    side.write_bytes(raw[:-1] + b"\x00")
    with pytest.raises(InputError) as changed:
        load_cassette(path)
    message = str(changed.value)
    assert str(path) in message and "live.sessions[0].frames[1].media[0]" in message
    assert "sha256 differs" in message and "Restore the cam.media folder" in message

    side.unlink()
    with pytest.raises(InputError) as missing:
        load_cassette(path, lazy=True)
    assert "is missing" in str(missing.value) and side.name in str(missing.value)
    checked = subprocess.run(
        rec_argv("check", str(path)), env=rec_environment(), capture_output=True, text=True
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr  # problems found
    output = checked.stdout + checked.stderr
    assert "live.sessions[0].frames[1].media[0]" in output and "is missing" in output
