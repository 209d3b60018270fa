"""A client that closes its connection once it has read the last event still gets recorded.

LiteLLM's Anthropic client (and many SSE readers) stop at the stream's last event
(``message_stop``, ``[DONE]``) and close the connection without waiting for the end of
the chunked body. The exchange was answered in full, so it belongs in the cassette: rec
must not drop it because the client left before the upstream's terminating chunk.

A raw asyncio server on loopback plays the upstream: it sends every event, then holds the
terminating chunk back until the client has gone, so the proxy is still reading the
upstream when the client closes. A real httpx client reads through the real recording
proxy and leaves at the last event.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cassettes._cassette import SseBody, load_cassette
from recorder._api import record
from tests.raw_upstream import RawUpstream, read_request

PATH = "/v1/messages"
EVENTS = [
    b'event: message_start\ndata: {"type":"message_start"}\n\n',
    b'event: message_delta\ndata: {"type":"message_delta"}\n\n',
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
]


class _SlowToEnd(RawUpstream):
    """Answers each request with an event stream whose terminating chunk waits until the
    client's connection has closed (or 30 s)."""

    def __init__(self) -> None:
        super().__init__()
        self.client_gone = threading.Event()
        """Set when the proxy's upstream connection saw the client's close reach it."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        body = b"".join(EVENTS)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n" % (len(body), body)
        )
        await writer.drain()
        # The terminating chunk comes once the client has left (the proxy would have
        # dropped the exchange by then), or after 30 s if it never does.
        await asyncio.get_running_loop().run_in_executor(None, self.client_gone.wait, 30)
        await asyncio.sleep(0.3)  # well within the proxy's grace (2 s)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        await reader.read()  # the proxy keeps the connection; it closes it at the end
        writer.close()

    def __exit__(self, *exc: object) -> None:
        self.client_gone.set()
        super().__exit__(*exc)


@pytest.fixture
def upstream() -> Iterator[_SlowToEnd]:
    with _SlowToEnd() as server:
        yield server


def test_a_client_closing_at_the_last_event_is_recorded_whole(
    upstream: _SlowToEnd, tmp_path: Path
) -> None:
    with record(tmp_path, name="early", upstream=upstream.url, point_clients=False) as rec:
        with httpx.Client(timeout=60) as client:
            with client.stream("POST", rec.url + PATH, json={"stream": True}) as response:
                assert response.status_code == 200
                for line in response.iter_lines():
                    if line == 'data: {"type":"message_stop"}':
                        break
            # Leaving the block closed the connection with the body's end still unread.
        upstream.client_gone.set()
    (exchange,) = load_cassette(tmp_path / "early.cassette.json").exchanges
    body = exchange.response.body
    assert isinstance(body, SseBody)
    assert body.complete
    assert [event.lines[0] for event in body.events if event.lines] == [
        "event: message_start",
        "event: message_delta",
        "event: message_stop",
    ]
