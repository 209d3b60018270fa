"""JSON that rec may store parsed: what serialises back to the same values.

Python's ``json`` reads ``NaN``, ``Infinity`` and ``1e999`` (as ``inf``), pydantic writes
them back as ``null``; pydantic reads JSON only 200 levels deep, and Python recursion
ends far sooner in some walkers. A document with any of these is stored as its text
instead, so the client is replayed what the upstream sent.
"""

from __future__ import annotations

import json
import math
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


def _too_deep(value: Any, limit: int) -> bool:
    """Whether containers nest deeper than ``limit`` (``value`` itself is level 1).

    Recursive, but never more than ``limit`` calls deep: it stops at the first container
    past the limit.
    """
    if limit <= 0:
        return True
    for child in value.values() if type(value) is dict else value:
        kind = type(child)
        if (kind is dict or kind is list) and _too_deep(child, limit - 1):
            return True
    return False


def nests_too_deep(text: str | bytes, value: Any) -> bool:
    """Whether ``value``, parsed from ``text`` (or its UTF-8 bytes), nests deeper than
    :data:`MAX_JSON_DEPTH` (a walker that recurses through it could run out of Python's
    recursion)."""
    # A document nests at most as deep as it has opening brackets (a fast, loose bound).
    if isinstance(text, bytes):
        brackets = text.count(b"[") + text.count(b"{")
    else:
        brackets = text.count("[") + text.count("{")
    shallow = brackets <= MAX_JSON_DEPTH
    return not shallow and isinstance(value, (dict, list)) and _too_deep(value, MAX_JSON_DEPTH)


def exact_json(text: str) -> tuple[bool, Any]:
    """Parse ``text`` as JSON that rec can store parsed and serialise back unchanged.

    Returns ``(True, value)``, or ``(False, None)`` for text that is not JSON, holds
    ``NaN``/``Infinity`` or a number beyond a float or a 4300-digit integer, or nests
    deeper than :data:`MAX_JSON_DEPTH`.
    """
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return False, None
    if nests_too_deep(text, value):
        return False, None
    return True, value
