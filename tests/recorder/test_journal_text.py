"""Each exchange is written to JSON once (and its bodies not copied when redaction has
nothing to replace): the secret scan reads the journal's own text, and
that text is what pydantic-core writes for the line (the journal's bytes are unchanged)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassettes._cassette import Exchange, JsonBody, SseBody, SseEvent, TextBody
from cassettes._redaction import RedactionRules, redact_exchange, redacted_with_text
from rec.standin.replies import FAKE_API_KEY, Reply, ScriptedResponder
from recorder._capture_files import ChunkedExchange, read_journal
from recorder._forwarding import _PIECE
from recorder._journal_lines import CHUNK_LINE
from recorder._recorder import Recorder
from recorder._recording_state import RecordingPaths
from recorder._traffic import Upstreams
from tests.factories import make_exchange
from tests.journaled import journal_holding

MODEL = "/v1beta/models/gemini-2.0-flash"
HEADERS = {"x-goog-api-key": FAKE_API_KEY, "content-type": "application/json"}
REQUEST = b'{"contents": [{"role": "user", "parts": [{"text": "hello \\u00e9 \\ud83d\\ude00"}]}]}'


def test_every_journal_line_is_the_text_pydantic_writes_for_it(
    tmp_path: Path, standin_factory: Any
) -> None:
    words = "words " * (_PIECE // 2)
    big = json.dumps({"candidates": [{"content": {"parts": [{"text": words}]}}]}).encode()
    replies = [
        Reply.text('Sunny, 21 °C and a "quoted" word', chunks=3),
        Reply.text("Sunny again", chunks=3),
        Reply.raw(big),
    ]
    api = standin_factory(ScriptedResponder(replies, repeat_last=True))
    with (
        Recorder(
            tmp_path, name="text", upstreams=Upstreams(gemini=api.url)
        ).running_in_thread() as rec,
        httpx.Client(trust_env=False, timeout=120) as client,
    ):
        for path in (":streamGenerateContent?alt=sse", ":generateContent", ":generateContent"):
            response = client.post(rec.url + MODEL + path, headers=HEADERS, content=REQUEST)
            assert response.status_code == 200
        journal = journal_holding(RecordingPaths(tmp_path, "text").journal, 3)
    # A piece's bytes hold no newline here and do not start as an exchange's line does.
    lines = journal.split(b"\n")
    exchanges = [line for line in lines if line.startswith((b'{"id":', b'{"body_chunks":'))]
    assert any(line.startswith(CHUNK_LINE) for line in lines)
    assert len(exchanges) == 3
    kinds = set()
    for line in exchanges:
        model: Exchange | ChunkedExchange
        if line.startswith(b'{"body_chunks":'):
            model = ChunkedExchange.model_validate_json(line)
        else:
            model = Exchange.model_validate_json(line)
        kinds.add(type(model.response.body if isinstance(model, Exchange) else model).__name__)
        assert line == model.model_dump_json(exclude_none=True).encode("utf-8")
    assert kinds == {"SseBody", "JsonBody", "ChunkedExchange"}
    assert FAKE_API_KEY.encode() not in journal
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(journal)
    assert len(read_journal(copy).exchanges) == 3


def _echoing(secret: str) -> Exchange:
    """An exchange whose request and answer both hold ``secret`` in their text."""
    return make_exchange(
        request_headers={"x-goog-api-key": secret, "content-type": "application/json"},
        response_body={"candidates": [{"content": {"parts": [{"text": f"key {secret}"}]}}]},
    )


@pytest.mark.parametrize(
    ("exchange", "known", "rules"),
    [
        (make_exchange(), (), RedactionRules()),
        (make_exchange(request_headers={"x-goog-api-key": FAKE_API_KEY}), (FAKE_API_KEY,), None),
        (_echoing(FAKE_API_KEY), (FAKE_API_KEY,), None),
        (
            make_exchange(stream_chunks=[{"a": f"{FAKE_API_KEY} "}, {"a": "y"}]),
            (FAKE_API_KEY,),
            None,
        ),
        (
            make_exchange(response_body={"secret": "s", "kept": None}),
            (),
            RedactionRules(json_paths=("secret",)),
        ),
    ],
    ids=["none known", "key in a dropped header", "key in the body", "key in a stream", "path"],
)
def test_redacted_with_text_is_redact_exchange_and_its_journal_text(
    exchange: Exchange, known: tuple[str, ...], rules: RedactionRules | None
) -> None:
    rules = rules or RedactionRules()
    expected = redact_exchange(exchange, rules, known_secrets=known)
    redacted, text = redacted_with_text(exchange, rules, known_secrets=known)
    assert redacted == expected
    assert text == expected.model_dump_json(exclude_none=True)
    assert FAKE_API_KEY not in text
    assert isinstance(redacted.response.body, (JsonBody, SseBody, TextBody))


def test_a_body_with_nothing_to_replace_is_kept_not_copied() -> None:
    plain = make_exchange(stream_chunks=[{"a": "x"}, {"a": "y"}])
    assert redact_exchange(plain, RedactionRules()).response.body is plain.response.body
    # An event holding both data and lines loses its data, as redaction always did.
    both = SseBody(events=[SseEvent(offset_ms=1.0, data={"a": 1}, lines=["data: 2"])])
    odd = plain.model_copy(update={"response": plain.response.model_copy(update={"body": both})})
    body = redact_exchange(odd, RedactionRules()).response.body
    assert isinstance(body, SseBody)
    assert body.events == [SseEvent(offset_ms=1.0, lines=["data: 2"])]
