"""An upstream that fails at the HTTP level reaches the client as it would directly.

A raw asyncio server on loopback plays the broken upstream; the same httpx request is sent
to it directly and through the real recording proxy, and the client must see the same
kind of failure, not an answer made up by rec.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from google import genai
from google.genai import types

from cassettes._cassette import JsonBody, load_cassette
from rec.standin.replies import FAKE_API_KEY
from recorder._api import record
from tests.factories import gemini_response
from tests.raw_upstream import RawUpstream, read_request

PATH = "/v1beta/models/gemini-2.0-flash:generateContent"
T = TypeVar("T")


class _BrokenUpstream(RawUpstream):
    """Reads one request per connection, writes ``reply`` (maybe nothing), closes.

    A sequence of parts is written one part at a time with a pause between, so the client
    reads them separately.
    """

    def __init__(self, reply: bytes | Sequence[bytes]) -> None:
        super().__init__()
        self.reply = [reply] if isinstance(reply, bytes) else list(reply)
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await read_request(reader)
        for index, part in enumerate(self.reply):
            if index:
                await asyncio.sleep(0.05)
            writer.write(part)
            await writer.drain()
        writer.close()


def _failure(base: str) -> BaseException | httpx.Response:
    with httpx.Client(timeout=60) as client:
        try:
            return client.post(base + PATH, content=b'{"contents": []}')
        except httpx.HTTPError as exc:
            return exc


def _direct_and_recorded(
    upstream: _BrokenUpstream, folder: Path, name: str, ask: Callable[[str], T]
) -> tuple[T, T]:
    """What ``ask`` gets from ``upstream`` directly, then through rec recording ``name`` in
    ``folder``."""
    direct = ask(upstream.url)
    with record(folder, name=name, upstream=upstream.url, point_clients=False) as rec:
        proxied = ask(rec.url)
    return direct, proxied


@pytest.fixture
def no_answer() -> Iterator[_BrokenUpstream]:
    with _BrokenUpstream(b"") as upstream:
        yield upstream


def test_an_upstream_closing_without_an_answer_closes_the_clients_connection(
    no_answer: _BrokenUpstream, tmp_path: Path
) -> None:
    direct, proxied = _direct_and_recorded(no_answer, tmp_path, "gone", _failure)
    assert isinstance(direct, httpx.RemoteProtocolError), direct
    # The same failure as direct, not a 502 made up by rec.
    assert type(proxied) is type(direct), proxied
    assert no_answer.connections == 2
    assert not (tmp_path / "gone.cassette.json").exists()  # nothing was answered: no exchange


def test_an_upstream_cutting_its_body_short_cuts_the_clients(tmp_path: Path) -> None:
    reply = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a"'
    with _BrokenUpstream(reply) as upstream:
        direct, proxied = _direct_and_recorded(upstream, tmp_path, "short", _failure)
    assert isinstance(direct, httpx.RemoteProtocolError), direct
    assert isinstance(proxied, httpx.RemoteProtocolError), proxied


def _head(length: int) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\n"
        b"Content-Length: %d\r\n\r\n" % length
    )


ANSWER = json.dumps(gemini_response("the declared answer")).encode()


def _generate(base: str) -> str | None:
    client = genai.Client(api_key=FAKE_API_KEY, http_options=types.HttpOptions(base_url=base))
    return client.models.generate_content(model="gemini-2.0-flash", contents="hi").text


def _recorded_body(path: Path) -> object:
    (exchange,) = load_cassette(path).exchanges
    assert isinstance(exchange.response.body, JsonBody)
    return exchange.response.body.value


@pytest.mark.parametrize(
    "reply",
    [
        [_head(len(ANSWER)) + ANSWER + b"HTTP/1.1 garbage past the declared length"],
        [_head(len(ANSWER)), ANSWER + b"\x00\x01 more than declared"],
        [_head(len(ANSWER)) + ANSWER, b"late bytes past the end"],
    ],
    ids=["one-read", "body-and-extra-in-a-later-read", "extra-in-a-later-read"],
)
def test_an_upstream_sending_more_than_its_content_length_answers_the_declared_bytes(
    reply: list[bytes], tmp_path: Path
) -> None:
    with _BrokenUpstream(reply) as upstream:
        direct, proxied = _direct_and_recorded(upstream, tmp_path, "more", _generate)
    assert direct == "the declared answer"
    assert proxied == direct  # what google-genai sees directly, not a 502 of rec's
    assert _recorded_body(tmp_path / "more.cassette.json") == json.loads(ANSWER)


def test_garbage_after_a_chunked_bodys_last_chunk_is_ignored_as_direct(tmp_path: Path) -> None:
    reply = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\nNOT A RESPONSE\r\n"
        % (len(ANSWER), ANSWER)
    )
    with _BrokenUpstream(reply) as upstream:
        direct, proxied = _direct_and_recorded(upstream, tmp_path, "chunked", _generate)
    assert direct == proxied == "the declared answer"
    assert _recorded_body(tmp_path / "chunked.cassette.json") == json.loads(ANSWER)


@pytest.mark.parametrize(
    "reply",
    [b"HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\n{}", b"NOT HTTP AT ALL\r\n\r\n"],
    ids=["bad-status-code", "not-http"],
)
def test_an_invalid_status_line_fails_the_client_as_it_fails_directly(
    reply: bytes, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with _BrokenUpstream(reply) as upstream:
        direct, proxied = _direct_and_recorded(upstream, tmp_path, "bad", _failure)
    assert isinstance(direct, httpx.RemoteProtocolError), direct
    # A protocol failure as direct, not an answer (a 502) made up by rec.
    assert isinstance(proxied, httpx.RemoteProtocolError), proxied
    (line,) = [r.getMessage() for r in caplog.records if "malformed HTTP" in r.getMessage()]
    assert "\n" not in line and "Bad status line" in line, line
    assert not (tmp_path / "bad.cassette.json").exists()


def test_a_status_outside_http_reaches_the_client_and_is_not_recorded(tmp_path: Path) -> None:
    reply = b"HTTP/1.1 999 Odd\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    with _BrokenUpstream(reply) as upstream:
        direct, proxied = _direct_and_recorded(upstream, tmp_path, "odd", _failure)
    assert isinstance(direct, httpx.Response) and direct.status_code == 999, direct
    assert isinstance(proxied, httpx.Response), proxied  # answered in full, not cut
    assert (proxied.status_code, proxied.content) == (999, b"{}")
    assert not (tmp_path / "odd.cassette.json").exists()  # a cassette cannot hold it


def test_an_interim_100_continue_is_not_taken_for_the_response(tmp_path: Path) -> None:
    """The response ends where its framing says; a 100 Continue before it ends nothing."""
    interim = b"HTTP/1.1 100 Continue\r\n\r\n"
    with _BrokenUpstream([interim, _head(len(ANSWER)) + ANSWER]) as upstream:
        direct, proxied = _direct_and_recorded(upstream, tmp_path, "interim", _generate)
    assert direct == proxied == "the declared answer"
