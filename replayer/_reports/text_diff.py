"""A word-level diff of two texts (expected vs actual final response)."""

from __future__ import annotations

import difflib
import re
from typing import Literal

__all__ = ["Piece", "word_diff"]

Piece = tuple[Literal["same", "removed", "added"], str]
"""A run of text: in both texts, only in the expected one, or only in the actual one."""

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


def word_diff(expected: str, actual: str) -> tuple[list[Piece], list[Piece]]:
    """The expected text with what the actual one lacks marked ``removed``, and the actual
    text with what it adds marked ``added``. Words, spaces and punctuation are the units."""
    want, got = _TOKEN.findall(expected), _TOKEN.findall(actual)
    left: list[Piece] = []
    right: list[Piece] = []
    matcher = difflib.SequenceMatcher(None, want, got, autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            left.append(("same", "".join(want[a1:a2])))
            right.append(("same", "".join(got[b1:b2])))
            continue
        if a2 > a1:
            left.append(("removed", "".join(want[a1:a2])))
        if b2 > b1:
            right.append(("added", "".join(got[b1:b2])))
    return left, right
