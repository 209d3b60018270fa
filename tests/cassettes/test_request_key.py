"""The match key (canonical bytes read and spelled by orjson, then hashed) decides exactly
what the canonical request's text decides: the same hits and the same misses, over the
bundled recordings, the captured google-genai requests and generated JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cassettes._bodies import body_parts
from cassettes._bucket_keys import _BYTES_FIELD_UTF8, _bytes_fields, raw_json_request
from cassettes._canonical_json import canonical_json, compact_json, loads
from cassettes._cassette import (
    JsonBody,
    LazyExchanges,
    RecordedRequest,
    load_cassette,
)
from cassettes._cassette_writer import save_cassette
from cassettes._exact_json import exact_json
from cassettes._matching import MatchIndex
from cassettes._request_key import (
    MatchRules,
    body_parts_of,
    canonical_request,
    match_key,
    request_key,
)
from tests.cassettes.genai_requests import captured
from tests.factories import gemini_request, make_cassette, make_exchange

ROOT = Path(__file__).parents[2]
RECORDINGS = sorted((ROOT / "examples").rglob("*.cassette.json"))
RULES = [
    pytest.param(None, id="exact"),
    pytest.param(MatchRules(ignore_paths=("systemInstruction",)), id="ignore-system"),
    pytest.param(
        MatchRules(ignore_paths=("contents[*].parts[*].thoughtSignature",)), id="ignore-signatures"
    ),
]
URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"


def _request(body: Any, url: str = URL) -> RecordedRequest:
    return RecordedRequest(method="POST", url=url, body=JsonBody(value=body))


def _corpus() -> list[RecordedRequest]:
    """Every request of the bundled recordings and the captured google-genai requests."""
    found = [exchange.request for path in RECORDINGS for exchange in load_cassette(path).exchanges]
    return found + list(captured().values())


def _assert_same_decisions(requests: Sequence[RecordedRequest], rules: MatchRules | None) -> None:
    """Two requests share a match key exactly when their canonical requests are equal."""
    old = [request_key(canonical_request(r, rules)) for r in requests]
    new = [match_key(r.method, r.url, body_parts_of(r.body), rules) for r in requests]
    assert len(set(zip(old, new, strict=True))) == len(set(old)) == len(set(new))


_TO_STANDARD = str.maketrans("-_", "+/")


def _respelled(value: Any) -> Any:
    """The same JSON with every object's keys reversed and every bytes field in standard
    base64, unpadded (what the API sends back), which matching takes as the same request."""
    if isinstance(value, dict):
        out = {}
        for key in reversed(list(value)):
            item = value[key]
            if key == "thoughtSignature" and isinstance(item, str):
                item = item.translate(_TO_STANDARD).rstrip("=")
            out[key] = _respelled(item)
        return out
    if isinstance(value, list):
        return [_respelled(v) for v in value]
    return value


def _retyped(value: Any) -> Any:
    """The same JSON with each integer a float: a different request."""
    if isinstance(value, dict):
        return {k: _retyped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_retyped(v) for v in value]
    if type(value) is int:
        return float(value)
    return value


@pytest.mark.parametrize("rules", RULES)
def test_the_key_decides_as_the_canonical_request_over_the_recordings(
    rules: MatchRules | None,
) -> None:
    corpus = _corpus()
    assert len(corpus) > 30 and RECORDINGS
    variants: list[RecordedRequest] = []
    for request in corpus:
        body = request.body
        if isinstance(body, JsonBody):
            variants.append(
                request.model_copy(update={"body": JsonBody(value=_respelled(body.value))})
            )
            variants.append(
                request.model_copy(update={"body": JsonBody(value=_retyped(body.value))})
            )
    _assert_same_decisions(corpus + variants, rules)
    # The respelled requests are hits, the retyped ones (where there was an integer) misses.
    keys = {match_key(r.method, r.url, body_parts_of(r.body), rules) for r in corpus}
    respelled = variants[0::2]
    assert all(match_key(r.method, r.url, body_parts_of(r.body), rules) in keys for r in respelled)


_EDGES: list[Any] = [
    {"a": 1},
    {"a": 1.0},
    {"a": True},
    {"a": None},
    {"a": math.nan},
    {"a": math.inf},
    {"a": 2**64},
    {"a": float(2**64)},
    {"a": -(2**63) - 1},
    {"a": 1e-5},
    {"a": 0.00001},
    {"a": 1e16},
    {"a": -0.0},
    {"a": 0},
    {"a": "é\u2028\x00\x7f"},
    {"é": 1, "z": 2, "Z": 3, "\U0001f600": 4},
    {"thoughtSignature": "ab+/"},
    {"thoughtSignature": "ab-_"},
    {"thoughtSignature": "QQ"},
    {"thoughtSignature": "QQ=="},
    {"thoughtSignature": "QQ======"},
    {"inlineData": {"data": "a+b/", "mimeType": "image/png"}},
    {"inlineData": {"data": "a-b_", "mimeType": "image/png"}},
    {"text": '"thoughtSignature":"ab+/"'},
    {"text": '"thoughtSignature":"ab-_"'},
    {"deep": [[[[[[[[[[[]]]]]]]]]]]},
]


def test_the_key_decides_as_the_canonical_request_at_the_edges() -> None:
    """Numbers orjson spells differently or cannot spell, NaN (which orjson writes as null),
    lone surrogates, non-ASCII keys and bytes fields in every spelling."""
    _assert_same_decisions([_request(value) for value in _EDGES], None)
    nan, null = _request({"a": math.nan}), _request({"a": None})
    assert match_key("POST", URL, body_parts_of(nan.body), None) != match_key(
        "POST", URL, body_parts_of(null.body), None
    )
    lone = _request({"a": "\ud800"})  # no key either way: the request cannot be spelled
    with pytest.raises(UnicodeEncodeError):
        request_key(canonical_request(lone))
    with pytest.raises(UnicodeEncodeError):
        match_key("POST", URL, body_parts_of(lone.body), None)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["ab+/", "ab-_", "QQ", "QQ==", "QQ=="]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["thoughtSignature", "data", "inlineData", "a", "é", "Z", "text"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_JSON, min_size=2, max_size=6))
def test_the_key_decides_as_the_canonical_request_on_generated_json(values: list[Any]) -> None:
    requests = [_request(v) for v in values]
    requests += [_request(_respelled(v)) for v in values]
    _assert_same_decisions(requests, None)


_BODIES = [
    b'{"a": 1}',
    b'{"a": 1, "a": 2, "b": 3}',
    b"[1e999]",
    b"[NaN]",
    b"[-Infinity]",
    b'["\\ud800"]',
    b'["\\ud83d\\ude00"]',
    b"[123456789012345678901234567890]",
    b"[-9223372036854775809]",
    b"[18446744073709551615]",
    b"[0.1, 1e-310, 1.7976931348623157e308, -0.0, 5e-324, -0]",
    b"\xef\xbb\xbf{}",
    b'{"a": "\xff"}',
    b'{"a": "\x00"}',
    b" {}",
    b"{" + b'"a":[' * 200 + b"]" * 200 + b"}",
    b"[" * 100 + b"]" * 100,
    b"{",
    b"plain text",
]


@pytest.mark.parametrize("data", _BODIES)
@pytest.mark.parametrize("content_type", ["application/json", None])
def test_a_body_reads_from_the_wire_as_the_slow_reading_would(
    data: bytes, content_type: str | None
) -> None:
    """orjson reads a body only where it reads it as ``exact_json`` does; the rest is
    decided by ``exact_json`` (text, bytes, or JSON)."""
    got = body_parts(data, content_type)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        assert got is not None and got[0] == "base64"
        return
    parsed, value = exact_json(text)
    json_like = content_type is not None or text[:1] in ("{", "[")
    if "\x00" in text:
        assert got is not None and got[0] == "base64"
    elif json_like and parsed:
        assert got is not None and got[0] == "json"
        assert repr(got[1]) == repr(value)  # the same values, types and key order
    else:
        assert got == ("text", text)


@settings(max_examples=150, deadline=None)
@given(_JSON)
def test_loads_reads_as_json_loads(value: Any) -> None:
    data = json.dumps(value).encode()
    assert repr(loads(data)) == repr(json.loads(data))
    assert body_parts(data, "application/json") == ("json", json.loads(data))


def test_the_canonical_bytes_are_json_dumps_sorted_where_spellings_agree() -> None:
    value = {"b": [1, "é", {"z": None, "a": True}], "a": '\u2028\x00 "\\'}
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == expected.encode()


def test_a_lazy_recording_is_keyed_from_its_lines_as_from_its_model(tmp_path: Path) -> None:
    """Every request of the bundled recordings and of a generated cassette: the key read from
    the file's lines equals the key of the parsed exchange's request."""
    generated = tmp_path / "generated.cassette.json"
    save_cassette(make_cassette([make_exchange(i) for i in range(5)]), generated)
    read = 0
    for path in [*RECORDINGS, generated]:
        eager = load_cassette(path).exchanges
        lazy = load_cassette(path, lazy=True).exchanges
        if not isinstance(lazy, LazyExchanges):
            continue
        for position, exchange in enumerate(eager):
            raw = raw_json_request(*lazy.mapped(position))
            request = exchange.request
            if raw is None:
                assert not isinstance(request.body, JsonBody)
                continue
            read += 1
            assert raw == (request.method, request.url, body_parts_of(request.body)[1])
    assert read > 20


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.parent.parent.name + "/" + p.name)
def test_a_lazy_and_an_eager_index_answer_every_request_alike(path: Path) -> None:
    eager = load_cassette(path).exchanges
    lazy_index = MatchIndex(load_cassette(path, lazy=True).exchanges)
    eager_index = MatchIndex(eager)
    for exchange in eager:
        from_lazy = lazy_index.lookup(exchange.request)
        from_eager = eager_index.lookup(exchange.request)
        assert from_eager is not None and from_lazy is not None
        assert from_lazy.id == from_eager.id


@pytest.mark.parametrize("wanted", range(5))
def test_a_recording_spelled_as_the_request_answers_it_and_no_bucket_mate_does(
    wanted: int,
) -> None:
    """Recordings that differ only in a setting's type or NaN share a bucket; each request
    gets its own recording from a fresh index (keyed on first use), never a mate's."""
    settings_ = [1, 1.0, True, None, math.nan]
    exchanges = [
        make_exchange(
            n, request_body={**gemini_request("same"), "generationConfig": {"temperature": t}}
        )
        for n, t in enumerate(settings_)
    ]
    request = exchanges[wanted].request
    found = MatchIndex(exchanges).lookup(request)
    assert found is not None and found.id == wanted


_PIECES = st.sampled_from(
    [
        b'"',
        b'":"',
        b'":{"data',
        b"thoughtSignature",
        b"thought_signature",
        b"thought_Signature",
        b"inlineData",
        b"image_data",
        b"videoBytes",
        b"sdkBlob",
        b"continuationToken",
        b"voice_sample_audio",
        b"data",
        b"ab+/",
        b"QQ",
        b"==",
        b"{",
        b"}",
        b",",
        b'\\"',
        b"x",
        b'"thoughtSignature":"ab+/"',
        b'"thought_signature":"QQ"',
        b'"inline_data":{"data":"QQ=="',
        b'"text":"\\"thoughtSignature\\":\\"QQ\\""',
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40).map(b"".join))
def test_bytes_fields_are_found_where_the_pattern_finds_them(data: bytes) -> None:
    """The bytes fields found with ``bytes.find`` (thought signatures alone) or the pattern
    (any other field) are the pattern's own matches, in any text."""
    got = [match.span() for match in _bytes_fields(data)]
    assert got == [match.span() for match in _BYTES_FIELD_UTF8.finditer(data)]


@settings(max_examples=150, deadline=None)
@given(_JSON)
def test_the_compact_spelling_is_json_dumps(value: Any) -> None:
    assert compact_json(value) == json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
