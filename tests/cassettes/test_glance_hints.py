"""The secret glance finds every hint literal in one pass (``cassettes._redaction``)."""

from __future__ import annotations

import re

import pytest

from cassettes._redaction import _GLANCE_HINT, _GLANCE_HINTS, _factored, text_clear_at_a_glance


@pytest.mark.parametrize("hint", _GLANCE_HINTS)
def test_a_text_holding_any_hint_literal_is_not_clear_at_a_glance(hint: str) -> None:
    assert _GLANCE_HINT.search(f"plain {hint} words")
    assert not text_clear_at_a_glance(f'{{"text": "plain {hint} words"}}')


def test_the_factored_pattern_matches_exactly_where_a_literal_occurs() -> None:
    literals = ["ab", "a.", "abc", "b+", "x"]  # "ab" is a prefix of "abc"; "." and "+" literal
    pattern = re.compile(_factored(literals))
    for text in ("zzab", "a.", "abc", "xb+", "--x--", "a", "b", "aXc", "bb", "azb.", "A."):
        expected = any(literal in text for literal in literals)
        assert bool(pattern.search(text)) is expected, text
