"""Matching from the wire's bytes: the side index's digest of each JSON request as
google-genai sends it, and the match index finding a request by it exactly as it finds
the request by its parsed body."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassettes._cassette import Exchange, JsonBody, LazyExchanges, TextBody, load_cassette
from cassettes._cassette_writer import save_cassette
from cassettes._file_names import side_index_file
from cassettes._matching import MatchIndex, MatchRules, WireRequest
from cassettes._redaction import RedactionRules, redact_exchange
from cassettes._side_index import spans_of
from cassettes._wire_digest import NO_DIGEST, recorded_wire_digest, wire_digest
from tests.cassettes.genai_requests import FAKE_KEY
from tests.factories import make_cassette, make_exchange, reversed_keys

GEMINI = "https://generativelanguage.googleapis.com"
_URLS = (
    f"{GEMINI}/v1beta/models/m:generateContent",
    f"{GEMINI}/v1/models/m:generateContent",  # the same route as v1beta
    f"{GEMINI}/v1beta/models/m:streamGenerateContent?alt=sse",
)
_SIGNATURE = bytes(range(250, 256)) * 5  # its standard and URL-safe base64 differ
_TEXTS = (
    "Paris?",
    "Héllo 😀 wörld",
    "a, b: c",
    "a,b:c",
    'tab\there, a quote " and a backslash \\',
    "\x7f\u2028\x01",
    f"my key is {FAKE_KEY}",
    "my key is <redacted>",
)
_JSON_HEADERS = {"content-type": "application/json"}


def _body(text: str, turns: int, spelling: str, temperature: float, reordered: bool) -> Any:
    """A generate body: a user turn, optionally a function call with a thought signature
    (spelled ``urlsafe`` or ``standard``) and its response, and a temperature (``1`` and
    ``1.0`` are different requests to the matcher)."""
    contents: list[Any] = [{"parts": [{"text": text}], "role": "user"}]
    if turns:
        encode = base64.urlsafe_b64encode if spelling == "urlsafe" else base64.b64encode
        call = {"args": {"city": "Paris"}, "name": "get_weather"}
        signature = encode(_SIGNATURE).decode()
        contents.append({"parts": [{"functionCall": call, "thoughtSignature": signature}]})
        contents[-1]["role"] = "model"
        answer = {"functionResponse": {"name": "get_weather", "response": {"c": 21}}}
        contents.append({"parts": [answer], "role": "user"})
    body = {"contents": contents, "generationConfig": {"temperature": temperature}}
    return reversed_keys(body) if reordered else body


_REQUESTS = st.tuples(
    st.sampled_from(_URLS),
    st.builds(
        _body,
        st.sampled_from(_TEXTS),
        st.integers(0, 1),
        st.sampled_from(["urlsafe", "standard"]),
        st.sampled_from([0.2, 1, 1.0]),
        st.booleans(),
    ),
)


def _recording(position: int, url: str, body: Any) -> Exchange:
    exchange = make_exchange(position, request_body=body)
    request = exchange.request.model_copy(update={"url": url})
    recorded = exchange.model_copy(update={"request": request})
    return redact_exchange(recorded, RedactionRules(), known_secrets={FAKE_KEY})


def _saved(folder: Path, recordings: list[tuple[str, Any]]) -> Path:
    exchanges = [_recording(i, url, body) for i, (url, body) in enumerate(recordings)]
    return save_cassette(make_cassette(exchanges), folder / "wire.cassette.json")


def _lazy(path: Path) -> LazyExchanges:
    exchanges = load_cassette(path, lazy=True).exchanges
    assert isinstance(exchanges, LazyExchanges)
    return exchanges


def _id(exchange: Exchange | None) -> int | None:
    return None if exchange is None else exchange.id


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pool=st.lists(_REQUESTS, min_size=1, max_size=4),
    recorded=st.lists(st.integers(0, 3), min_size=1, max_size=10),
    replayed=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(["wire", "respelled", "model"])),
        min_size=1,
        max_size=14,
    ),
)
def test_matching_by_the_wire_answers_as_matching_the_parsed_body(
    tmp_path_factory: pytest.TempPathFactory,
    pool: list[tuple[str, Any]],
    recorded: list[int],
    replayed: list[tuple[int, str]],
) -> None:
    """Recordings drawn from a few requests (so that several are alike), redacted as the
    recorder stores them, replayed by requests of every spelling (keys reordered, the
    signature in either base64, another API version, a stream, a secret or its mask):
    each request gets the recording the parsed-body road gives it, in the same order,
    whether it comes by its bytes as recorded, by its bytes spelled otherwise (its keys
    reordered), or by its model."""
    recordings = [pool[i % len(pool)] for i in recorded]
    path = _saved(tmp_path_factory.mktemp("wire"), recordings)
    full, fast = MatchIndex(_lazy(path)), MatchIndex(_lazy(path))
    for choice, road in replayed:
        url, body = pool[choice % len(pool)]
        sent = reversed_keys(body) if road == "respelled" else body
        request = WireRequest("POST", url, _JSON_HEADERS, json.dumps(sent).encode())
        expected = full.lookup(request.recorded())
        got = fast.lookup(request.recorded()) if road == "model" else fast.lookup_wire(request)
        assert _id(got) == _id(expected), (url, body, road)
    assert fast.used == full.used


def test_a_request_matched_by_its_bytes_is_not_parsed(tmp_path: Path) -> None:
    """A request whose bytes are a recording's as google-genai sends it is found by their
    digest: its body is never parsed, and only the exchange answering it is."""
    recordings = [(_URLS[0], _body(text, 1, "urlsafe", 0.2, False)) for text in _TEXTS[:4]]
    exchanges = _lazy(_saved(tmp_path, recordings))
    index = MatchIndex(exchanges)
    request = WireRequest("POST", _URLS[0], _JSON_HEADERS, json.dumps(recordings[2][1]).encode())
    found = index.lookup_wire(request)
    assert _id(found) == 2
    assert not request.parsed
    assert exchanges.parses() == 1


def test_a_request_spelled_otherwise_is_matched_by_its_parsed_body(tmp_path: Path) -> None:
    body = _body("Paris?", 1, "urlsafe", 0.2, False)
    index = MatchIndex(_lazy(_saved(tmp_path, [(_URLS[0], body)])))
    request = WireRequest("POST", _URLS[0], _JSON_HEADERS, json.dumps(reversed_keys(body)).encode())
    assert _id(index.lookup_wire(request)) == 0
    assert request.parsed


def test_a_cassette_edited_by_hand_is_matched_by_its_parsed_bodies(tmp_path: Path) -> None:
    """The side index of a cassette edited since it was written is not read: a request
    holding the body as it was before the edit misses, one holding it as edited hits."""
    before = _body("Paris?", 0, "urlsafe", 0.2, False)
    path = _saved(tmp_path, [(_URLS[0], before)])
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"Paris?"', '"Lyon?"'), encoding="utf-8")
    assert side_index_file(path).exists()  # left as it was: it no longer checks out
    exchanges = _lazy(path)
    assert list(exchanges.wires()) == [None]
    index = MatchIndex(exchanges)
    stale = WireRequest("POST", _URLS[0], _JSON_HEADERS, json.dumps(before).encode())
    assert index.lookup_wire(stale) is None
    edited = json.dumps(_body("Lyon?", 0, "urlsafe", 0.2, False)).encode()
    assert _id(index.lookup_wire(WireRequest("POST", _URLS[0], _JSON_HEADERS, edited))) == 0


def _digests(tmp_path: Path, bodies: list[Any]) -> list[bytes]:
    exchanges = [
        make_exchange(i).model_copy(
            update={"request": make_exchange(i).request.model_copy(update={"body": body})}
        )
        for i, body in enumerate(bodies)
    ]
    data = save_cassette(make_cassette(exchanges), tmp_path / "d.cassette.json").read_bytes()
    found = spans_of(data)
    assert found is not None
    return [recorded_wire_digest(data, start, end) for start, end in found[2]]


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"contents": [{"parts": [{"text": t}]}]}, id=f"text-{i}")
        for i, t in enumerate(_TEXTS)
        if FAKE_KEY not in t  # its run of zeros reads as a long integer: no digest
    ]
    + [
        pytest.param({"a": [], "b": {}, "c": [{}], "d": [[1, 2], {"e": None}]}, id="empty"),
        pytest.param({"f": [1e-05, 1.5e300, -0.0, 0.1, 1, True, False]}, id="numbers"),
        pytest.param([{"x": "y"}, 2], id="array"),
        pytest.param({"👍": "key outside the BMP", "é": 1}, id="unicode-keys"),
    ],
)
def test_the_digest_is_that_of_the_body_as_google_genai_sends_it(
    tmp_path: Path, value: Any
) -> None:
    (digest,) = _digests(tmp_path, [JsonBody(value=value)])
    assert digest == wire_digest(json.dumps(value).encode())


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(JsonBody(value="a JSON string"), id="scalar-string"),
        pytest.param(JsonBody(value=12), id="scalar-number"),
        pytest.param(JsonBody(value={"n": 12345678901234567890123}), id="long-integer"),
        pytest.param(JsonBody(value={"text": "0" * 19}), id="holds-19-digits"),
        pytest.param(JsonBody(value={"text": "NaN"}), id="holds-NaN"),
        pytest.param(JsonBody(value={"text": "Infinity"}), id="holds-Infinity"),
        pytest.param(TextBody(text='{"not": "parsed"}'), id="text-body"),
    ],
)
def test_no_digest_where_those_bytes_could_be_read_otherwise(tmp_path: Path, body: Any) -> None:
    """A scalar's kind depends on the content type, a long integer or ``NaN`` is not read
    by orjson: such a body is matched by its parsed body (a string holding ``NaN`` only
    costs its digest)."""
    assert _digests(tmp_path, [body]) == [NO_DIGEST]


def test_a_deeply_nested_body_has_a_digest_only_while_it_is_stored_parsed(tmp_path: Path) -> None:
    deep: Any = "x"
    for _ in range(140):
        deep = [deep]
    digests = _digests(tmp_path, [JsonBody(value={"a": deep, "b": [[1]] * 20})])
    assert digests == [wire_digest(json.dumps({"a": deep, "b": [[1]] * 20}).encode())]


def test_an_index_without_digests_matches_by_parsed_bodies(tmp_path: Path) -> None:
    """A side index written without the digest column (an older rec) is read, and every
    request is matched by its parsed body."""
    body = _body("Paris?", 0, "urlsafe", 0.2, False)
    path = _saved(tmp_path, [(_URLS[0], body)])
    index_file = side_index_file(path)
    document = json.loads(index_file.read_text(encoding="utf-8"))
    del document["wires"]
    index_file.write_text(json.dumps(document), encoding="utf-8")
    exchanges = _lazy(path)
    assert exchanges.first_users_known() and list(exchanges.wires()) == [None]
    request = WireRequest("POST", _URLS[0], _JSON_HEADERS, json.dumps(body).encode())
    assert _id(MatchIndex(exchanges, MatchRules()).lookup_wire(request)) == 0
    assert request.parsed
