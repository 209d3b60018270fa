"""Redaction: credentials never reach a cassette, a log line or an error message."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from cassettes._cassette import (
    BinaryBody,
    Cassette,
    Exchange,
    JsonBody,
    RecordedRequest,
    RecordedResponse,
    SseBody,
    SseEvent,
    TextBody,
    dump_cassette,
)
from cassettes._errors import InputError, SecretFound
from cassettes._redaction import (
    REDACTED,
    RedactionRules,
    SecretHit,
    credentials_in,
    ensure_no_secrets,
    exchange_clear_at_a_glance,
    redact_exchange,
    scan_for_secrets,
)
from cassettes._secret_shapes import (
    _SHAPE,
    CREDENTIALS_HEADER,
    credentials_header_value,
    mask,
    shape_matches,
    url_credentials,
    without_credentials,
)
from tests.cassettes.genai_requests import FAKE_KEY, captured, exchange_for
from tests.secret_corpus import SHAPES, b64, secret_part

TOKEN = "ya29.a0AfB_fake-oauth-token.0000"
COOKIE_VALUE = "session-cookie-value-123"


def _exchange(
    *,
    url: str = "https://generativelanguage.googleapis.com/v1beta/models/m:generateContent",
    headers: dict[str, str] | None = None,
    body: object = None,
    response_headers: dict[str, str] | None = None,
    response_body: object = None,
) -> Exchange:
    return Exchange(
        id=0,
        recorded_at="2026-01-01T00:00:00+00:00",
        request=RecordedRequest(method="POST", url=url, headers=headers or {}, body=body),
        response=RecordedResponse(status=200, headers=response_headers or {}, body=response_body),
    )


# --- credentials_in ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "url", "expected"),
    [
        pytest.param(
            {"x-goog-api-key": FAKE_KEY}, "https://h/v1/x", {FAKE_KEY}, id="api-key-header"
        ),
        pytest.param({"X-Goog-Api-Key": FAKE_KEY}, "https://h/v1/x", {FAKE_KEY}, id="header-case"),
        pytest.param({}, f"https://h/v1/x?alt=sse&key={FAKE_KEY}", {FAKE_KEY}, id="key-query"),
        pytest.param({"authorization": f"Bearer {TOKEN}"}, "https://h/x", {TOKEN}, id="bearer"),
        pytest.param(
            {"proxy-authorization": "Basic dXNlcjpwYXNzd29yZA=="},
            "https://h/x",
            {"dXNlcjpwYXNzd29yZA==", "user:password", "password"},
            id="proxy-basic",
        ),
        pytest.param(
            {"cookie": f"a={COOKIE_VALUE}; theme=dark-mode-on"},
            "https://h/x",
            {COOKIE_VALUE, "dark-mode-on"},
            id="cookies",
        ),
        pytest.param({"cookie": "a=1; b=short"}, "https://h/x", set(), id="short-values-ignored"),
        pytest.param(
            {"user-agent": "google-genai-sdk/2.34.0"}, "https://h/x?alt=sse", set(), id="none"
        ),
        pytest.param(
            {CREDENTIALS_HEADER: credentials_header_value([TOKEN, "short"])},
            "https://h/x",
            {TOKEN},
            id="told-by-an-instrumented-process",
        ),
        pytest.param(
            {CREDENTIALS_HEADER: "not base64 JSON"}, "https://h/x", set(), id="told-badly"
        ),
    ],
)
def test_credentials_in(headers: dict[str, str], url: str, expected: set[str]) -> None:
    assert credentials_in(headers, url) == expected


# --- redact_exchange ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        pytest.param(name, id=name)
        for name in (
            "x-goog-api-key",
            "Authorization",
            "cookie",
            "x-goog-user-project",
            "Proxy-Authorization",
        )
    ],
)
def test_default_request_headers_are_dropped(header: str) -> None:
    exchange = _exchange(
        headers={header: "value-of-the-header", "content-type": "application/json"}
    )
    redacted = redact_exchange(exchange, RedactionRules())
    assert redacted.request.headers == {"content-type": "application/json"}


def test_set_cookie_and_extra_headers_are_dropped_from_responses() -> None:
    exchange = _exchange(
        headers={"x-tenant-token": "tenant-secret", "accept": "*/*"},
        response_headers={"Set-Cookie": "sid=abc", "X-Tenant-Token": "t", "content-type": "a/b"},
    )
    redacted = redact_exchange(exchange, RedactionRules(headers=frozenset({"X-Tenant-Token"})))
    assert redacted.request.headers == {"accept": "*/*"}
    assert redacted.response.headers == {"content-type": "a/b"}


@pytest.mark.parametrize(
    ("url", "rules", "expected"),
    [
        pytest.param(
            f"https://h/v1beta/m:streamGenerateContent?alt=sse&key={FAKE_KEY}",
            RedactionRules(),
            "https://h/v1beta/m:streamGenerateContent?alt=sse",
            id="key-removed-alt-kept",
        ),
        pytest.param(
            f"https://h/v1/m:generateContent?key={FAKE_KEY}",
            RedactionRules(),
            "https://h/v1/m:generateContent",
            id="only-key",
        ),
        pytest.param(
            "https://h/v1/m?token=abc&alt=sse",
            RedactionRules(query_params=frozenset({"token"})),
            "https://h/v1/m?alt=sse",
            id="extra-param",
        ),
        pytest.param(
            "https://h/v1/m?a=1&b=2", RedactionRules(), "https://h/v1/m?a=1&b=2", id="untouched"
        ),
    ],
)
def test_query_parameters(url: str, rules: RedactionRules, expected: str) -> None:
    assert redact_exchange(_exchange(url=url), rules).request.url == expected


def test_json_paths_in_request_response_and_stream_events() -> None:
    rules = RedactionRules(
        json_paths=("contents[*].parts[*].text", "candidates[0].content.parts[*].text")
    )
    request_body = {"contents": [{"role": "user", "parts": [{"text": "my SSN"}, {"x": 1}]}]}
    answer = {"candidates": [{"content": {"parts": [{"text": "private"}]}}]}
    exchange = _exchange(
        body=JsonBody(value=request_body),
        response_body=SseBody(events=[SseEvent(offset_ms=1.0, data=answer)] * 2),
    )
    redacted = redact_exchange(exchange, rules)
    assert redacted.request.body == JsonBody(
        value={"contents": [{"role": "user", "parts": [{"text": REDACTED}, {"x": 1}]}]}
    )
    assert isinstance(redacted.response.body, SseBody)
    for event in redacted.response.body.events:
        assert event.data == {"candidates": [{"content": {"parts": [{"text": REDACTED}]}}]}
    # The original is untouched.
    assert request_body["contents"][0]["parts"][0]["text"] == "my SSN"
    assert exchange.request.body == JsonBody(value=request_body)


@pytest.mark.parametrize(
    ("request_body", "response_body"),
    [
        pytest.param(
            JsonBody(value={"contents": [{"parts": [{"text": f"my key is {FAKE_KEY}"}]}]}),
            JsonBody(value={"echo": {f"key {FAKE_KEY}": [FAKE_KEY]}}),
            id="json-strings-and-keys",
        ),
        pytest.param(
            TextBody(text=f"key={FAKE_KEY}"),
            TextBody(text=f"invalid key {FAKE_KEY}"),
            id="text",
        ),
        pytest.param(
            None,
            SseBody(
                complete=False,
                events=[
                    SseEvent(offset_ms=1.0, data={"text": FAKE_KEY}),
                    SseEvent(offset_ms=2.0, lines=["event: x", f"data: {FAKE_KEY}"]),
                ],
                tail=f'data: {{"partial": "{FAKE_KEY}',
            ),
            id="sse-data-lines-tail",
        ),
        pytest.param(
            BinaryBody(base64=base64.b64encode(b"\x00\x01" + FAKE_KEY.encode()).decode()),
            None,
            id="binary",
        ),
    ],
)
def test_known_secret_is_replaced_everywhere(request_body: object, response_body: object) -> None:
    exchange = _exchange(
        url=f"https://h/v1/m?alt=sse&key={FAKE_KEY}",
        headers={"x-goog-api-key": FAKE_KEY, "x-echo": f"prefix {FAKE_KEY}"},
        body=request_body,
        response_headers={"x-debug": FAKE_KEY},
        response_body=response_body,
    )
    secrets = credentials_in(exchange.request.headers, exchange.request.url)
    redacted = redact_exchange(exchange, RedactionRules(), known_secrets=secrets)
    document = json.dumps(redacted.model_dump(mode="json"))
    assert FAKE_KEY not in document
    assert base64.b64encode(FAKE_KEY.encode()).decode()[:20] not in document
    assert scan_for_secrets(redacted, known_secrets=secrets) == []


def test_real_sdk_request_redacts_clean() -> None:
    """A request the real google-genai client sent with a key: nothing of it survives."""
    request = captured()["second_turn"]
    assert request.headers["x-goog-api-key"] == FAKE_KEY
    exchange = exchange_for(request)
    secrets = credentials_in(request.headers, request.url)
    redacted = redact_exchange(exchange, RedactionRules(), known_secrets=secrets)
    cassette = Cassette(name="t", exchanges=[redacted])
    ensure_no_secrets(cassette, path="c.json", known_secrets=secrets)
    assert FAKE_KEY not in dump_cassette(cassette)
    # Only credentials went; the rest of the request is intact.
    assert redacted.request.body == request.body
    assert "user-agent" in redacted.request.headers


def test_malformed_json_path_is_an_input_error() -> None:
    with pytest.raises(InputError, match="malformed JSON path 'contents..parts'"):
        RedactionRules(json_paths=("contents..parts",))


# --- scanning ----------------------------------------------------------------------------

SIGNATURE_WITH_AIZA = base64.urlsafe_b64encode(b"\x01" * 30).decode() + "AIza" + "x" * 40


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        pytest.param({"a": FAKE_KEY}, [SecretHit("a", "Google API key")], id="bare-key"),
        pytest.param(
            {"url": f"https://h/v1/m?key={FAKE_KEY}&alt=sse"},
            [SecretHit("url", "Google API key")],
            id="key-in-url",
        ),
        pytest.param(
            {"h": {"authorization": f"Bearer {TOKEN}"}},
            [SecretHit("h.authorization", "bearer token")],  # the outer shape names it
            id="bearer-oauth",
        ),
        pytest.param(
            {"h": "Bearer abcdefghijklmnopqrstuvwxyz012345"},
            [SecretHit("h", "bearer token")],
            id="opaque-bearer",
        ),
        pytest.param({"t": "Bearer tokens expire after an hour."}, [], id="bearer-prose"),
        pytest.param({"t": f"Bearer {REDACTED}"}, [], id="bearer-redacted"),
        pytest.param({"thoughtSignature": SIGNATURE_WITH_AIZA}, [], id="aiza-inside-base64-blob"),
        pytest.param({"x": FAKE_KEY + "more"}, [], id="aiza-longer-than-a-key"),
        pytest.param(
            {"list": [{"ok": "fine"}, {"deep": [f"text {FAKE_KEY}"]}]},
            [SecretHit("list[1].deep[0]", "Google API key")],
            id="nested-path",
        ),
        pytest.param(
            {"headers": {"x-goog-api-key": FAKE_KEY}},
            [SecretHit("headers.x-goog-api-key", "Google API key")],
            id="header-with-dashes",
        ),
        pytest.param(
            {f"key {FAKE_KEY}": 1},
            [SecretHit("['key AIza…(redacted)']", "Google API key")],
            id="in-an-object-key-masked",
        ),
    ],
)
def test_scan_patterns(document: object, expected: list[SecretHit]) -> None:
    assert scan_for_secrets(document) == expected


def test_scan_names_places_in_a_cassette() -> None:
    events = [
        SseEvent(offset_ms=1.0, data={"candidates": []}),
        SseEvent(offset_ms=2.0, data={"candidates": [{"content": {"parts": [{"text": TOKEN}]}}]}),
    ]
    exchange = _exchange(response_body=SseBody(events=events))
    cassette = Cassette(name="t", exchanges=[exchange, exchange.model_copy(update={"id": 1})])
    hits = scan_for_secrets(cassette)
    assert [h.where for h in hits] == [
        "exchanges[0].response.body.events[1].data.candidates[0].content.parts[0].text",
        "exchanges[1].response.body.events[1].data.candidates[0].content.parts[0].text",
    ]
    assert {h.kind for h in hits} == {"OAuth access token"}


def test_scan_finds_known_credentials_of_any_shape() -> None:
    hits = scan_for_secrets({"a": f"x {COOKIE_VALUE} y"}, known_secrets={COOKIE_VALUE})
    assert hits == [SecretHit("a", "known credential")]


def test_ensure_no_secrets_names_file_place_and_fix_but_not_the_value() -> None:
    response = JsonBody(
        value={"candidates": [{"content": {"parts": [{"text": f"use {FAKE_KEY}"}]}}]}
    )
    cassette = Cassette(name="t", exchanges=[_exchange(response_body=response)])
    with pytest.raises(SecretFound) as caught:
        ensure_no_secrets(cassette, path="rec/out/cassette.json", known_secrets={FAKE_KEY})
    message = str(caught.value)
    assert FAKE_KEY not in message
    assert message.startswith(
        "rec/out/cassette.json:"
        "exchanges[0].response.body.value.candidates[0].content.parts[0].text: "
    )
    assert "Google API key" in message and "nothing was written" in message
    assert "--redact-path candidates[*].content.parts[*].text" in message
    assert (
        caught.value.where == "exchanges[0].response.body.value.candidates[0].content.parts[0].text"
    )


def test_ensure_no_secrets_suggests_a_header_rule() -> None:
    exchange = _exchange(headers={"x-custom-auth": FAKE_KEY})
    with pytest.raises(SecretFound, match="--redact-header x-custom-auth"):
        ensure_no_secrets(Cassette(name="t", exchanges=[exchange]), path="c.json")


def test_ensure_no_secrets_passes_clean_documents() -> None:
    ensure_no_secrets(Cassette(name="t", exchanges=[_exchange()]), path="c.json")


# --- mask --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        pytest.param(
            f"sent {FAKE_KEY} upstream", (), "sent AIza…(redacted) upstream", id="key-shape"
        ),
        pytest.param(
            f"GET /v1/m?key={FAKE_KEY}", (), "GET /v1/m?key=AIza…(redacted)", id="key-in-url"
        ),
        pytest.param(f"token {TOKEN} expired", (), "token ya29.…(redacted) expired", id="oauth"),
        pytest.param(
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
            (),
            "Authorization: Bearer …(redacted)",
            id="bearer",
        ),
        pytest.param(f"cookie {COOKIE_VALUE}", (COOKIE_VALUE,), "cookie …(redacted)", id="known"),
        pytest.param("nothing secret here", (COOKIE_VALUE,), "nothing secret here", id="clean"),
    ],
)
def test_mask(text: str, secrets: tuple[str, ...], expected: str) -> None:
    assert mask(text, secrets) == expected


# --- properties --------------------------------------------------------------------------

_KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
api_keys = st.text(alphabet=_KEY_CHARS, min_size=35, max_size=35).map(lambda s: "AIza" + s)
prose = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(key=api_keys, before=prose, after=prose)
def test_scan_and_mask_never_return_the_secret(key: str, before: str, after: str) -> None:
    document = {"contents": [{"parts": [{"text": f"{before} {key} {after}"}]}]}
    hits = scan_for_secrets(document, known_secrets={key})
    assert hits, "a key separated by spaces is always found"
    for hit in hits:
        assert key not in str(hit) and key not in repr(hit)
    assert key not in mask(f"{before} {key} {after}", {key})


@settings(max_examples=100, deadline=None)
@given(key=api_keys, text=prose)
def test_redaction_removes_every_known_occurrence(key: str, text: str) -> None:
    exchange = _exchange(
        url=f"https://h/v1/m?key={key}",
        headers={"x-goog-api-key": key},
        body=JsonBody(value={"t": f"{text}{key}{text}"}),
        response_body=TextBody(text=key + text),
    )
    secrets = credentials_in(exchange.request.headers, exchange.request.url)
    redacted = redact_exchange(exchange, RedactionRules(), known_secrets=secrets)
    assert key not in json.dumps(redacted.model_dump(mode="json"), ensure_ascii=False)


secrets_ = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=16, max_size=30)


@settings(max_examples=150, deadline=None)
@given(
    secret=secrets_, escape=st.lists(st.booleans(), min_size=30, max_size=30), upper=st.booleans()
)
def test_a_known_secret_with_any_characters_percent_encoded_is_found_masked_and_replaced(
    secret: str, escape: list[bool], upper: bool
) -> None:
    """``quote`` leaves a key of letters and digits as it is; a URL may escape any of its
    characters, in either case: each such spelling is the secret."""

    def spelled(i: int, ch: str) -> str:
        if not escape[i]:
            return ch
        hexed = "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
        return hexed if upper else hexed.lower()

    encoded = "".join(spelled(i, ch) for i, ch in enumerate(secret))
    text = f"before {encoded} after"
    assert scan_for_secrets({"t": text}, known_secrets={secret})
    assert encoded not in mask(text, {secret})
    exchange = _exchange(body=JsonBody(value={"t": text}), response_body=TextBody(text=text))
    redacted = redact_exchange(exchange, RedactionRules(), known_secrets={secret})
    assert encoded not in json.dumps(redacted.model_dump(mode="json"), ensure_ascii=False)


# --- every common credential shape, name and encoding -------------------


@pytest.mark.parametrize(("value"), [pytest.param(v, id=name) for name, v in SHAPES])
def test_every_corpus_shape_is_found_and_masked(value: str) -> None:
    text = f"my credential is {value} please keep it"
    assert scan_for_secrets({"contents": [{"parts": [{"text": text}]}]}), value
    assert secret_part(value) not in mask(text)


def test_corpus_holds_at_least_30_shapes() -> None:
    assert len({name for name, _ in SHAPES}) >= 30


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("the key to success is practice", id="prose-key"),
        pytest.param("ask for a task-management token of appreciation", id="prose-token"),
        pytest.param("https://api.example.com/books?author=Tolkien&keywords=ring", id="author"),
        pytest.param("https://api.example.com/list?pageToken=CiAKGjBpNDd2Nmp2Zml", id="page"),
        pytest.param("skim the sk-tree docs", id="short-sk"),
        pytest.param("https://example.com/path@v2?a=1", id="at-in-path"),
    ],
)
def test_ordinary_text_is_not_a_credential(text: str) -> None:
    assert scan_for_secrets({"t": text}) == []
    assert mask(text) == text


def test_credential_named_headers_and_parameters_are_dropped_and_remembered() -> None:
    secret = "FAKEtenant-secret-0123456789"
    exchange = _exchange(
        url=f"https://h/v1/rates?base=EUR&apikey={secret}&access_token={secret}x&pageToken=p2",
        headers={"X-Api-Key": secret, "x-auth-token": secret + "y", "accept": "*/*"},
        response_headers={"x-csrf-token": secret + "z", "content-type": "a/b"},
        response_body=TextBody(text=f"echo {secret}"),
    )
    known = credentials_in(exchange.request.headers, exchange.request.url)
    assert {secret, secret + "x", secret + "y"} <= known
    redacted = redact_exchange(exchange, RedactionRules(), known_secrets=known)
    assert redacted.request.url == "https://h/v1/rates?base=EUR&pageToken=p2"
    assert redacted.request.headers == {"accept": "*/*"}
    assert redacted.response.headers == {"content-type": "a/b"}
    assert secret not in dump_cassette(Cassette(name="t", exchanges=[redacted]))


def test_url_userinfo_is_removed_and_its_password_remembered() -> None:
    url = "https://deploy:FAKE%2Fpass-0123456789@gateway.example.com/v1beta/models/m:x"
    assert url_credentials(url) >= {"FAKE/pass-0123456789"}
    assert without_credentials(url) == "https://gateway.example.com/v1beta/models/m:x"
    redacted = redact_exchange(_exchange(url=url), RedactionRules())
    assert redacted.request.url == "https://gateway.example.com/v1beta/models/m:x"
    assert "FAKE" not in mask(f"proxy http://127.0.0.1:1 -> {url}")


def test_the_sessions_key_base64_encoded_in_inline_data_is_found() -> None:
    inline = {"inlineData": {"mimeType": "text/plain", "data": b64(f"GOOGLE_API_KEY={FAKE_KEY}\n")}}
    document = {"contents": [{"role": "user", "parts": [inline]}]}
    hits = scan_for_secrets(document, known_secrets={FAKE_KEY})
    assert {h.where for h in hits} == {"contents[0].parts[0].inlineData.data"}
    assert FAKE_KEY not in str(hits)
    assert scan_for_secrets(document) == []  # an unknown key in random bytes is not guessed
    assert mask(f"leaked {b64(FAKE_KEY)}", {FAKE_KEY}) == "leaked AIza…(redacted)"


def _stream(*texts: str) -> SseBody:
    return SseBody(
        events=[
            SseEvent(
                offset_ms=float(n),
                data={"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}}]},
            )
            for n, t in enumerate(texts)
        ]
    )


def test_a_key_split_across_stream_events_is_found_with_the_rule_that_removes_it() -> None:
    """Each event alone is clean; the stream as the client joins it is not."""
    exchange = _exchange(response_body=_stream("Your key is ", FAKE_KEY[:20], FAKE_KEY[20:], "."))
    for event in exchange.response.body.events:  # type: ignore[union-attr]
        assert scan_for_secrets(event.model_dump(mode="json")) == []
    with pytest.raises(SecretFound) as caught:
        ensure_no_secrets(exchange, path="journal")
    message = str(caught.value)
    assert "response.body.events[*].data.candidates[0].content.parts[0].text" in message
    assert "--redact-path candidates[*].content.parts[*].text" in message
    assert FAKE_KEY[:20] not in message and FAKE_KEY[20:] not in message
    rules = RedactionRules(json_paths=("candidates[*].content.parts[*].text",))
    ensure_no_secrets(redact_exchange(exchange, rules), path="journal")  # the fix works


def _verbatim_stream(*texts: str) -> SseBody:
    return SseBody(
        events=[
            SseEvent(offset_ms=float(n), lines=["event: delta", f'data: {{"text": "{t}"}}'])
            for n, t in enumerate(texts)
        ]
    )


@pytest.mark.parametrize(
    ("body", "found"),
    [
        pytest.param(
            _stream("Your key is ", FAKE_KEY[:20], FAKE_KEY[20:]), True, id="parsed-events"
        ),
        pytest.param(
            _verbatim_stream("key ", FAKE_KEY[:20], FAKE_KEY[20:]), True, id="verbatim-events"
        ),
        pytest.param(_stream("nothing ", "to see ", "here"), False, id="clean"),
    ],
)
def test_an_exchange_is_scanned_as_its_json_document_is(body: SseBody, found: bool) -> None:
    """The streams of an exchange are read off its events, not off a JSON copy: the
    places found are the ones a scan of its JSON document finds."""
    exchange = _exchange(response_body=body)
    hits = scan_for_secrets(exchange)
    assert hits == scan_for_secrets(exchange.model_dump(mode="json"))
    assert all(hit.where.startswith("response.body.events[*].") for hit in hits)
    assert bool(hits) is found


def test_a_known_key_in_inline_data_is_refused_not_replaced() -> None:
    """Replacing it would leave inline data that no longer decodes (and breaks the EvalSet)."""
    data = b64(f"GOOGLE_API_KEY={FAKE_KEY}\n")
    body = JsonBody(value={"contents": [{"parts": [{"inlineData": {"data": data}}]}]})
    redacted = redact_exchange(_exchange(body=body), RedactionRules(), known_secrets={FAKE_KEY})
    assert redacted.request.body == body
    with pytest.raises(SecretFound, match="known credential"):
        ensure_no_secrets(redacted, path="journal", known_secrets={FAKE_KEY})


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        pytest.param("X-Api-Key", True, id="header"),
        pytest.param("access_token", True, id="query"),
        pytest.param("GITHUB_TOKEN", True, id="env"),
        pytest.param("DB_PASS", True, id="env-pass-word"),
        pytest.param("pat", True, id="flag-pat"),
        pytest.param("pwd", True, id="flag-pwd"),
        pytest.param("pageToken", False, id="cursor"),
        pytest.param("path", False, id="path-is-not-pat"),
        pytest.param("author", False, id="author"),
    ],
)
def test_one_credential_name_rule_for_headers_flags_and_variables(name: str, secret: bool) -> None:
    """Items 2-4: HTTP redaction and MCP identities ask the same question the same way."""
    from cassettes._secret_shapes import is_secret_name

    assert is_secret_name(name) is secret


def test_an_mcp_servers_token_is_masked_everywhere_once_seen() -> None:
    """Items 2-4: a value rec saw given as a credential (an MCP server's `--token`) is in
    the process's registry, so the one masking walk masks it in any output, and in base64
    at every alignment."""
    from cassettes._mcp_identity import stdio_server_identity
    from cassettes._secret_shapes import mask, mask_json

    token = "FAKEmcp-token-registry-0123456789"
    server, secrets = stdio_server_identity("npx", ["srv", "--token", token], None, None)
    assert token in secrets and token not in server.model_dump_json()
    report = {"result": f"ran with {token}", token: [b64("user:" + token), b64("x" + token)]}
    assert token not in json.dumps(mask_json(report))
    assert b64("user:" + token)[8:30] not in json.dumps(mask_json(report))
    assert token not in mask(f"said {token} in a log line")


def test_a_long_string_is_scanned_as_the_whole_pattern_scans_it() -> None:
    """Above 64 KB the shapes are matched only from their literal hints (linear time):
    every corpus value, wherever it sits in a long string full of hint decoys, is found
    at the same places, as the same shapes, as the full alternation finds it."""
    decoys = "".join(
        f" {word}x" for word in ("AIza", "sk-", "://", "eyJ", "1//", "Bearer", "pi-key", "xox")
    )
    filler = base64.b64encode(bytes(range(256)) * 10).decode() + decoys + " "
    text = filler + f" {filler}".join(value for _, value in SHAPES) + f" {filler}"
    assert len(text) > 64 * 1024
    fast = [(m.span(), m.lastgroup) for m in shape_matches(text)]
    assert fast == [(m.span(), m.lastgroup) for m in _SHAPE.finditer(text)]
    assert len(fast) >= len(SHAPES) - 3  # the three query parameters are found elsewhere
    masked = mask(text)
    for _, value in SHAPES:
        assert secret_part(value) not in masked


@pytest.mark.parametrize(("shape", "secret"), SHAPES, ids=[name for name, _ in SHAPES])
def test_a_shape_beside_chance_hints_in_signatures_is_found(shape: str, secret: str) -> None:
    # Signatures that spell hint literals by chance do not hide a real shape elsewhere,
    # and a document with neither is clear.
    signature = "eyJ" + "xoxshpAKIA" * 3 + "=="
    parts = [{"text": "plain words", "thoughtSignature": signature}]
    clean = {"contents": [{"role": "model", "parts": parts}]}
    assert scan_for_secrets(clean) == []
    dirty = {"contents": [{"role": "model", "parts": [*parts, {"text": f"x {secret} y"}]}]}
    assert scan_for_secrets(dirty), shape


def test_a_whole_api_key_in_a_signature_is_still_found() -> None:
    body = {"parts": [{"text": "hi", "thoughtSignature": FAKE_KEY}]}
    assert [hit.kind for hit in scan_for_secrets(body)] == ["Google API key"]


def _places(secret: str) -> list[Exchange]:
    """``secret`` in each place of an exchange a recording keeps (where it is a valid value)."""
    half = len(secret) // 2
    signature = "eyJ" + "xoxshpAKIA" * 3 + "=="
    places: list[Callable[[], Exchange]] = [
        lambda: _exchange(
            body=JsonBody(value={"contents": [{"parts": [{"text": f"x {secret}"}]}]})
        ),
        lambda: _exchange(body=JsonBody(value={f"key {secret}": 1})),
        lambda: _exchange(body=TextBody(text=f"said {secret}")),
        lambda: _exchange(response_headers={"x-note": secret}),
        lambda: _exchange(url=f"https://api.example.com/v1?q=1&{secret}"),
        lambda: _exchange(response_body=_stream("it is ", secret[:half], secret[half:], ".")),
        lambda: _exchange(response_body=SseBody(events=[SseEvent(offset_ms=1.0, lines=[secret])])),
        lambda: _exchange(
            response_body=JsonBody(
                value={"parts": [{"text": "hi", "thoughtSignature": signature}, {"text": secret}]}
            )
        ),
    ]
    exchanges = []
    for place in places:
        try:
            exchanges.append(place())
        except ValidationError:
            continue  # not a valid header value or URL
    return exchanges


@pytest.mark.parametrize(("shape", "secret"), SHAPES, ids=[name for name, _ in SHAPES])
def test_an_exchange_is_clear_at_a_glance_only_when_the_scan_finds_nothing(
    shape: str, secret: str
) -> None:
    for exchange in _places(secret):
        if not scan_for_secrets(exchange):
            continue
        text = json.dumps(exchange.model_dump(mode="json"))
        # as rec's journal writes it, and as JSON may spell it otherwise (escapes)
        for read_from in (
            None,
            exchange.model_dump_json(exclude_none=True).encode(),
            text.encode(),
            text.replace("/", "\\/").encode(),
            text.replace("a", "\\u0061").replace("A", "\\u0041").encode(),
        ):
            assert not exchange_clear_at_a_glance(exchange, read_from=read_from), (shape, exchange)


def test_a_clean_exchange_is_clear_at_a_glance() -> None:
    signature = "eyJ" + "xoxshpAKIA" * 3 + "=="
    body = JsonBody(
        value={"contents": [{"parts": [{"text": "hi", "thoughtSignature": signature}]}]}
    )
    for exchange in (
        _exchange(body=body, response_body=_stream("plain ", "words")),
        _exchange(response_body=SseBody(events=[SseEvent(offset_ms=1.0, lines=["data: x"])])),
    ):
        assert scan_for_secrets(exchange) == []
        assert exchange_clear_at_a_glance(exchange)
        line = exchange.model_dump_json(exclude_none=True).encode()
        assert exchange_clear_at_a_glance(exchange, read_from=line)
    key_in_signature = JsonBody(value={"parts": [{"text": "hi", "thoughtSignature": FAKE_KEY}]})
    assert not exchange_clear_at_a_glance(_exchange(body=key_in_signature))


@pytest.mark.parametrize(
    "text",
    [
        "see https://deploy:FAKEpassword1234@git.example.com/repo",
        "://a:b@ at the start, then x://user:pw@host",
        "https://example.com/a and ftp://ok.example.com",
        "https://user@host (no password) https://u:@h",
        "s3://bucket:key@host",
    ],
)
def test_a_url_password_is_looked_for_where_a_scheme_ends(text: str) -> None:
    from cassettes._secret_shapes import URL_PASSWORD, has_url_password

    assert has_url_password(text) == bool(URL_PASSWORD.search(text))


@pytest.mark.parametrize("prefix", ["", "u", "us", "user:"])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_known_key_inside_a_signature_is_found_beside_clean_signatures(
    prefix: str, encode: object
) -> None:
    """Signatures are decoded from the document's text before the string-by-string walk
    is skipped: one holding the known key, at any alignment and in either alphabet, is
    still found at its place, and the clean ones around it are not reported."""
    tool_key = "FAKE-tool-key-0123456789abcdef"
    clean = base64.urlsafe_b64encode(bytes(range(200))).decode()
    carrier = encode((prefix + tool_key + "~~").encode()).decode()  # type: ignore[operator]
    parts = [
        {"text": "hi", "thoughtSignature": clean},
        {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": carrier},
    ]
    document = {"contents": [{"role": "model", "parts": parts}]}
    hits = scan_for_secrets(document, known_secrets={tool_key})
    assert {h.where for h in hits} == {"contents[0].parts[1].thoughtSignature"}
    assert "known credential (base64-encoded)" in {h.kind for h in hits}
    parts.pop()
    assert scan_for_secrets(document, known_secrets={tool_key}) == []


def test_a_known_key_in_a_signature_that_is_not_plain_base64_is_found() -> None:
    """A signature with a line break decodes all the same: the text alone cannot judge it."""
    tool_key = "FAKE-tool-key-0123456789abcdef"
    encoded = b64("user:" + tool_key)
    broken = encoded[:10] + "\n" + encoded[10:]
    inline = {"inlineData": {"mimeType": "text/plain", "data": broken}}
    for part in ({"text": "x", "thoughtSignature": broken}, inline):
        document = {"contents": [{"parts": [part]}]}
        kinds = {h.kind for h in scan_for_secrets(document, known_secrets={tool_key})}
        assert "known credential (base64-encoded)" in kinds


def test_redaction_of_a_body_without_the_key_keeps_it_and_one_with_it_replaces_it() -> None:
    """The known key is looked for in the body's JSON text first; where the text holds it,
    every string and key holding it is rewritten, and a key with a quote is still found."""
    quoted_key = 'FAKE"quoted-key-0123456789'
    clean = {"contents": [{"parts": [{"text": "plain words " * 50}]}]}
    dirty = {
        "contents": [{"parts": [{"text": f"k={FAKE_KEY}"}]}],
        f"{FAKE_KEY}": [quoted_key, "x"],
    }
    for secrets in ({FAKE_KEY}, {FAKE_KEY, quoted_key}):
        kept = redact_exchange(
            _exchange(body=JsonBody(value=clean)), RedactionRules(), known_secrets=secrets
        )
        assert kept.request.body == JsonBody(value=clean)
        redacted = redact_exchange(
            _exchange(body=JsonBody(value=dirty)), RedactionRules(), known_secrets=secrets
        )
        text = json.dumps(redacted.request.body.value)  # type: ignore[union-attr]
        assert FAKE_KEY not in text and text.count(REDACTED) >= 2
        assert (quoted_key in json.loads(text)[REDACTED]) is (quoted_key not in secrets)


def test_a_known_key_anywhere_in_an_exchange_is_replaced_wherever_it_is() -> None:
    """The exchange's JSON text is searched first; a key in a header value, the URL, the
    client versions or inside binary bytes sends it through every replacement."""
    binary = BinaryBody(base64=b64(f"raw {FAKE_KEY} bytes"))
    exchange = _exchange(
        url=f"https://generativelanguage.googleapis.com/v1beta/models/m:x?trace={FAKE_KEY}",
        headers={"x-trace": f"id {FAKE_KEY}"},
        body=JsonBody(value={"contents": [{"parts": [{"text": "clean"}]}]}),
        response_body=binary,
    ).model_copy(update={"client": {"agent": f"v1 {FAKE_KEY}"}})
    redacted = redact_exchange(exchange, RedactionRules(), known_secrets={FAKE_KEY})
    assert FAKE_KEY not in redacted.model_dump_json()
    assert FAKE_KEY not in base64.b64decode(redacted.response.body.base64).decode()  # type: ignore[union-attr]
    assert redacted.request.headers == {"x-trace": f"id {REDACTED}"}
    only_binary = _exchange(response_body=binary)
    assert (
        FAKE_KEY
        not in base64.b64decode(
            redact_exchange(
                only_binary, RedactionRules(), known_secrets={FAKE_KEY}
            ).response.body.base64  # type: ignore[union-attr]
        ).decode()
    )


def test_redaction_copies_only_the_parts_it_changes() -> None:
    body = JsonBody(value={"contents": [{"parts": [{"text": "hi"}]}]})
    exchange = _exchange(
        url="https://generativelanguage.googleapis.com/v1beta/models/m:x?alt=sse&key=AIza-k",
        headers={"x-goog-api-key": "AIza-k", "content-type": "application/json"},
        body=body,
        response_headers={"content-type": "application/json"},
        response_body=JsonBody(value={"candidates": []}),
    )
    rules = RedactionRules()
    redacted = redact_exchange(exchange, rules)
    assert redacted.response is exchange.response  # nothing in it to drop or replace
    assert redacted.request is not exchange.request
    assert redacted.request.url.endswith("m:x?alt=sse") and "x-goog-api-key" not in (
        redacted.request.headers
    )
    assert redacted.request.body is body
    # A known secret in the response's body: the response is a copy, the original kept.
    replaced = redact_exchange(
        _exchange(response_body=JsonBody(value={"text": "secret-value-1"})),
        rules,
        known_secrets={"secret-value-1"},
    )
    assert replaced.response.body == JsonBody(value={"text": "<redacted>"})


@pytest.mark.parametrize("depth", [2, 1000, 5000])
def test_stream_events_kept_as_text_are_scanned_however_deep_they_nest(depth: int) -> None:
    """An event kept as its text (NaN, or nested past what rec stores parsed) is read for
    its JSON where it can be; one too deep to parse or walk is scanned as its text, never
    an error that loses the recording."""

    def event(n: int, text: str) -> SseEvent:
        deep = '{"a":' * depth + json.dumps(text) + "}" * depth
        return SseEvent(offset_ms=float(n), lines=[f'data: {{"n":NaN,"deep":{deep}}}'])

    clean = _exchange(response_body=SseBody(events=[event(0, "hello"), event(1, "world")]))
    assert scan_for_secrets(clean) == []
    ensure_no_secrets(clean, path="journal")
    leaked = _exchange(response_body=SseBody(events=[event(0, "hi"), event(1, FAKE_KEY)]))
    with pytest.raises(SecretFound):
        ensure_no_secrets(leaked, path="journal")
