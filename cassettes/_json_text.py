"""``json.dumps(value, indent=2, ensure_ascii=False)``, byte for byte, several times faster.

The standard library encodes with its C accelerator only when there is no indent; with
one it runs a generator per container in Python, which dominates writing a large cassette.
:func:`dumps_indent2` writes the same text with one recursive function appending to a list,
strings encoded by the C string encoder and numbers by their ``repr``, as ``json`` does.
:func:`dump_model_indent2` writes a pydantic model's ``model_dump(mode="json")`` the same
way, serialised by pydantic-core (Rust) with only the floats it spells differently from
``repr`` (``1e-9``, ``0.00001``) rewritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from json.encoder import encode_basestring
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

__all__ = ["dump_model_indent2", "dump_model_indent2_bytes", "dumps_indent2"]

_FLOAT_REPR = float.__repr__
_INT_REPR = int.__repr__


def dumps_indent2(value: Any) -> str:
    """What ``json.dumps(value, indent=2, ensure_ascii=False)`` returns.

    Anything that is not a dict, list, tuple, str, int, float, bool or None (or whose
    dict keys are not str) is handed to ``json.dumps`` itself, which raises as it would.
    """
    out: list[str] = []
    try:
        _write(value, out, "\n")
    except _Unusual:
        return json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(out)


_APART = (re.compile(rb"e-[1-9]"), re.compile(rb"0\.0000"))
"""Where pydantic-core spells a float other than ``repr``: a one-digit negative exponent
(``1e-9`` for ``1e-09``) and a number below 1e-4 written out (``0.00001`` for ``1e-05``).
Every other float, and every int, it spells as ``repr`` does."""
_NUMBER = re.compile(rb"-?[0-9][0-9.]*(?:e[-+]?[0-9]+)?")
_NUMBER_CHARS = frozenset(b"0123456789.")
_MINUS, _SPACE = ord("-"), ord(" ")


def dump_model_indent2(model: BaseModel) -> str:
    """``dumps_indent2(model.model_dump(mode="json", exclude_none=True))``, without the
    Python objects in between."""
    data = _pydantic_text(model)
    if data is None:
        return _json_text(model)
    return data.decode("utf-8")


def dump_model_indent2_bytes(model: BaseModel) -> bytes:
    """:func:`dump_model_indent2` encoded as UTF-8, without a Python ``str`` in between
    (a large cassette's text is not decoded and encoded again).

    Raises:
        UnicodeEncodeError: the model holds a lone surrogate (UTF-8 cannot hold one).
    """
    data = _pydantic_text(model)
    if data is None:
        return _json_text(model).encode("utf-8")
    return data


def _pydantic_text(model: BaseModel) -> bytes | None:
    """pydantic-core's indent-2 UTF-8 of ``model`` with its floats :func:`_respelled`; None
    for a model holding a lone surrogate (json writes one, pydantic-core does not)."""
    try:
        data = type(model).__pydantic_serializer__.to_json(model, indent=2, exclude_none=True)
    except PydanticSerializationError:
        return None
    return _respelled(data)


def _json_text(model: BaseModel) -> str:
    """The same text through ``json``, for what pydantic-core cannot write."""
    return dumps_indent2(model.model_dump(mode="json", exclude_none=True))


def _respelled(text: bytes) -> bytes:
    """``text`` (pydantic-core's UTF-8) with each float :data:`_APART` names spelled as
    ``repr`` spells it.

    A number is a value only where it ends a line (``,`` or a line break after it; a JSON
    string holds no raw line break) after ``": `` or an array's indent, so text that looks
    like a number inside a string is left alone.
    """
    spans: dict[int, int] = {}
    for hint in _APART:
        for found in hint.finditer(text):
            start = found.start()
            while start and text[start - 1] in _NUMBER_CHARS:
                start -= 1
            if start and text[start - 1] == _MINUS:
                start -= 1
            number = _NUMBER.match(text, start)
            if number is not None and start and text[start - 1] == _SPACE:
                end = number.end()
                if text.startswith(b"\n", end) or text.startswith(b",\n", end):
                    spans[start] = end
    if not spans:
        return text
    out: list[bytes] = []
    done = 0
    for start in sorted(spans):
        end = spans[start]
        out.append(text[done:start])
        out.append(_FLOAT_REPR(float(text[start:end])).encode("ascii"))
        done = end
    out.append(text[done:])
    return b"".join(out)


class _Unusual(Exception):
    """A value :func:`_write` leaves to ``json.dumps``."""


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return str(encode_basestring(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return _INT_REPR(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _Unusual
        return _FLOAT_REPR(value)
    raise _Unusual


def _write(value: Any, out: list[str], newline: str) -> None:
    """``value`` as indent-2 JSON text after ``newline``'s indent: one loop writes an
    object's members and an array's items alike."""
    keyed = isinstance(value, dict)
    if keyed:
        members: Iterable[tuple[Any, Any]] = value.items()
        opener, closer = "{", "}"
    elif isinstance(value, (list, tuple)):
        members = ((None, item) for item in value)
        opener, closer = "[", "]"
    else:
        out.append(_scalar(value))
        return
    if not value:
        out.append(opener + closer)
        return
    inner = newline + "  "
    lead = opener + inner
    for key, item in members:
        if keyed:
            if not isinstance(key, str):
                raise _Unusual
            lead += encode_basestring(key) + ": "
        out.append(lead)
        lead = "," + inner
        if isinstance(item, (dict, list, tuple)):
            _write(item, out, inner)
        else:
            out.append(_scalar(item))
    out.append(newline + closer)
