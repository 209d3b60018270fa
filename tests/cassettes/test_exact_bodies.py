"""What rec stores parsed, and what it keeps as text or bytes so replay gives it back unchanged."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from cassettes._bodies import body_from_bytes, body_to_bytes, stored_body
from cassettes._cassette import BinaryBody, JsonBody, TextBody
from cassettes._sse import event_from_raw, frame_event

DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        pytest.param(b'{"a": [1, 2.5, "x"], "b": null}', "json", id="plain-json"),
        pytest.param(b'{"a": NaN}', "text", id="nan"),
        pytest.param(b'{"a": -Infinity}', "text", id="infinity"),
        pytest.param(b'{"a": 1e999}', "text", id="float-overflow"),
        pytest.param(b'{"a": ' + b"9" * 5000 + b"}", "text", id="5000-digit-int"),
        pytest.param(DEEP, "text", id="100k-deep"),
        pytest.param(b"[" * 151 + b"]" * 151, "text", id="151-deep"),
        pytest.param(b"[" * 150 + b"]" * 150, "json", id="150-deep"),
        pytest.param(b"[" + b",".join([b"[{}]"] * 300) + b"]", "json", id="wide-not-deep"),
        pytest.param(
            b'{"wide": ['
            + b",".join([b"[]"] * 200)
            + b'], "deep": '
            + b"[" * 150
            + b"]" * 150
            + b"}",
            "text",
            id="151-deep-beside-wide",
        ),
        pytest.param(b'{"k": ' * 151 + b"1" + b"}" * 151, "text", id="151-deep-objects"),
        pytest.param(b'["[[[[' + b"[" * 200 + b'"]', "json", id="brackets-in-a-string"),
        pytest.param(b"\xef\xbb\xbf{}", "text", id="bom"),
        pytest.param(b"\xff\xfe{", "base64", id="not-utf8"),
    ],
)
def test_a_body_is_stored_parsed_only_when_it_comes_back_the_same(data: bytes, kind: str) -> None:
    body = body_from_bytes(data, "application/json")
    assert body is not None and body.kind == kind
    if kind == "json":
        assert isinstance(body, JsonBody)
        assert json.loads(body_to_bytes(body)) == json.loads(data)
    else:
        assert body_to_bytes(body) == data


@pytest.mark.parametrize(
    ("raw", "encoding", "expected"),
    [
        pytest.param(
            gzip.compress(b'{"ok": true}'), "gzip", JsonBody(value={"ok": True}), id="gzip"
        ),
        pytest.param(b"\x28\xb5\x2f\xfd\x00\x58zstd", "zstd", None, id="zstd-unknown"),
        pytest.param(b'{"not": "gzip"}', "gzip", None, id="gzip-header-plain-body"),
        pytest.param(b"\x1f\x8b\x08\x00truncated", "gzip", None, id="truncated-gzip"),
        pytest.param(b"nonsense", "br", None, id="bad-brotli"),
        pytest.param(b"nonsense", "deflate", None, id="bad-deflate"),
    ],
)
def test_a_body_rec_cannot_decode_is_kept_as_received(
    raw: bytes, encoding: str, expected: JsonBody | None
) -> None:
    body = stored_body(raw, content_type="application/json", content_encoding=encoding)
    if expected is not None:
        assert body == expected
        return
    assert isinstance(body, BinaryBody)
    assert body.content_encoding == encoding
    assert base64.b64decode(body.base64) == raw == body_to_bytes(body)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param('data: {"a": NaN}', id="nan"),
        pytest.param("data: " + "[" * 10_000 + "]" * 10_000, id="deep"),
        pytest.param('data: {"a": 1e999}', id="overflow"),
    ],
)
def test_an_event_that_would_not_serialise_back_is_kept_verbatim(payload: str) -> None:
    event = event_from_raw(payload, offset_ms=1.0, line_ending="\r\n")
    assert event.lines == [payload]
    assert frame_event(event) == payload.encode() + b"\r\n\r\n"


def test_text_bodies_stay_text() -> None:
    assert body_from_bytes(b"hello", "text/plain") == TextBody(text="hello")
