"""The one walk over a JSON-like document's strings, for masking, redacting and scanning.

:func:`map_strings` visits every string and key of a document in document order (a key
before its value) with its JSON path, and builds the document again from what the visit
returns: masking and redaction rewrite strings with it, the secret scan reads them with it
(returning each string unchanged). :func:`stream_texts` adds what no single string holds:
each recorded event stream's strings joined across its events, where a credential the
upstream split over two events is whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from cassettes._exact_json import nests_too_deep
from cassettes._json_path import WILDCARD

__all__ = ["JsonPath", "Visit", "lines_data", "map_strings", "stream_texts"]

JsonPath = tuple[object, ...]
"""Where a string stands: keys and list indexes from the document's root."""
Visit = Callable[[JsonPath, str, bool], str]
"""Called with each string's path, the string and whether it is a key; returns the string
that takes its place."""


def map_strings(value: Any, visit: Visit, path: JsonPath | None = ()) -> Any:
    """``value`` with every string and key replaced by what ``visit`` returns for it.

    Dicts and lists (and tuples, given back as lists) are built again; values other than
    strings are kept as they are. A key's path is its value's path. With ``path=None`` no
    path is built (``visit`` is given ``()``): the walk of a caller that rewrites every
    string alike.
    """
    if isinstance(value, str):
        return visit(path or (), value, False)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            inner = None if path is None else (*path, key)
            new_key = visit(inner or (), key, True) if isinstance(key, str) else key
            out[new_key] = map_strings(item, visit, inner)
        return out
    if isinstance(value, (list, tuple)):
        if path is None:
            return [map_strings(item, visit, None) for item in value]
        return [map_strings(item, visit, (*path, index)) for index, item in enumerate(value)]
    return value


def _stream_bodies(document: Any) -> Iterator[tuple[JsonPath, dict[str, Any]]]:
    """The recorded event streams of a cassette, an exchange or a body, with their paths."""
    if not isinstance(document, dict):
        return
    if document.get("kind") == "sse":
        yield (), document
        return
    exchanges = document.get("exchanges")
    pairs = enumerate(exchanges) if isinstance(exchanges, list) else [(None, document)]
    for index, exchange in pairs:
        response = exchange.get("response") if isinstance(exchange, dict) else None
        body = response.get("body") if isinstance(response, dict) else None
        if isinstance(body, dict) and body.get("kind") == "sse":
            prefix: JsonPath = ("exchanges", index) if index is not None else ()
            yield (*prefix, "response", "body"), body


def _joined_events(events: list[Any]) -> dict[JsonPath, list[str]]:
    """The strings of ``events`` gathered by their place inside an event, in event order."""
    joined: dict[JsonPath, list[str]] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        lines = [line for line in event.get("lines") or () if isinstance(line, str)]
        data = event.get("data")
        if data is None and lines:
            data = lines_data(lines)
        if data is not None:
            _gather(data, ("data",), joined)
        for line in lines:
            joined.setdefault(("lines",), []).append(line.removeprefix("data: "))
    return joined


def _gather(value: Any, path: JsonPath, joined: dict[JsonPath, list[str]]) -> None:
    """Add each string value of ``value`` (not a key) to ``joined`` at its path, in
    document order: :func:`map_strings`' visit order, with nothing built again."""
    if isinstance(value, str):
        joined.setdefault(path, []).append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _gather(item, (*path, key), joined)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _gather(item, (*path, index), joined)


def stream_texts(document: Any) -> Iterator[tuple[JsonPath, str]]:
    """Each string of a recorded event stream joined across its events.

    A credential the upstream split over two events is whole only here. Strings at the
    same place in successive events (``candidates[0].content.parts[0].text``, Anthropic's
    ``delta.text``) are joined in event order, as a client joins them, whether the event
    is stored parsed (``data``) or verbatim (``lines``: an ``event:`` line beside its JSON
    ``data:``); raw event lines are joined too.
    """
    for path, body in _stream_bodies(document):
        events = body.get("events")
        if not isinstance(events, list) or len(events) < 2:
            continue
        for inner, texts in _joined_events(events).items():
            if len(texts) > 1:
                yield (*path, "events", WILDCARD, *inner), "".join(texts)


def lines_data(lines: list[str]) -> Any:
    """The JSON an event's ``data:`` lines carry (joined by newlines, as the event-stream
    format joins them), or None (no data, not JSON, or nested deeper than a walk of it may
    recurse: its lines are still joined as text)."""
    data = [line[5:].removeprefix(" ") for line in lines if line.startswith("data:")]
    if not data:
        return None
    text = "\n".join(data)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return None if nests_too_deep(text, value) else value
