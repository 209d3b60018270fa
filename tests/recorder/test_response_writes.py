"""What leaves the proxy's socket when: an answer read whole sends its headers with its
first body bytes, in one write; a stream's headers leave at once (recorder._traffic._server)."""

from __future__ import annotations

import asyncio
import select
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from recorder._traffic import IncomingRequest, ProxyServer, ResponseWriter

WAIT = 60.0
"""Generous: these waits end when the other side acts, not on a clock."""


class Paced:
    """A handler that starts its answer, then waits for the test before each next step."""

    def __init__(self, *, with_body: bool) -> None:
        self.with_body = with_body
        self.started = threading.Event()
        self.write_body = threading.Event()
        self.body_written = threading.Event()
        self.finish = threading.Event()

    async def handle(self, request: IncomingRequest, writer: ResponseWriter) -> None:
        loop = asyncio.get_running_loop()
        await writer.start(200, {"content-type": "application/json"}, with_body=self.with_body)
        self.started.set()
        await loop.run_in_executor(None, self.write_body.wait, WAIT)
        await writer.write(b'{"answer": 42}')
        self.body_written.set()
        await loop.run_in_executor(None, self.finish.wait, WAIT)

    def status(self) -> dict[str, Any]:
        return {"mode": "paced"}


@pytest.fixture
def paced(request: pytest.FixtureRequest) -> Iterator[tuple[Paced, socket.socket]]:
    handler = Paced(with_body=request.param)
    with ProxyServer(handler).running_in_thread() as proxy:
        client = socket.create_connection(("127.0.0.1", proxy.port), timeout=WAIT)
        with client:
            client.sendall(
                b"POST /v1beta/models/m:generateContent HTTP/1.1\r\n"
                + f"Host: 127.0.0.1:{proxy.port}\r\n".encode()
                + b"Content-Type: application/json\r\nX-Goog-Api-Key: k\r\n"
                b"Content-Length: 2\r\n\r\n{}"
            )
            try:
                yield handler, client
            finally:
                handler.write_body.set()
                handler.finish.set()


def _arrived(client: socket.socket) -> bytes | None:
    """What the client's socket holds right now (None: nothing), without waiting."""
    readable, _, _ = select.select([client], [], [], 0)
    return client.recv(65536, socket.MSG_PEEK) if readable else None


@pytest.mark.parametrize("paced", [True], indirect=True)
def test_an_answer_read_whole_sends_its_headers_with_its_first_bytes(
    paced: tuple[Paced, socket.socket],
) -> None:
    handler, client = paced
    assert handler.started.wait(WAIT)
    # The headers were prepared; on loopback a write is in the peer's buffer when the
    # send returns, so anything written would be here.
    assert _arrived(client) is None
    handler.write_body.set()
    assert handler.body_written.wait(WAIT)
    head = client.recv(65536)
    assert head.startswith(b"HTTP/1.1 200 ")
    assert b'{"answer": 42}' in head  # the headers and the first chunk, together
    assert b"0\r\n\r\n" not in head  # the end waits for the handler to return
    handler.finish.set()


@pytest.mark.parametrize("paced", [False], indirect=True)
def test_a_streams_headers_leave_at_once(paced: tuple[Paced, socket.socket]) -> None:
    handler, client = paced
    assert handler.started.wait(WAIT)
    head = client.recv(65536)
    assert head.startswith(b"HTTP/1.1 200 ") and head.endswith(b"\r\n\r\n")
    handler.write_body.set()
    assert handler.body_written.wait(WAIT)
    assert b'{"answer": 42}' in client.recv(65536)


class Echo:
    """Answers each request with its own body's length and first bytes."""

    async def handle(self, request: IncomingRequest, writer: ResponseWriter) -> None:
        summary = b"%d:%s" % (len(request.body), request.body[:8])
        await writer.send(200, {"content-type": "text/plain"}, summary)

    def status(self) -> dict[str, Any]:
        return {"mode": "echo"}


def _read_until(client: socket.socket, end: bytes) -> bytes:
    data = b""
    while end not in data:
        chunk = client.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _head(port: int, more: bytes) -> bytes:
    """A generateContent request's head, with ``more`` header lines at its end."""
    return (
        b"POST /v1beta/models/m:generateContent HTTP/1.1\r\n"
        + f"Host: 127.0.0.1:{port}\r\n".encode()
        + b"Content-Type: application/json\r\nX-Goog-Api-Key: k\r\n"
        + more
        + b"\r\n"
    )


def test_a_client_that_expects_100_continue_gets_it_before_sending_its_body() -> None:
    with ProxyServer(Echo()).running_in_thread() as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=WAIT) as client:
            client.sendall(_head(proxy.port, b"Expect: 100-continue\r\nContent-Length: 2\r\n"))
            # The body is held back until the proxy says to go on, as curl does.
            assert _read_until(client, b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
            client.sendall(b"{}")
            answer = _read_until(client, b"2:{}")
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b"\r\n\r\n2:{}")


def test_request_bodies_larger_than_aiohttps_default_limit_reach_the_handler() -> None:
    body = b'{"a": "' + b"x" * (3 << 20) + b'"}'
    with ProxyServer(Echo()).running_in_thread() as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=WAIT) as client:
            client.sendall(_head(proxy.port, b"Content-Length: %d\r\n" % len(body)) + body)
            answer = _read_until(client, b'{"a": "x')
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b'\r\n\r\n%d:{"a": "x' % len(body))
