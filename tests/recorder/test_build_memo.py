"""The recorder's build remembers the turns it saw clear, never past a credential learnt
later (``recorder._exchange_build``, ``cassettes._secret_scan``).

An agent's request repeats every earlier turn of its conversation, so the secret glance
remembers the pieces of a journal line it saw clear, keyed by the credentials known at
the time. A credential learnt after a turn was seen clear must still be found in that
turn when a later request carries it again.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

from cassettes._redaction import RedactionRules
from cassettes._secret_scan import _clear_at_a_glance, _kinds, _scan_spellings
from cassettes._secret_walk import JsonPath, map_strings
from rec.standin.replies import FAKE_API_KEY
from recorder._exchange_build import ExchangeBuild, Received, build_exchange
from tests.factories import gemini_request, model_content, user_content

URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
LEARNT = "tool-session-credential-4f1c9a0b7e2d"
"""A credential with no shape of its own: known only once a request sends it."""


def _signed_turn(secret_bytes: bytes, words: str) -> dict[str, Any]:
    """A model turn long enough to be remembered on its own, signed with bytes that hold
    ``secret_bytes``."""
    signature = base64.urlsafe_b64encode(b"\x07" * 40 + secret_bytes + b"\x09" * 40).decode()
    return {
        "role": "model",
        "parts": [{"text": words * 12}, {"text": "checked", "thoughtSignature": signature}],
    }


def _build(contents: list[dict[str, Any]], exchange_id: int, known: set[str]) -> ExchangeBuild:
    body = json.dumps(gemini_request(contents, system_instruction="Be brief.")).encode()
    got = Received(
        method="POST",
        request_headers={"content-type": "application/json", "x-goog-api-key": FAKE_API_KEY},
        request_body=body,
        started_at="2026-12-07T10:00:00.000000+00:00",
        url=URL,
        status=200,
        headers={"content-type": "application/json"},
        content_type="application/json",
        encoding=None,
        received=[b'{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"}}]}'],
        duration_ms=4.0,
        raw_events=None,
        line_ending="\r\n",
        tail=None,
        cut=False,
        known_secrets=frozenset({FAKE_API_KEY, *known}),
    )
    return build_exchange(got, exchange_id, RedactionRules())


def test_a_turn_seen_clear_is_refused_once_its_signature_holds_a_credential_learnt_since() -> None:
    turn = _signed_turn(LEARNT.encode(), "The forecast for Lima is mild and dry. ")
    first = _build([user_content("weather in Lima?"), turn, user_content("and Oslo?")], 0, set())
    assert first.written is not None, first.problem  # not a credential yet: kept
    again = _build([user_content("weather in Lima?"), turn, user_content("and Oslo?")], 1, set())
    assert again.written is not None, again.problem

    later = [user_content("weather in Lima?"), turn, user_content("and Oslo?")]
    later += [model_content("Cold."), user_content("thanks")]
    built = _build(later, 2, {LEARNT})

    assert built.written is None
    assert built.refused, built.problem
    assert "known credential" in (built.problem or "")


def test_a_turn_seen_clear_is_redacted_once_its_text_holds_a_credential_learnt_since() -> None:
    turn = _signed_turn(b"no credential here", f"The tool answered with {LEARNT} today. ")
    first = _build([user_content("weather in Lima?"), turn, user_content("and Oslo?")], 0, set())
    assert first.written is not None, first.problem
    assert LEARNT.encode() in first.written.data  # not a credential yet: kept

    later = [user_content("weather in Lima?"), turn, user_content("and Oslo?")]
    later += [model_content("Cold."), user_content("thanks")]
    built = _build(later, 1, {LEARNT})

    assert built.written is not None, built.problem
    assert LEARNT.encode() not in built.written.data
    assert b"<redacted>" in built.written.data


def _kinds_in(document: Any, known_secrets: frozenset[str]) -> list[str]:
    """What the scan finds string by string (no glance first)."""
    known, known_bytes, pattern = _scan_spellings(known_secrets)
    found: list[str] = []

    def visit(path: JsonPath, text: str, _is_key: bool) -> str:
        found.extend(_kinds(text, path, pattern, known_bytes, known))
        return text

    map_strings(document, visit)
    return found


def test_the_glance_in_pieces_says_clear_only_where_the_scan_finds_nothing() -> None:
    """Random documents whose strings hold piece starts, hints, parameters and known
    spellings: whenever the glance, looked at in remembered pieces, says clear, the full
    scan finds nothing (each glanced twice: the second reads the memo)."""
    secret = "sk-learnt-value-77aa"
    spelled = base64.b64encode(b"xy" + secret.encode()).decode()
    fragments = [
        '{"parts":[',
        '{"role":"user",',
        "plain words " * 50,
        "other words " * 30,
        "a short note",
        "AIza",
        FAKE_API_KEY,
        "?token=abcdefgh12",
        "https://u:pw@host",
        secret,
        spelled,
        "%73k-learnt-value-77aa",
        "{",
        '"',
    ]
    rng = random.Random(11)
    flagged = 0
    for _ in range(3000):
        texts = [
            "".join(rng.sample(fragments, rng.randint(1, 3))) for _ in range(rng.randint(1, 6))
        ]
        document = {
            "contents": [
                {"parts": [{"text": t}, {"thoughtSignature": rng.choice([spelled, "QUJD"])}]}
                for t in texts
            ],
            "tail": "x" * rng.randint(0, 900),
        }
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        for known_secrets in (frozenset(), frozenset({secret})):
            known, known_bytes, _ = _scan_spellings(known_secrets)
            hits = _kinds_in(document, known_secrets)
            flagged += bool(hits)
            for _ in range(2):
                if _clear_at_a_glance(text, [], known, known_bytes):
                    assert not hits, (text, hits)
    assert flagged > 100
