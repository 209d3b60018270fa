"""Upstream oddities: the client gets exactly what the upstream sent, when
recording and again when replaying, and the recorder keeps working."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassettes._cassette import load_cassette
from rec.standin.replies import FAKE_API_KEY, Reply, ScriptedResponder
from recorder._recorder import Recorder
from recorder._traffic import Upstreams
from replayer._replay_api import replay

UNARY = "/v1beta/models/gemini-2.0-flash:generateContent"
STREAM = "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
HEADERS = {"x-goog-api-key": FAKE_API_KEY, "content-type": "application/json"}
BODY = b'{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}'


def _fetch(url: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and the body bytes exactly as they came over the wire."""
    with httpx.Client(trust_env=False, timeout=60) as client:
        with client.stream("POST", url + path, headers=HEADERS, content=BODY) as response:
            raw = b"".join(response.iter_raw())
            return response.status_code, dict(response.headers), raw


ODDITIES = [
    pytest.param(
        Reply.raw(b"\x28\xb5\x2f\xfd" + bytes(range(256)), headers=(("Content-Encoding", "zstd"),)),
        UNARY,
        id="zstd",
    ),
    pytest.param(
        Reply.raw(b'{"not": "gzip at all"}', headers=(("Content-Encoding", "gzip"),)),
        UNARY,
        id="gzip-header-plain-body",
    ),
    pytest.param(Reply.raw(b"[" * 100_000 + b"]" * 100_000), UNARY, id="100k-deep-json"),
    pytest.param(Reply.raw(b'{"a": NaN, "b": 1e999, "c": -Infinity}'), UNARY, id="nan-1e999"),
    pytest.param(
        Reply.stream_events([b'data: {"a":1}\r\n\r\n', b'data: {"unterminated":']),
        STREAM,
        id="stream-trailing-bytes",
    ),
    pytest.param(
        Reply.stream_events([b'data: {"a":1}\r\n\r\n', b"data: \xff\xfe not utf-8\r\n\r\n"]),
        STREAM,
        id="stream-not-utf8",
    ),
    pytest.param(
        Reply.stream_events(
            [b'data: {"a":NaN}\r\n\r\n', b"data: " + b"[" * 5000 + b"]" * 5000 + b"\r\n\r\n"]
        ),
        STREAM,
        id="stream-nan-and-deep-events",
    ),
    pytest.param(
        Reply.stream_events([b'data: {"a":1}\r\n\r\n'], headers=(("Content-Encoding", "zstd"),)),
        STREAM,
        id="stream-zstd",
    ),
]


@pytest.mark.parametrize(("reply", "path"), ODDITIES)
def test_the_client_gets_what_the_upstream_sent_recorded_and_replayed(
    tmp_path: Path, standin_factory: Any, reply: Reply, path: str
) -> None:
    api = standin_factory(ScriptedResponder([reply], repeat_last=True))
    status, headers, direct = _fetch(api.url, path)
    with Recorder(
        tmp_path, name="odd", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        recorded = _fetch(rec.url, path)
        again = _fetch(rec.url, path)  # the recorder is still healthy
    assert recorded[0] == status == again[0]
    assert recorded[2] == direct == again[2]
    assert recorded[1].get("content-encoding") == headers.get("content-encoding")
    assert len(load_cassette(tmp_path / "odd.cassette.json").exchanges) == 2

    api.stop()
    with replay(tmp_path / "odd.cassette.json", point_clients=False) as replaying:
        replayed = _fetch(replaying.url, path)
    assert replaying.misses == []
    assert replayed[0] == status
    assert replayed[2] == direct
    assert replayed[1].get("content-encoding") == headers.get("content-encoding")


def test_a_gzipped_body_is_stored_decoded_and_replayed_as_its_content(
    tmp_path: Path, standin_factory: Any
) -> None:
    """rec stores what it can decode decoded (readable diffs); replay sends the content."""
    content = b'{"a": NaN, "b": [1, 2]}'
    reply = Reply.raw(gzip.compress(content), headers=(("Content-Encoding", "gzip"),))
    api = standin_factory(ScriptedResponder([reply], repeat_last=True))
    direct = _fetch(api.url, UNARY)[2]
    with Recorder(
        tmp_path, name="gz", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        assert _fetch(rec.url, UNARY)[2] == direct
    api.stop()
    with replay(tmp_path / "gz.cassette.json", point_clients=False) as replaying:
        status, headers, replayed = _fetch(replaying.url, UNARY)
    assert (status, replayed, headers.get("content-encoding")) == (200, content, None)


@pytest.mark.parametrize("status", [201, 204, 299, 418, 599])
def test_unusual_statuses_pass_through(tmp_path: Path, standin_factory: Any, status: int) -> None:
    body = b"" if status == 204 else b'{"odd": true}'
    api = standin_factory(ScriptedResponder([Reply.raw(body, status=status)], repeat_last=True))
    with Recorder(
        tmp_path, name="st", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        got = _fetch(rec.url, UNARY)
    assert (got[0], got[2]) == (status, body)
    api.stop()
    with replay(tmp_path / "st.cassette.json", point_clients=False) as replaying:
        assert _fetch(replaying.url, UNARY)[0::2] == (status, body)
