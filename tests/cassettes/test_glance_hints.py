"""The secret glance finds every hint literal in one pass (``cassettes._redaction``)."""

from __future__ import annotations

import re

import pytest

from cassettes._redaction import (
    _GLANCE_HINT,
    _GLANCE_HINTS,
    _anchor,
    _anchored,
    text_clear_at_a_glance,
)


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
