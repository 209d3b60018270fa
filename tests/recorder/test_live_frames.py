"""Live frames the relay must keep faithfully or refuse loudly: JSON nested deeper than a
parser goes, ``NaN``/``Infinity``, a frame over the size cap, and an upstream that drops
the connection.

The upstream is a real aiohttp WebSocket server on loopback that answers each client
message as the test asks; the client is a real aiohttp WebSocket through rec's recording
proxy (``rec.record``).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

import rec
from cassettes._cassette import load_cassette
from recorder._live_proxy import MAX_FRAME_VARIABLE

LIVE = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
DEEP = "[" * 5000 + "]" * 5000
NAN = '{"value": NaN, "top": Infinity, "bottom": -Infinity}'


async def _upstream(request: web.Request) -> web.WebSocketResponse:
    socket = web.WebSocketResponse(max_msg_size=0)
    await socket.prepare(request)
    async for message in socket:
        asked = message.data
        if asked == "deep":
            await socket.send_str(DEEP)
        elif asked == "nan":
            await socket.send_str(NAN)
        elif asked == "big":
            await socket.send_bytes(b"x" * (3 * 1024 * 1024))
        elif asked == "drop":
            assert request.transport is not None
            request.transport.abort()  # no close frame: an abnormal closure
            break
        else:
            await socket.send_str(json.dumps({"echo": asked}))
    return socket


@pytest.fixture
def upstream() -> Iterator[str]:
    """The upstream's base URL (``http://127.0.0.1:PORT``), served on its own loop."""
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_get(LIVE, _upstream)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=60)
        loop.close()


async def _session(url: str, asks: list[str]) -> tuple[list[Any], int | None, str]:
    """Send each ask and read its answer; the answers, the close code and reason."""
    answers: list[Any] = []
    async with aiohttp.ClientSession() as http:
        socket = await http.ws_connect(url.replace("http://", "ws://") + LIVE, max_msg_size=0)
        for ask in asks:
            await socket.send_str(ask)
            message = await socket.receive()
            if message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                answers.append(message.data)
            else:
                break
        if not socket.closed:
            await socket.close()
        return answers, socket.close_code, str(message.extra or "")


def _record(folder: Path, upstream: str, asks: list[str]) -> tuple[list[Any], int | None, str]:
    return _recorded(folder, upstream, asks)[0]


def _recorded(
    folder: Path, upstream: str, asks: list[str]
) -> tuple[tuple[list[Any], int | None, str], Any]:
    """What the client saw, and the recording's result."""
    with rec.record(folder, name="live", upstream=upstream, write_evalset=False) as recording:
        seen = asyncio.run(_session(recording.url, asks))
    return seen, recording.result


def test_deep_and_nan_frames_are_recorded_as_they_crossed(tmp_path: Path, upstream: str) -> None:
    """Issue 39: a frame nested 5,000 deep and one holding NaN and Infinity are relayed and
    recorded exactly (as their text), not dropped while the recording says all is well,
    nor stored with null in place of NaN."""
    answers, code, _ = _record(tmp_path, upstream, ["deep", "nan", "hello"])
    assert answers == [DEEP, NAN, '{"echo": "hello"}']
    assert code == 1000
    cassette = load_cassette(tmp_path / "live.cassette.json")
    assert cassette.live is not None
    [session] = cassette.live.sessions
    server = [f for f in session.frames if f.sender == "server"]
    assert [f.text for f in server[:2]] == [DEEP, NAN]
    assert server[2].data == {"echo": "hello"}
    assert all(f.data is None for f in server[:2])  # kept as text, not parsed to null


def test_a_frame_over_the_size_cap_is_refused_with_1009_and_fails_the_recording(
    tmp_path: Path, upstream: str, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """Issue 39: a frame larger than the cap (here 1 MiB, by the variable) is not relayed
    nor held: the client gets close 1009 with rec's reason, the log says how to raise the
    cap, and the recording fails instead of passing with the frame missing."""
    monkeypatch.setenv(MAX_FRAME_VARIABLE, str(1024 * 1024))
    (answers, code, reason), result = _recorded(tmp_path, upstream, ["hello", "big"])
    assert answers == ['{"echo": "hello"}']
    assert code == 1009 and "larger than 1048576 bytes" in reason
    assert result.lost_exchanges == 1  # `rec start` exits 1 and says why
    assert "larger than 1048576 bytes" in result.lost_reason
    assert MAX_FRAME_VARIABLE in result.lost_reason and MAX_FRAME_VARIABLE in caplog.text
    cassette = load_cassette(tmp_path / "live.cassette.json")
    assert cassette.live is not None and cassette.live.sessions[0].close_code == 1009


def test_the_frame_cap_is_on_by_default_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    from cassettes._errors import InputError
    from recorder._live_proxy import DEFAULT_MAX_FRAME_BYTES, max_frame_bytes

    assert max_frame_bytes() == DEFAULT_MAX_FRAME_BYTES == 16 * 1024 * 1024
    monkeypatch.setenv(MAX_FRAME_VARIABLE, "lots")
    with pytest.raises(InputError, match=MAX_FRAME_VARIABLE):
        max_frame_bytes()


def test_an_upstream_that_drops_the_connection_is_passed_on_as_1014_never_1006(
    tmp_path: Path, upstream: str
) -> None:
    """Issue 39: 1006 reports a connection that dropped and is never sent: an upstream
    that drops the session reaches the client as 1014 (bad gateway)."""
    answers, code, _ = _record(tmp_path, upstream, ["hello", "drop"])
    assert answers == ['{"echo": "hello"}']
    assert code == 1014
