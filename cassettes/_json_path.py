"""Dotted JSON paths such as ``contents[*].parts[*].thoughtSignature`` (redaction, matching).

Syntax: keys separated by ``.``; ``[n]`` selects a list item, ``[*]`` every item; a key
written ``*`` selects every key of an object. Paths never create keys: a path that does
not exist in a document leaves it unchanged. Operations return new values and never
mutate their input (bodies belong to cassette models).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from cassettes._errors import InputError

__all__ = [
    "WILDCARD",
    "Segment",
    "checked_json_paths",
    "delete_at",
    "parse_json_path",
    "render_json_path",
    "replace_at",
]


class _Wildcard:
    def __repr__(self) -> str:
        return "WILDCARD"


WILDCARD = _Wildcard()
"""Matches every key of an object or every item of a list."""

Segment = str | int | _Wildcard

_KEY = r"[^.\[\]]+"
_INDEX = r"\[(?:\*|\d+)\]"
_VALID = re.compile(rf"^(?:{_KEY}|{_INDEX})(?:\.{_KEY}|{_INDEX})*$")
_PART = re.compile(rf"\[(\*|\d+)\]|({_KEY})")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def parse_json_path(text: str) -> tuple[Segment, ...]:
    """Parse ``a.b[*].c[0]`` into segments.

    Raises:
        InputError: the path is empty or malformed (names the path and the fix).
    """
    if not _VALID.match(text):
        raise InputError(
            f"malformed JSON path {text!r}",
            fix="Write keys separated by dots, with [n] or [*] for list items, "
            "e.g. contents[*].parts[*].thoughtSignature",
        )
    segments: list[Segment] = []
    for index, key in _PART.findall(text):
        if key:
            segments.append(WILDCARD if key == "*" else key)
        else:
            segments.append(WILDCARD if index == "*" else int(index))
    return tuple(segments)


def checked_json_paths(paths: tuple[str, ...]) -> tuple[str, ...]:
    """``paths``, each checked by :func:`parse_json_path` (for an option's validator).

    Raises:
        InputError: a path is empty or malformed.
    """
    for path in paths:
        parse_json_path(path)
    return paths


def render_json_path(segments: tuple[object, ...] | list[object]) -> str:
    """Render segments as ``a.b[0].c`` (keys that are not identifiers are quoted)."""
    out = ""
    for part in segments:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        elif isinstance(part, _Wildcard):
            out += "[*]"
        elif isinstance(part, str) and _IDENTIFIER.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{str(part)!r}]"
    return out


_DELETE = object()


def _transform(
    value: object, segments: tuple[Segment, ...], leaf: Callable[[object], object]
) -> object:
    if not segments:
        return leaf(value)
    head, rest = segments[0], segments[1:]
    if isinstance(value, dict):
        if isinstance(head, _Wildcard):
            keys = list(value)
        elif isinstance(head, str) and head in value:
            keys = [head]
        else:
            return value
        changed = dict(value)
        for key in keys:
            new = _transform(value[key], rest, leaf)
            if new is _DELETE:
                del changed[key]
            else:
                changed[key] = new
        return changed
    if isinstance(value, list):
        if isinstance(head, _Wildcard):
            indexes = range(len(value))
        elif isinstance(head, int) and -len(value) <= head < len(value):
            indexes = range(head % len(value), head % len(value) + 1)
        else:
            return value
        items = list(value)
        for i in indexes:
            items[i] = _transform(value[i], rest, leaf)
        return [item for item in items if item is not _DELETE]
    return value


def replace_at(value: object, segments: tuple[Segment, ...], replacement: object) -> object:
    """A copy of ``value`` with every existing place the path selects set to ``replacement``."""
    return _transform(value, segments, lambda _old: replacement)


def delete_at(value: object, segments: tuple[Segment, ...]) -> object:
    """A copy of ``value`` without the places the path selects (list items are removed)."""
    if not segments:
        return None
    return _transform(value, segments, lambda _old: _DELETE)
