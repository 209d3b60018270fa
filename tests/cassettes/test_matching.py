"""Matching: canonical request keys, the FIFO hash index, and the nearest recording."""

from __future__ import annotations

import base64
import json
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cassettes._cassette import JsonBody, RecordedRequest, TextBody, load_cassette
from cassettes._cassette_writer import save_cassette
from cassettes._errors import InputError
from cassettes._file_names import side_index_file
from cassettes._matching import MatchIndex, MatchRules, canonical_request, request_key
from tests.cassettes.genai_requests import FAKE_KEY, SIGNATURE, captured, exchange_for
from tests.factories import (
    gemini_request,
    gemini_response,
    make_cassette,
    make_exchange,
    reversed_keys,
)

GEMINI = "https://generativelanguage.googleapis.com"


def _request(
    url: str, body: Any = None, *, method: str = "POST", **headers: str
) -> RecordedRequest:
    return RecordedRequest(
        method=method,
        url=url,
        headers=dict(headers),
        body=JsonBody(value=body) if body is not None else None,
    )


def _with_body(request: RecordedRequest, body: Any) -> RecordedRequest:
    return request.model_copy(update={"body": JsonBody(value=body)})


def _body(name: str) -> Any:
    """A fresh copy of a captured request body, safe to modify."""
    body = captured()[name].body
    assert isinstance(body, JsonBody)
    return json.loads(json.dumps(body.value))


def _key(request: RecordedRequest, rules: MatchRules | None = None) -> str:
    return request_key(canonical_request(request, rules))


# --- canonical form ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "path"),
    [
        pytest.param(
            f"{GEMINI}/v1beta/models/m:generateContent",
            "/{v}/models/m:generateContent",
            id="v1beta",
        ),
        pytest.param(
            f"{GEMINI}/v1/models/m:generateContent", "/{v}/models/m:generateContent", id="v1"
        ),
        pytest.param(
            f"{GEMINI}/v1alpha/models/m:countTokens", "/{v}/models/m:countTokens", id="v1alpha"
        ),
        pytest.param(
            "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/p/locations/l/"
            "publishers/google/models/m:generateContent",
            "/{v}/projects/p/locations/l/publishers/google/models/m:generateContent",
            id="vertex-v1beta1",
        ),
        pytest.param(
            "http://127.0.0.1:8080/team/gemini/v1beta/models/m:generateContent",
            "/team/gemini/{v}/models/m:generateContent",
            id="base-url-prefix-kept",
        ),
        pytest.param("http://127.0.0.1:8080/healthz", "/healthz", id="unversioned"),
    ],
)
def test_version_segment_is_normalised(url: str, path: str) -> None:
    assert canonical_request(_request(url)).path == path


def test_query_is_sorted_and_key_dropped() -> None:
    canonical = canonical_request(_request(f"{GEMINI}/v1/m?key={FAKE_KEY}&z=1&alt=sse"))
    assert canonical.query == (("alt", "sse"), ("z", "1"))


def test_every_credential_named_parameter_is_dropped_as_redaction_drops_it() -> None:
    """A tool call recorded without its apikey= still matches the call that sends it."""
    url = "https://api.example.com/rates?apikey=FAKE-0123456789&access_token=FAKE-9876543210"
    canonical = canonical_request(_request(url + "&to=GBP&pageToken=p2&author=Tolkien"))
    assert canonical.query == (("author", "Tolkien"), ("pageToken", "p2"), ("to", "GBP"))


def test_canonical_body_is_sorted_compact_json() -> None:
    canonical = canonical_request(
        _request(f"{GEMINI}/v1/m", {"b": [1, {"y": 2, "x": 1}], "a": "é"})
    )
    assert canonical.body_text == '{"a":"é","b":[1,{"x":1,"y":2}]}'
    assert canonical.body == {"a": "é", "b": [1, {"x": 1, "y": 2}]}


# --- keys: what must and must not change them --------------------------------------------


def _same(name: str, change: Any) -> tuple[RecordedRequest, RecordedRequest]:
    original = captured()[name]
    return original, change(original)


def _swap_version(request: RecordedRequest) -> RecordedRequest:
    return request.model_copy(update={"url": request.url.replace("/v1beta/", "/v1/")})


def _add_key_param(request: RecordedRequest) -> RecordedRequest:
    separator = "&" if "?" in request.url else "?"
    return request.model_copy(update={"url": f"{request.url}{separator}key={FAKE_KEY}"})


def _other_headers(request: RecordedRequest) -> RecordedRequest:
    return request.model_copy(update={"headers": {"user-agent": "aiohttp", "connection": "close"}})


def _key_order(request: RecordedRequest) -> RecordedRequest:
    assert isinstance(request.body, JsonBody)
    return _with_body(request, reversed_keys(request.body.value))


def _standard_signature(request: RecordedRequest) -> RecordedRequest:
    body = _body("second_turn")
    part = body["contents"][1]["parts"][0]
    assert part["thoughtSignature"] == base64.urlsafe_b64encode(SIGNATURE).decode()
    part["thoughtSignature"] = base64.b64encode(SIGNATURE).decode()
    assert "+" in part["thoughtSignature"] or "/" in part["thoughtSignature"]
    return _with_body(request, body)


def _unpadded_signature(request: RecordedRequest) -> RecordedRequest:
    body = _body("second_turn")
    part = body["contents"][1]["parts"][0]
    assert part["thoughtSignature"].endswith("=")
    part["thoughtSignature"] = part["thoughtSignature"].rstrip("=")
    return _with_body(request, body)


@pytest.mark.parametrize(
    ("name", "change"),
    [
        pytest.param("first_turn", _swap_version, id="v1beta-vs-v1"),
        pytest.param("stream", _add_key_param, id="key-query-param"),
        pytest.param("first_turn", _other_headers, id="headers-never-count"),
        pytest.param("second_turn", _key_order, id="key-order"),
        pytest.param("second_turn", _standard_signature, id="thought-signature-std-vs-urlsafe"),
        pytest.param("second_turn", _unpadded_signature, id="base64-padding"),
    ],
)
def test_equivalent_requests_share_a_key(name: str, change: Any) -> None:
    original, changed = _same(name, change)
    assert _key(original) == _key(changed)
    assert canonical_request(original) == canonical_request(changed)


def _different_model(request: RecordedRequest) -> RecordedRequest:
    return request.model_copy(
        update={"url": request.url.replace("gemini-2.0-flash", "gemini-2.5-pro")}
    )


def _different_text(request: RecordedRequest) -> RecordedRequest:
    body = _body("first_turn")
    body["contents"][0]["parts"][0]["text"] = "Weather in Lyon?"
    return _with_body(request, body)


def _different_signature(request: RecordedRequest) -> RecordedRequest:
    body = _body("second_turn")
    body["contents"][1]["parts"][0]["thoughtSignature"] = base64.urlsafe_b64encode(
        b"other"
    ).decode()
    return _with_body(request, body)


def _as_text(request: RecordedRequest) -> RecordedRequest:
    assert isinstance(request.body, JsonBody)
    return request.model_copy(update={"body": TextBody(text=json.dumps(request.body.value))})


@pytest.mark.parametrize(
    ("name", "change"),
    [
        pytest.param("first_turn", _different_model, id="model"),
        pytest.param("first_turn", _different_text, id="user-text"),
        pytest.param("second_turn", _different_signature, id="signature-bytes"),
        pytest.param("first_turn", _as_text, id="body-kind"),
        pytest.param("first_turn", lambda r: r.model_copy(update={"method": "PUT"}), id="method"),
    ],
)
def test_different_requests_have_different_keys(name: str, change: Any) -> None:
    original, changed = _same(name, change)
    assert _key(original) != _key(changed)


def test_stream_and_unary_differ() -> None:
    assert _key(captured()["first_turn"]) != _key(captured()["stream"])


@pytest.mark.parametrize(
    ("path", "change"),
    [
        pytest.param(
            "systemInstruction",
            lambda b: b["systemInstruction"]["parts"][0].update(text="Be grumpy."),
            id="system-instruction",
        ),
        pytest.param(
            "generationConfig.temperature",
            lambda b: b["generationConfig"].update(temperature=0.9),
            id="temperature",
        ),
        pytest.param(
            "contents[*].parts[*].thoughtSignature",
            lambda b: b["contents"][1]["parts"][0].update(thoughtSignature="b3RoZXI="),
            id="thought-signatures",
        ),
        pytest.param("tools", lambda b: b["tools"][0]["functionDeclarations"].pop(), id="tools"),
    ],
)
def test_ignore_paths_loosen_the_match(path: str, change: Any) -> None:
    original = captured()["second_turn"]
    body = _body("second_turn")
    change(body)
    changed = _with_body(original, body)
    assert _key(original) != _key(changed)
    rules = MatchRules(ignore_paths=(path,))
    assert _key(original, rules) == _key(changed, rules)


def test_malformed_ignore_path_is_an_input_error() -> None:
    with pytest.raises(InputError, match="malformed JSON path"):
        MatchRules(ignore_paths=("contents[x]",))


# --- MatchIndex --------------------------------------------------------------------------


def _recording(*names: str) -> list:
    return [
        exchange_for(captured()[name], id=i, text=f"answer {i}") for i, name in enumerate(names)
    ]


def test_fifo_then_last_repeats() -> None:
    index = MatchIndex(_recording("first_turn", "no_tools", "first_turn", "first_turn"))
    request = captured()["first_turn"]
    assert [index.lookup(request).id for _ in range(5)] == [0, 2, 3, 3, 3]  # type: ignore[union-attr]
    assert index.lookup(captured()["no_tools"]).id == 1  # type: ignore[union-attr]


def test_miss_returns_none_and_changes_nothing() -> None:
    index = MatchIndex(_recording("first_turn"))
    assert index.lookup(captured()["no_tools"]) is None
    assert index.used == frozenset()
    assert index.lookup(captured()["first_turn"]).id == 0  # type: ignore[union-attr]


def test_equivalent_request_hits_a_v1beta_recording() -> None:
    index = MatchIndex(_recording("second_turn"))
    request = _standard_signature(_swap_version(_add_key_param(captured()["second_turn"])))
    assert index.lookup(request) is not None


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("systemInstruction", id="outside-contents"),
        pytest.param("contents[*].parts[*].thoughtSignature", id="inside-contents"),
        pytest.param("contents", id="all-contents"),
        pytest.param("*.temperature", id="leading-wildcard"),
    ],
)
def test_index_honours_ignore_paths(path: str) -> None:
    def change(body: Any) -> None:
        body["systemInstruction"]["parts"][0]["text"] = "Be grumpy."
        body["contents"][1]["parts"][0]["thoughtSignature"] = "b3RoZXI="
        body["contents"].append({"role": "user", "parts": [{"text": "and?"}]})
        body["generationConfig"]["temperature"] = 0.9

    body = _body("second_turn")
    change(body)
    changed = _with_body(captured()["second_turn"], body)
    recorded = _recording("first_turn", "second_turn")
    # One rule alone is never enough: the other changes still differ.
    loose = MatchIndex(recorded, MatchRules(ignore_paths=(path,)))
    assert loose.lookup(changed) is None
    everything = ("systemInstruction", "generationConfig.temperature", path)
    if path != "contents":
        everything += ("contents[*].parts[*].thoughtSignature", "contents[3]")
    index = MatchIndex(recorded, MatchRules(ignore_paths=everything))
    found = index.lookup(changed)
    # Without contents both recordings are the same request: FIFO serves the first.
    assert found is not None and found.id == (0 if path == "contents" else 1)


def test_requests_sharing_history_and_last_turn_stay_apart() -> None:
    """Same route and last turn, different system instruction: two queues, not one."""
    grumpy = _body("first_turn")
    grumpy["systemInstruction"]["parts"][0]["text"] = "Be grumpy."
    grumpy_request = _with_body(captured()["first_turn"], grumpy)
    index = MatchIndex(
        [
            exchange_for(captured()["first_turn"], id=0),
            exchange_for(grumpy_request, id=1),
            exchange_for(captured()["first_turn"], id=2),
        ]
    )
    assert index.lookup(grumpy_request).id == 1  # type: ignore[union-attr]
    assert index.lookup(captured()["first_turn"]).id == 0  # type: ignore[union-attr]
    assert index.lookup(grumpy_request).id == 1  # type: ignore[union-attr]
    assert index.lookup(captured()["first_turn"]).id == 2  # type: ignore[union-attr]


def test_used_and_unused() -> None:
    index = MatchIndex(_recording("first_turn", "second_turn", "no_tools"))
    index.lookup(captured()["second_turn"])
    index.lookup(captured()["second_turn"])
    assert index.used == frozenset({1})
    assert [e.id for e in index.unused()] == [0, 2]
    assert len(index) == 3


def test_concurrent_lookups_hand_out_each_recording_once() -> None:
    copies = 200
    index = MatchIndex(_recording(*["first_turn"] * copies))
    request = captured()["first_turn"]
    got: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(copies // 8):
            exchange = index.lookup(request)
            assert exchange is not None
            with lock:
                got.append(exchange.id)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got) == list(range(copies))
    assert index.unused() == []


@pytest.mark.parametrize(
    ("recorded", "change", "expected"),
    [
        pytest.param(
            ("no_tools", "first_turn", "stream"),
            lambda: _different_text(captured()["first_turn"]),
            1,
            id="same-route-preferred",
        ),
        pytest.param(
            ("first_turn", "second_turn"),
            lambda: _with_body(
                captured()["second_turn"],
                {**_body("second_turn"), "contents": _body("second_turn")["contents"][:2]},
            ),
            1,
            id="longest-common-history",
        ),
        pytest.param(
            ("no_tools", "first_turn"),
            lambda: _different_model(captured()["first_turn"]),
            1,
            id="other-model-falls-back-to-most-similar",
        ),
    ],
)
def test_nearest(recorded: tuple[str, ...], change: Any, expected: int) -> None:
    index = MatchIndex(_recording(*recorded))
    request = change()
    assert index.lookup(request) is None
    nearest = index.nearest(request)
    assert nearest is not None and nearest.id == expected


def test_nearest_prefers_recordings_not_yet_played() -> None:
    index = MatchIndex(_recording("first_turn", "first_turn"))
    index.lookup(captured()["first_turn"])
    nearest = index.nearest(_different_text(captured()["first_turn"]))
    assert nearest is not None and nearest.id == 1


def test_nearest_of_an_empty_index() -> None:
    assert MatchIndex([]).nearest(captured()["first_turn"]) is None


# --- properties --------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


def _shuffled(value: Any, data: st.DataObject) -> Any:
    if isinstance(value, dict):
        keys = data.draw(st.permutations(list(value)))
        return {k: _shuffled(value[k], data) for k in keys}
    if isinstance(value, list):
        return [_shuffled(v, data) for v in value]
    return value


@settings(max_examples=150, deadline=None)
@given(body=st.dictionaries(st.text(max_size=8), json_values, max_size=6), data=st.data())
def test_key_order_never_matters(body: dict[str, Any], data: st.DataObject) -> None:
    url = f"{GEMINI}/v1beta/models/m:generateContent"
    assert _key(_request(url, body)) == _key(_request(url, _shuffled(body, data)))


@settings(max_examples=150, deadline=None)
@given(raw=st.binary(max_size=64), field=st.sampled_from(["thoughtSignature", "inlineData"]))
def test_urlsafe_and_standard_base64_match(raw: bytes, field: str) -> None:
    def body(encoded: str) -> dict[str, Any]:
        if field == "inlineData":
            part = {"inlineData": {"mimeType": "image/png", "data": encoded}}
        else:
            part = {"text": "t", "thoughtSignature": encoded}
        return {"contents": [{"role": "model", "parts": [part]}]}

    url = f"{GEMINI}/v1beta/models/m:generateContent"
    urlsafe = base64.urlsafe_b64encode(raw).decode()
    standard = base64.b64encode(raw).decode()
    assert _key(_request(url, body(urlsafe))) == _key(_request(url, body(standard)))
    assert _key(_request(url, body(urlsafe))) == _key(_request(url, body(urlsafe.rstrip("="))))


@settings(max_examples=100, deadline=None)
@given(sequence=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=30))
def test_replaying_the_recorded_order_returns_every_recording_in_order(sequence: list[int]) -> None:
    """Identical requests get their responses in recording order (FIFO per key)."""
    url = f"{GEMINI}/v1beta/models/m:generateContent"
    requests = [_request(url, {"contents": [{"parts": [{"text": f"q{n}"}]}]}) for n in sequence]
    index = MatchIndex([exchange_for(r, id=i) for i, r in enumerate(requests)])
    replayed = [index.lookup(r) for r in requests]
    assert [e.id for e in replayed if e is not None] == list(range(len(sequence)))
    assert index.unused() == []


# --- concurrent conversations that open alike ---------------------------


def _conversation(opening: str, first: str, follow_up: str, second: str, start: int) -> list[Any]:
    return [
        make_exchange(
            start, request_body=gemini_request(opening), response_body=gemini_response(first)
        ),
        make_exchange(
            start + 1,
            request_body=gemini_request([opening, first, follow_up]),
            response_body=gemini_response(second),
        ),
    ]


def _text(exchange: Any) -> str:
    return str(exchange.response.body.value["candidates"][0]["content"]["parts"][0]["text"])


def test_a_conversation_given_a_siblings_first_answer_follows_its_own_branch() -> None:
    """A and B open with the same turn; B's first request arrives first and gets A's answer.
    B's next request carries that answer, yet its own user turn decides: B's recording."""
    index = MatchIndex(
        _conversation("hi", "Hello A", "Paris?", "Paris is sunny", 0)
        + _conversation("hi", "Hello B", "Rome?", "Rome is rainy", 2)
    )
    opening = make_exchange(0, request_body=gemini_request("hi")).request
    b_first = index.lookup(opening)
    a_first = index.lookup(opening)
    assert (_text(b_first), _text(a_first)) == ("Hello A", "Hello B")  # FIFO: swapped
    b_second = make_exchange(0, request_body=gemini_request(["hi", "Hello A", "Rome?"])).request
    a_second = make_exchange(0, request_body=gemini_request(["hi", "Hello B", "Paris?"])).request
    assert _text(index.lookup(b_second)) == "Rome is rainy"
    assert _text(index.lookup(a_second)) == "Paris is sunny"
    assert index.unused() == []


def test_the_branch_fallback_never_hides_a_changed_user_turn_or_tool_result() -> None:
    index = MatchIndex(_conversation("hi", "Hello A", "Paris?", "Paris is sunny", 0))
    changed = make_exchange(0, request_body=gemini_request(["hi", "Hello Z", "Lyon?"])).request
    assert index.lookup(changed) is None
    no_history = make_exchange(0, request_body=gemini_request("Paris?")).request
    assert index.lookup(no_history) is None


def _partial(id: int, body: dict[str, Any], not_compared: list[str]) -> Any:
    return make_exchange(id, request_body=body).model_copy(update={"not_compared": not_compared})


@pytest.mark.parametrize("lazy", [False, True], ids=["in-memory", "lazy-file"])
def test_a_partial_recording_compares_only_what_it_holds(tmp_path, lazy):
    """An exchange rebuilt from a trace names the request parts it lacks; a request that
    differs only there matches it, one that differs elsewhere does not, and a whole
    recording beside it is still compared in full."""
    from cassettes._cassette import TraceImport

    traced = gemini_request("Weather in Rome?", system_instruction="Be brief.")
    whole = gemini_request("Weather in Paris?", generation_config={"temperature": 0.1})
    cassette = make_cassette(
        [_partial(0, traced, ["generationConfig"]), make_exchange(1, request_body=whole)]
    ).model_copy(
        update={"trace": TraceImport(source="OTLP JSON", not_compared=["generationConfig"])}
    )
    exchanges: Any = cassette.exchanges
    if lazy:
        exchanges = load_cassette(save_cassette(cassette, tmp_path / "t.cassette.json"), lazy=True)
        exchanges = exchanges.exchanges
    index = MatchIndex(exchanges, MatchRules())
    url = make_exchange(0).request.url

    sent = {**traced, "generationConfig": {"temperature": 0.7, "responseSchema": {"x": 1}}}
    found = index.lookup(_request(url, sent))
    assert found is not None and found.id == 0
    assert index.lookup(_request(url, {**sent, "systemInstruction": None})) is None
    assert index.lookup(_request(url, {**whole, "generationConfig": {"temperature": 0.9}})) is None
    found = index.lookup(_request(url, whole))
    assert found is not None and found.id == 1


def test_a_partial_recording_keeps_the_rules_ignore_paths_too():
    traced = gemini_request("Hi", system_instruction="Be brief.")
    index = MatchIndex(
        [_partial(0, traced, ["generationConfig"])],
        MatchRules(ignore_paths=("systemInstruction",)),
    )
    url = make_exchange(0).request.url
    sent = {**traced, "systemInstruction": "other", "generationConfig": {"topK": 3}}
    assert index.lookup(_request(url, sent)) is not None


_TOOL_RESULT = {
    "parts": [{"functionResponse": {"name": "get_weather", "response": {"city": "Oslo"}}}],
    "role": "user",
}


def _same_tool_result(count: int) -> list[Any]:
    """``count`` conversations, each its own question, reaching the same turn with the same
    tool result: one bucket by turns and last turn."""
    return [
        make_exchange(
            n,
            request_body=gemini_request([f"Question {n}?", "Calling get_weather.", _TOOL_RESULT]),
            response_body=gemini_response(f"Answer {n}"),
        )
        for n in range(count)
    ]


@pytest.mark.parametrize(
    ("source", "narrowed"),
    [
        pytest.param("in-memory", True, id="in-memory"),
        pytest.param("side-index", True, id="lazy-with-side-index"),
        pytest.param("scanned", False, id="lazy-scanned"),
    ],
)
def test_a_bucket_is_narrowed_by_its_first_user_turn(
    tmp_path: Any, source: str, narrowed: bool
) -> None:
    """A request keys only the recordings of its own conversation (its first user turn,
    from the side index for a lazy cassette, whose bucket is split when a request first
    lands in it), not every conversation at the same turn with the same tool result. A
    cassette scanned without an index keys the bucket in order. Either way each request
    gets its own recording."""
    exchanges: Any = _same_tool_result(6)
    if source != "in-memory":
        path = save_cassette(make_cassette(exchanges), tmp_path / "same.cassette.json")
        if source == "scanned":
            side_index_file(path).unlink()
        exchanges = load_cassette(path, lazy=True).exchanges
    index = MatchIndex(exchanges)
    assert not index._split  # a lazy cassette's first user turns are not read to build it
    found = index.lookup(exchanges[4].request)
    assert found is not None and found.id == 4
    assert sum(index._resolved.values()) == (1 if narrowed else 5)
    assert len(index._split) == (1 if source == "side-index" else 0)  # split when first used
    for position in (0, 5, 2, 1, 3):
        hit = index.lookup(exchanges[position].request)
        assert hit is not None and hit.id == position
    assert index.unused() == []
