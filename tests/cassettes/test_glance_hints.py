"""The secret glance finds every hint literal in one pass (``cassettes._redaction``)."""

from __future__ import annotations

import base64
import random
import re

import pytest

from cassettes._redaction import (
    _BYTES_KEYS,
    _GLANCE_HINT,
    _GLANCE_HINTS,
    _anchor,
    _anchored,
    _bytes_values_blanked,
    _decoded,
    text_clear_at_a_glance,
)
from cassettes._secret_shapes import _SECRET_PARAM, has_secret_param, spellings_of


@pytest.mark.parametrize("hint", _GLANCE_HINTS)
def test_a_text_holding_any_hint_literal_is_not_clear_at_a_glance(hint: str) -> None:
    assert _GLANCE_HINT.search(f"plain {hint} words")
    assert not text_clear_at_a_glance(f'{{"text": "plain {hint} words"}}')


def test_the_anchored_pattern_matches_exactly_where_a_literal_occurs() -> None:
    # "ab" is a prefix of "abc"; "." and "+" are literal; "x" is a literal of one character
    # and "zxz" shares its anchor; "Qa" and "aQ" are entered at the same capital.
    literals = ["ab", "a.", "abc", "b+", "x", "zxz", "Qa", "aQ"]
    pattern = re.compile(_anchored(literals))
    texts = ("zzab", "a.", "abc", "xb+", "--x--", "a", "b", "aXc", "bb", "azb.", "A.", "Q")
    for text in (*texts, "aQ", "Qa", "QQ", "zQa", "bzxz", "zz", "Q.a"):
        expected = any(literal in text for literal in literals)
        assert bool(pattern.search(text)) is expected, text


@pytest.mark.parametrize(
    ("literal", "rarest"),
    [
        pytest.param("eyJ", "J", id="a capital"),
        pytest.param("ya29.", "2", id="a digit before punctuation"),
        pytest.param("shp", "p", id="the least common letter"),
        pytest.param("_live_", "_", id="the first of equals"),
    ],
)
def test_each_literal_is_entered_at_its_rarest_character(literal: str, rarest: str) -> None:
    assert literal[_anchor(literal)] == rarest
    assert literal.index(rarest) == _anchor(literal)


@pytest.mark.parametrize("hint", _GLANCE_HINTS)
def test_no_hint_is_entered_at_a_common_letter(hint: str) -> None:
    # Python's engine skips, in C, positions no alternative starts at: the glance's
    # pattern stops at none of the letters that fill a text unless a hint is all of them.
    common = set(" etaoinshrd")
    assert hint[_anchor(hint)] not in common or set(hint) <= common


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("a=bcdefghij", id="no lead"),
        pytest.param("?a=bcdefghij", id="query"),
        pytest.param("x&token=abcdefgh#", id="ampersand"),
        pytest.param("x;k=abcdefgh", id="semicolon"),
        pytest.param("x; charset=UTF-8", id="a content type (space after the lead)"),
        pytest.param("?alt=sse", id="a value too short"),
        pytest.param("??=abcdefghij", id="a lead with no name"),
        pytest.param("?a?b=abcdefghij", id="the later lead"),
        pytest.param("&x=1234567&y=abcdefgh", id="the second parameter"),
        pytest.param("?a=abc def ghi", id="a space in the value"),
        pytest.param('"?é=abcdefghij"', id="a name that is not ASCII"),
        pytest.param("?a[0].b-c_d=abcdefgh", id="name punctuation"),
    ],
)
def test_the_parameter_glance_finds_what_the_pattern_finds(text: str) -> None:
    assert has_secret_param(text) is bool(_SECRET_PARAM.search(text))


def test_the_parameter_glance_agrees_with_the_pattern_on_random_texts() -> None:
    rng = random.Random(23)
    alphabet = "ab=?&;.-_[]x0 \"'<>#\n\té%AZ"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert has_secret_param(text) is bool(_SECRET_PARAM.search(text)), text


_ORACLE_VALUE = re.compile(
    "(" + "|".join(f'"{key}": ?' for key in sorted(_BYTES_KEYS)) + ')"[A-Za-z0-9+/=_-]*"'
)
"""A bytes key's base64 value, as one pattern: what the glance blanks."""


def _oracle_fields_clear(text: str, known_bytes: list[bytes]) -> bool:
    """Every bytes field decoded, one key at a time (the scan's reading of them)."""
    keys = set(_BYTES_KEYS)
    if "inlineData" in text or "inline_data" in text:
        keys.add("data")
    for key in keys:
        marker = f'"{key}":'
        at = text.find(marker)
        while at >= 0:
            start = at + len(marker) + (1 if text.startswith(" ", at + len(marker)) else 0)
            value = re.compile(r'"[A-Za-z0-9+/=_-]*"').match(text, start)
            if value is not None:
                raw = _decoded(value.group()[1:-1])
                if raw is not None and any(secret in raw for secret in known_bytes):
                    return False
            elif text.startswith('"', start):
                return False
            at = text.find(marker, start)
    return True


def _oracle_blanked(text: str, known_bytes: list[bytes]) -> str | None:
    if known_bytes and not _oracle_fields_clear(text, known_bytes):
        return None
    return _ORACLE_VALUE.sub(r'\1""', text)


def test_bytes_values_are_blanked_and_decoded_as_a_pattern_and_a_scan_of_each_key_do() -> None:
    secret = b"sk-known-secret-value"
    known = [secret]
    fragments = [
        *(f'"{key}":' for key in (*_BYTES_KEYS, "data")),
        '"thoughtSignature": ',
        '"inlineData":{',
        '"',
        " ",
        ",",
        "}",
        "QUJD",
        "ab-_",
        "+/==",
        "not base64!",
        base64.b64encode(b"x" + secret).decode(),
        base64.urlsafe_b64encode(secret).decode().rstrip("="),
    ]
    rng = random.Random(5)
    for _ in range(20_000):
        text = "".join(rng.choice(fragments) for _ in range(rng.randint(0, 12)))
        for known_bytes in (known, []):
            expected = _oracle_blanked(text, known_bytes)
            assert _bytes_values_blanked(text, known_bytes) == expected, (text, known_bytes)


def test_a_text_without_a_spelling_of_a_credential_has_it_only_in_an_oddly_spelled_value() -> None:
    """With no base64 spelling of the credential in the text, decoding only the values
    spelled oddly (a stray ``=``, both alphabets) finds every one a decode of all finds."""
    secret = b"sk-known->>>-secret-???-value"  # encoded, it holds "+" and "/"
    spellings = [s for s in spellings_of(secret.decode()) if len(s) >= 8]
    encodings = [
        encode(b"\x00" * offset + secret + b"\xff" * tail).decode().rstrip("=")
        for encode in (base64.b64encode, base64.urlsafe_b64encode)
        for offset in (0, 1, 2)
        for tail in (0, 1, 2)
    ]
    # A stray "=" the decoder skips, and one character of the other alphabet.
    odd = [e[:at] + "=" + e[at:] for e in encodings for at in (4, 13, 18)]
    odd += [e.replace(a, b, 1) for e in encodings for a, b in ("+-", "/_", "-+", "_/") if a in e]
    pieces = [*encodings, *odd, "QUJD", "ab-_", "+/", "=", "=="]
    keys = ['"thoughtSignature":', '"base64": ', '"inlineData":{"data":', '"data":', "x"]
    rng = random.Random(7)
    found = clear = 0
    for _ in range(20_000):
        text = "".join(
            rng.choice(keys) + '"' + "".join(rng.sample(pieces, rng.randint(1, 2))) + '"}'
            for _ in range(rng.randint(1, 3))
        )
        if any(spelling in text for spelling in spellings):
            continue
        expected = _oracle_blanked(text, [secret])
        found += expected is None
        clear += expected is not None
        assert _bytes_values_blanked(text, [secret], spellings_absent=True) == expected, text
    assert found > 100 and clear > 100
