"""Whether an EvalSet document is certainly clean, decided without pydantic.

``rec check`` runs in loops and pre-commit hooks, where nearly every file is clean, and
importing pydantic and building the EvalSet validator costs several times a bare
``python``. :func:`certainly_clean` walks a parsed document against the schema of the
models (:mod:`cassettes._evalset_shape`, generated from them) and answers True only when
the strict check (:func:`cassettes._checking.check_document`) would report nothing: every
key known and spelled once, every value of the exact JSON type the field holds, every rule
of the model validators met. Anything else (an unknown key, a value pydantic would coerce,
an enum value in another case, a scenario instead of turns) answers False, and the file
goes through the strict check, which names each problem. The answer is one-sided by
design: False never means the file is broken. The walk also outruns the strict check on
big files (0.5 s against 1.5 s for 1.5 MB: no model objects are made).

``tests/cassettes/test_evalset_quick.py`` pins that one side against the strict check.
"""

from __future__ import annotations

import binascii
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cassettes._errors import InputError
from cassettes._evalset_shape import ROOT, SHAPES
from cassettes._file_names import CASSETTE_SUFFIX, CONFIG_NAMES
from cassettes._json_file import parse_json, read_file

__all__ = [
    "ID_CONTROL",
    "certainly_clean",
    "clean_document",
    "clean_evalset_document",
    "clean_evalset_file",
    "read_evalset",
]

ID_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""What an eval set or case id must not hold (``cassettes._evalset``'s rule, the same
pattern: the shape's generator checks it)."""

_INT_LIMIT = 2**63
_FLOAT_EXACT = 2**53
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_URL_SAFE = str.maketrans("-_", "+/")


def clean_evalset_file(path: str | Path) -> bool:
    """True only if ``path`` is an EvalSet file in which ``rec check`` finds no problem."""
    return clean_evalset_document(path) is not None


def clean_evalset_document(path: str | Path) -> Any | None:
    """The parsed JSON of ``path`` if it is an EvalSet file in which ``rec check`` finds no
    problem, else None."""
    read = read_evalset(path)
    return read[1] if read is not None and clean_document(read[1]) else None


def read_evalset(path: str | Path) -> tuple[bytes, Any] | None:
    """The bytes and parsed JSON of ``path`` when it may be an EvalSet file (it is not named
    as an eval config or a cassette) and is JSON, else None."""
    file = Path(path)
    if file.name in CONFIG_NAMES or file.name.endswith(CASSETTE_SUFFIX):
        return None
    try:
        data = read_file(file, what="file")
        return data, parse_json(data, path=file)
    except InputError:
        return None


def clean_document(document: object) -> bool:
    """Whether a parsed EvalSet document is one in which ``rec check`` finds no problem."""
    if _deeper_than(document, _ADK_DEPTH - 10):
        return False  # near ADK's reader's limit: the strict check decides and says why
    return certainly_clean(document)


_ADK_DEPTH = 200
"""The nesting pydantic's JSON parser, and so ADK's eval set reader, stops at."""


def _deeper_than(document: object, limit: int) -> bool:
    """Whether ``document`` nests more than ``limit`` levels of arrays and objects
    (without importing pydantic's parser, which the quick path never loads)."""
    level: list[tuple[object, int]] = [(document, 1)]
    while level:
        value, depth = level.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        level.extend((child, depth + 1) for child in children)
    return False


def certainly_clean(document: object) -> bool:
    """True only if the strict EvalSet check of ``document`` finds no problem at all."""
    try:
        return _model(SHAPES[ROOT], document)
    except RecursionError:
        return False


def _value(node: tuple[Any, ...], value: object) -> bool:
    check = _KINDS.get(node[0])
    return check is not None and check(node, value)  # an unknown kind is never clean


def _dict(node: tuple[Any, ...], value: object) -> bool:
    return type(value) is dict and all(
        _value(node[1], key) and _value(node[2], item) for key, item in value.items()
    )


def _tuple(node: tuple[Any, ...], value: object) -> bool:
    items = node[1]
    return (
        type(value) is list
        and len(value) == len(items)
        and all(_value(item, v) for item, v in zip(items, value, strict=True))
    )


def _tagged(node: tuple[Any, ...], value: object) -> bool:
    tag = _DISCRIMINATORS[node[1]](node[2], value)
    return tag is not None and _value(node[2][tag], value)


def _float(node: tuple[Any, ...], value: object) -> bool:
    if type(value) is int:
        if not -_FLOAT_EXACT < value < _FLOAT_EXACT:
            return False
    elif type(value) is not float or not math.isfinite(value):
        return False
    _, ge, le = node
    return (ge is None or value >= ge) and (le is None or value <= le)


def _base64(text: str) -> bool:
    """Padded base64 in one alphabet: the standard one or the URL-safe one pydantic writes."""
    if "-" in text or "_" in text:
        if "+" in text or "/" in text:
            return False
        text = text.translate(_URL_SAFE)
    if len(text) % 4 or not _BASE64.fullmatch(text):
        return False
    try:
        binascii.a2b_base64(text, strict_mode=True)
    except binascii.Error:
        return False
    return True


def _fields(shape: tuple[Any, ...], value: object) -> dict[str, Any] | None:
    """The document's values by the field's first spelling, if every key is known and used once."""
    if type(value) is not dict:
        return None
    _, fields, _ = shape
    found: dict[str, Any] = {}
    seen = 0
    for keys, node, required in fields:
        present = [key for key in keys if key in value]
        if len(present) > 1:
            return None
        if present:
            item = value[present[0]]
            if not _value(node, item):
                return None
            found[keys[0]] = item
            seen += 1
        elif required:
            return None
    if seen != len(value):
        return None  # an unknown key: the strict check names it
    return found


def _model(shape: tuple[Any, ...], value: object) -> bool:
    found = _fields(shape, value)
    if found is None:
        return False
    check = shape[2]
    return check is None or _CHECKS[check](found)


def _unique_eval_ids(evalset: dict[str, Any]) -> bool:
    ids = [_get(case, "evalId") for case in _get(evalset, "evalCases")]
    return len(set(ids)) == len(ids)


def _one_conversation(case: dict[str, Any]) -> bool:
    return bool(_get(case, "conversation")) and _get(case, "conversationScenario") is None


def _sendable_user_turn(invocation: dict[str, Any]) -> bool:
    parts = _get(_get(invocation, "userContent"), "parts") or []
    if any(_get(part, "functionResponse") is not None for part in parts):
        return False
    return any(type(part.get("text")) is str and part["text"] for part in parts)


def _get(model: dict[str, Any], camel: str) -> Any:
    """A field of a document already found clean, by either spelling (each is used once);
    the validators' twins read the raw dicts and :func:`_fields`' by-first-spelling dicts
    alike."""
    if camel in model:
        return model[camel]
    snake = re.sub("([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return model.get(snake)


def _intermediate_shape(choices: dict[str, Any], value: object) -> str | None:
    """``cassettes._evalset._intermediate_shape`` for documents: the choice a dict's keys name."""
    if value is None:
        return "None"
    if type(value) is not dict:
        return None
    shape = {
        tag: any(key in value for keys, _, _ in SHAPES[node[1]][1] for key in keys)
        for tag, node in choices.items()
        if node[0] == "ref"
    }
    if shape.get("InvocationEvents") and shape.get("IntermediateData"):
        return None
    return "InvocationEvents" if shape.get("InvocationEvents") else "IntermediateData"


_KINDS: dict[str, Callable[[tuple[Any, ...], object], bool]] = {
    "any": lambda node, value: True,
    "str": lambda node, value: type(value) is str,
    "id": lambda node, value: type(value) is str and ID_CONTROL.search(value) is None,
    "nullable": lambda node, value: value is None or _value(node[1], value),
    "ref": lambda node, value: _model(SHAPES[node[1]], value),
    "list": lambda node, value: type(value) is list and all(_value(node[1], v) for v in value),
    "bool": lambda node, value: type(value) is bool,
    "int": lambda node, value: type(value) is int and -_INT_LIMIT < value < _INT_LIMIT,
    "float": _float,
    "literal": lambda node, value: any(type(value) is type(v) and value == v for v in node[1]),
    "dict": _dict,
    "tuple": _tuple,
    "bytes": lambda node, value: type(value) is str and _base64(value),
    "none": lambda node, value: value is None,
    "tagged": _tagged,
}
"""How each kind of node in :data:`cassettes._evalset_shape.SHAPES` checks a value."""

_CHECKS = {
    "unique_eval_ids": _unique_eval_ids,
    "one_conversation": _one_conversation,
    "sendable_user_turn": _sendable_user_turn,
}
_DISCRIMINATORS = {"intermediate_shape": _intermediate_shape}
