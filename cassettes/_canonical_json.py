"""JSON read and spelled at C speed for matching: the canonical bytes of a value, and a
body's value read from its bytes.

Matching spells every request it keys, and every recording it compares, in one canonical
form (keys sorted, compact, UTF-8: :func:`canonical_json`), and reads every request's body
from its bytes (:func:`loads`). orjson does both in a fraction of the standard library's
time (an agent's 2.5 kB request: 2.5 µs to spell instead of 18, 5 µs to read instead of
10). Where orjson would not give what ``json`` gives, ``json`` does it instead, so the
values read and the requests found equal are the same either way:

- reading: orjson reads an integer beyond 64 bits as a float (``json``: the integer), and
  refuses what ``json`` reads more loosely (``NaN``, ``Infinity``, a lone surrogate
  escape, a number beyond a float);
- spelling: orjson refuses an integer beyond 64 bits, a lone surrogate and deep nesting,
  and writes ``NaN`` and infinities as ``null`` (``json``: ``NaN``, ``Infinity``), so a
  spelling holding ``null`` is checked by ``json``.

The spellings differ in places (orjson writes ``1e-05`` as ``0.00001``) but each is
one-to-one, so two values spell alike under one exactly when they spell alike under the
other; canonical bytes are compared within one process and never stored. Without orjson
installed, ``json`` does everything.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

_orjson: Any = None
try:  # imported by name: rec type-checks and runs where orjson is not installed too
    _orjson = importlib.import_module("orjson")
except ImportError:  # pragma: no cover - orjson is a dependency; json stands in without it
    pass

__all__ = ["canonical_json", "compact_json", "loads", "shape_of", "strict_loads"]

_SHAPE = bytes.maketrans(b"123456789{", b"000000000[")
"""Every digit spelled ``0`` and every brace a bracket: one translation of a document shows
both a possible long integer (:data:`_LONG_NUMBER`) and how many containers it opens."""
_LONG_NUMBER = b"0" * 19
"""Nineteen digits in a row (once every digit is spelled ``0``): possibly an integer orjson
would read as a float (beyond ``-2**63`` or ``2**64 - 1``), so ``json`` reads the
document. Translating and searching costs a fraction of a regular expression's scan."""


def loads(data: bytes) -> Any:
    """``json.loads(data)`` for UTF-8 ``data``: the same value, read by orjson where it
    reads it as ``json`` does.

    Raises:
        ValueError: ``data`` is not JSON (``json``'s error).
        RecursionError: it nests deeper than ``json`` can read.
    """
    # ``find``, not ``in``: ``in`` tries the needle as an integer first, and raises and
    # clears a TypeError a call.
    if _orjson is not None and data.translate(_SHAPE).find(_LONG_NUMBER) < 0:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # json decides: it reads more than orjson does, or raises its own error
    return json.loads(data)


def shape_of(data: bytes) -> tuple[bool, int]:
    """Whether ``data`` holds no integer orjson could read otherwise than ``json`` (no run
    of 19 digits), and how many brackets and braces it holds (as deep as it can nest), in
    one pass."""
    shape = data.translate(_SHAPE)
    return shape.find(_LONG_NUMBER) < 0, shape.count(b"[")


def strict_loads(data: bytes) -> tuple[bool, Any, int]:
    """``(True, value, opened)`` when orjson reads ``data`` as ``json.loads`` would (so
    ``data`` is UTF-8 JSON without ``NaN``, infinities or lone surrogates), else
    ``(False, None, opened)``: the caller reads it the slow way, which decides. ``opened``
    counts the brackets and braces in ``data`` (as deep as it can nest: see
    ``cassettes._exact_json.nests_too_deep``), read in the same pass."""
    plain, opened = shape_of(data)
    if _orjson is None or not plain:
        return False, None, opened
    try:
        return True, _orjson.loads(data), opened
    except _orjson.JSONDecodeError:
        return False, None, opened


def canonical_json(value: Any) -> bytes:
    """The canonical bytes of a JSON value: keys sorted, no spaces, UTF-8 kept."""
    if _orjson is not None:
        try:
            spelled: bytes = _orjson.dumps(value, option=_orjson.OPT_SORT_KEYS)
        except (TypeError, _orjson.JSONEncodeError):
            pass  # beyond orjson (a large integer, a lone surrogate, deep nesting)
        else:
            if spelled.find(b"null") < 0:  # NaN and infinities are written as null
                return spelled
    return compact_json(value).encode("utf-8")


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
    with its C encoder built once: ``json.dumps`` builds one a call for these options,
    about half the cost of spelling a small value. No check for cycles: a JSON value has
    none."""
    encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - an interpreter without json's C speedups
        return encoder.encode
    spell = make(
        None, encoder.default, json.encoder.encode_basestring, None, ":", ",", True, False, True
    )
    return lambda value: "".join(spell(value, 0))


compact_json = _compact_encoder()
"""The canonical serialisation as text: sorted keys, no spaces, UTF-8 kept (``json``'s
spelling: :func:`canonical_json` spells the same values as bytes at C speed)."""
