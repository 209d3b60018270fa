"""JSON that rec may store parsed: what serialises back to the same values.

Python's ``json`` reads ``NaN``, ``Infinity`` and ``1e999`` (as ``inf``), pydantic writes
them back as ``null``; pydantic reads JSON only 200 levels deep, and Python recursion
ends far sooner in some walkers. A document with any of these is stored as its text
instead, so the client is replayed what the upstream sent.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "exact_json", "nests_too_deep"]

MAX_JSON_DEPTH = 150
"""Deepest JSON rec stores parsed. A cassette nests a body about ten levels down, and
pydantic reads JSON only to depth 200: anything deeper is stored as text instead."""


class _NotExact(ValueError):
    """The JSON text holds a value that would not serialise back to itself."""


def _reject_constant(name: str) -> Any:
    raise _NotExact(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotExact(f"{text} does not fit a float")
    return value


_BRACKETS_AND_QUOTES = bytes(range(256)).translate(None, b'[]{}"')
"""Every byte but a bracket and a quote: what :func:`_nests_deeper` deletes."""
_STRING = re.compile(rb'"[^"]*"')
_INNERMOST = re.compile(rb"\{\}|\[\]")


def _nests_deeper(text: str | bytes, limit: int) -> bool:
    """Whether the JSON ``text`` (valid; or its UTF-8 bytes) has containers nested more
    than ``limit`` deep.

    Its escaped backslashes and quotes taken out (left to right, as JSON pairs them), its
    quotes are its strings' ends; with every other character but the brackets gone and
    its strings taken out, its brackets are left. Each pass of :data:`_INNERMOST` takes
    out the innermost pairs, one level (its matches do not overlap, so a pair that a match
    empties waits for the next pass); a text that ``bytes.replace`` empties sooner (one or
    two levels a pass) is shallow enough. All in C: a walk of the parsed value costs a
    Python call per container.
    """
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if b"\\" in data:  # no byte of a multi-byte UTF-8 character is a backslash or quote
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = data.translate(None, _BRACKETS_AND_QUOTES)
    # Two quotes side by side end an empty string, or end one string and open the next
    # with nothing kept between them (one string of both): taken out, strings are left
    # whole, and most are gone (few hold a bracket).
    brackets = kept.replace(b'""', b"")
    if b'"' in brackets:
        brackets = _STRING.sub(b"", brackets)
    shallower = brackets
    for _ in range(limit // 2):  # a pass takes out one level or two: no more than limit
        shallower = shallower.replace(b"{}", b"").replace(b"[]", b"")
        if not shallower:
            return False
    for _ in range(limit):  # deep: one level a pass, counted
        brackets = _INNERMOST.sub(b"", brackets)
        if not brackets:
            return False
    return True


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
"""``json.loads`` with these hooks, built once (``json.loads`` builds one a call)."""


def nests_too_deep(text: str | bytes, value: Any, *, opened: int | None = None) -> bool:
    """Whether ``value``, parsed from ``text`` (or its UTF-8 bytes), nests deeper than
    :data:`MAX_JSON_DEPTH` (a walker that recurses through it could run out of Python's
    recursion). ``opened``: how many brackets and braces ``text`` holds, when known."""
    # A document nests at most as deep as it has opening brackets (a fast, loose bound).
    if opened is not None:
        brackets = opened
    elif isinstance(text, bytes):
        brackets = text.count(b"[") + text.count(b"{")
    else:
        brackets = text.count("[") + text.count("{")
    shallow = brackets <= MAX_JSON_DEPTH
    return not shallow and isinstance(value, (dict, list)) and _nests_deeper(text, MAX_JSON_DEPTH)


def exact_json(text: str) -> tuple[bool, Any]:
    """Parse ``text`` as JSON that rec can store parsed and serialise back unchanged.

    Returns ``(True, value)``, or ``(False, None)`` for text that is not JSON, holds
    ``NaN``/``Infinity`` or a number beyond a float or a 4300-digit integer, or nests
    deeper than :data:`MAX_JSON_DEPTH`.
    """
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return False, None
    if nests_too_deep(text, value):
        return False, None
    return True, value
