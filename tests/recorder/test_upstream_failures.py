"""An upstream that fails at the HTTP level reaches the client as it would directly.

A raw asyncio server on loopback plays the broken upstream; the same httpx request is sent
to it directly and through the real recording proxy, and the client must see the same
kind of failure, not an answer made up by rec.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from recorder._api import record

PATH = "/v1beta/models/gemini-2.0-flash:generateContent"


class _BrokenUpstream:
    """Reads one request head per connection, writes ``reply`` (maybe nothing), closes."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.connections = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.url = ""

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            writer.write(self.reply)
            await writer.drain()
            writer.close()

        async def serve() -> asyncio.Server:
            return await asyncio.start_server(handle, "127.0.0.1", 0)

        server = self._loop.run_until_complete(serve())
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        self._ready.set()
        self._loop.run_forever()
        server.close()

    def __enter__(self) -> _BrokenUpstream:
        self._thread.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()


def _failure(base: str) -> BaseException | httpx.Response:
    with httpx.Client(timeout=60) as client:
        try:
            return client.post(base + PATH, content=b'{"contents": []}')
        except httpx.HTTPError as exc:
            return exc


@pytest.fixture
def no_answer() -> Iterator[_BrokenUpstream]:
    with _BrokenUpstream(b"") as upstream:
        yield upstream


def test_an_upstream_closing_without_an_answer_closes_the_clients_connection(
    no_answer: _BrokenUpstream, tmp_path: Path
) -> None:
    direct = _failure(no_answer.url)
    with record(tmp_path, name="gone", upstream=no_answer.url, point_clients=False) as rec:
        proxied = _failure(rec.url)
    assert isinstance(direct, httpx.RemoteProtocolError), direct
    # The same failure as direct, not a 502 made up by rec.
    assert type(proxied) is type(direct), proxied
    assert no_answer.connections == 2
    assert not (tmp_path / "gone.cassette.json").exists()  # nothing was answered: no exchange


def test_an_upstream_cutting_its_body_short_cuts_the_clients(tmp_path: Path) -> None:
    reply = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a"'
    with _BrokenUpstream(reply) as upstream:
        direct = _failure(upstream.url)
        with record(tmp_path, name="short", upstream=upstream.url, point_clients=False) as rec:
            proxied = _failure(rec.url)
    assert isinstance(direct, httpx.RemoteProtocolError), direct
    assert isinstance(proxied, httpx.RemoteProtocolError), proxied
