"""Where each exchange lies in a cassette file, and what matching needs of it, without parsing it.

A cassette stays one human-readable JSON file. Loading one lazily needs, per exchange, its
byte span, its id, ``origin`` and request URL, and its bucket key
(``cassettes._bucket_keys``): :func:`scan_layout` reads them from the file's lines in the
layout rec writes (no body is parsed), and :func:`write_side_index` keeps them in a side
index, ``.rec/NAME.cassette.json.idx`` beside the cassette, whenever rec writes a cassette,
so that the next load reads the index instead of scanning the file (a few times faster,
and it touches none of the file's pages but the first and last).

The index is a cache, never trusted: it names the cassette's size and the CRC-32 of all its
bytes, and :func:`read_side_index` uses it only when both still hold, its own shape checks
out and every span lies inside the file. Anything else (no index, a cassette edited by hand
or replaced by another version, or an index that does not parse) is read as if there were
no index: the layout is scanned from the file. Each exchange parsed is checked against the
id the index gives it, too. The CRC covers the whole file because a hand
edit can keep the size and, within the clock's granularity, the mtime; a checksum over the
content also keeps an index valid across a ``git clone`` or ``cp``, where the mtime changes.
It is computed over the file read in 1 MiB pieces (40-100 ms for 77 MB on a 2-core machine,
idle to loaded), so the check costs no memory. A file hash (blake2b, sha1) costs 2-4x as much.
"""

from __future__ import annotations

import io
import json
import mmap
import operator
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cassettes._atomic_write import write_atomic
from cassettes._bucket_keys import BucketKey, bucket_key, json_scalar, raw_bucket_key, route_of
from cassettes._file_names import side_index_file

__all__ = [
    "SIDE_INDEX_VERSION",
    "CassetteLayout",
    "crc32_of",
    "let_go",
    "map_file",
    "read_side_index",
    "scan_layout",
    "spans_of",
    "write_side_index",
]

SIDE_INDEX_VERSION = 2
"""Version of the side index format this rec writes and reads (2: with each exchange's
``recorded_at`` and ``duration_ms``; an index of another version is not read)."""

# The layout ``dump_cassette`` writes (indent 2): JSON strings hold no raw line break, so
# a line break followed by exactly N spaces is structure. An exchange is an object at
# indent 4 of the top-level ``exchanges`` array; its own keys sit at indent 6.
EXCHANGES_OPEN = b'\n  "exchanges": [\n'
_EXCHANGE_OPEN = b"    {\n"
_EXCHANGE_CLOSE = b"\n    }"
_ARRAY_CLOSE = b"\n  ]"
_ID_LINE = b'\n      "id": '
_ORIGIN_LINE = b'\n      "origin": '
_URL_LINE = b'\n        "url": '
_RECORDED_AT_LINE = b'\n      "recorded_at": '
_DURATION_LINE = b'\n      "duration_ms": '
_PIECE = 1 << 20
_DROP_EVERY = 16 << 20
"""Bytes of a scanned file after which its pages are let go (the scan's memory stays flat)."""


@dataclass
class CassetteLayout:
    """Where a cassette's exchanges lie in its file, and what replay reads of each unparsed."""

    opened: int
    """Offset of the ``exchanges`` key (:data:`EXCHANGES_OPEN`)."""
    closed: int
    """Offset just after the ``exchanges`` array."""
    spans: list[tuple[int, int]] = field(default_factory=list)
    """Each exchange's object, ``start`` to ``end``."""
    ids: list[Any] = field(default_factory=list)
    """Each exchange's ``id`` as written (None where it cannot be read)."""
    origins: list[Any] = field(default_factory=list)
    urls: list[Any] = field(default_factory=list)
    recorded_at: list[Any] = field(default_factory=list)
    """Each exchange's ``recorded_at`` (None where it cannot be read)."""
    durations: list[Any] = field(default_factory=list)
    """Each exchange's ``duration_ms`` (None where it cannot be read; 0.0 when not written,
    its default)."""
    keys: list[BucketKey | None] = field(default_factory=list)
    """Each exchange's bucket key (``use_turns`` on); None: parse the exchange for it."""


def spans_of(
    data: Any, each: Callable[[int, int], None] | None = None
) -> tuple[int, int, list[tuple[int, int]]] | None:
    """(opened, closed, spans) of the exchanges in ``data`` (bytes or an mmap), or None for
    a file not in the layout rec writes; ``each(start, end)`` is called on every span as
    it is found."""
    opened = data.find(EXCHANGES_OPEN)
    if opened < 0:
        return None
    spans: list[tuple[int, int]] = []
    pos = opened + len(EXCHANGES_OPEN)
    find = data.find
    while True:
        if data[pos : pos + len(_EXCHANGE_OPEN)] != _EXCHANGE_OPEN:
            return None
        end = find(_EXCHANGE_CLOSE, pos)
        if end < 0:
            return None
        end += len(_EXCHANGE_CLOSE)
        spans.append((pos, end))
        if each is not None:
            each(pos, end)
        after = data[end : end + len(_ARRAY_CLOSE)]
        if after[:2] == b",\n":
            pos = end + 2
        elif after == _ARRAY_CLOSE:
            return opened, end + len(_ARRAY_CLOSE), spans
        else:
            return None


def _line_value(data: bytes, marker: bytes) -> Any:
    at = data.find(marker)
    if at < 0:
        return None
    at += len(marker)
    try:
        return json_scalar(data[at : data.find(b"\n", at)])
    except ValueError:
        return None


def _duration(chunk: bytes) -> Any:
    """The ``duration_ms`` of the exchange ``chunk``: its default when not written."""
    return _line_value(chunk, _DURATION_LINE) if _DURATION_LINE in chunk else 0.0


def _origin(chunk: bytes) -> Any:
    """The ``origin`` of the exchange ``chunk``: its last key when it has one, so only its
    last line is read."""
    last = chunk.rfind(b"\n", 0, len(chunk) - len(_EXCHANGE_CLOSE))
    if last < 0 or not chunk.startswith(_ORIGIN_LINE, last):
        return None
    try:
        return json_scalar(chunk[last + len(_ORIGIN_LINE) : len(chunk) - len(_EXCHANGE_CLOSE)])
    except ValueError:
        return None


def _parsed_key(chunk: bytes) -> BucketKey | None:
    """The bucket key of an exchange whose lines are not as rec writes them (parsed whole);
    None when it is not shaped like an exchange (its own validation will say how)."""
    try:
        raw = json.loads(chunk)
        request = raw["request"]
        method, url, body = request["method"], request["url"], request.get("body")
        if not isinstance(method, str) or not isinstance(url, str):
            return None
        if body is None:
            return bucket_key(method, url, None)
        kind = body["kind"]
        return bucket_key(method, url, kind, body.get("value")) if isinstance(kind, str) else None
    except (ValueError, RecursionError, TypeError, KeyError, AttributeError):
        return None


def map_file(handle: io.BufferedReader, size: int) -> mmap.mmap | bytes:
    """The bytes of the open file ``handle`` (``size`` bytes, not 0) as a read-only map, whose
    pages count in memory only once read; read whole on Windows, where a mapped file cannot
    be replaced, and where the file system cannot map it."""
    if sys.platform != "win32":
        try:
            return mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            pass  # a file system that cannot map files: read it
    handle.seek(0)
    return handle.read(size)


def scan_layout(data: mmap.mmap | bytes) -> CassetteLayout | None:
    """The layout of a cassette file's bytes (:func:`map_file`), read from its lines, the
    map's pages let go as the scan passes them; None for a file not in the layout rec
    writes."""
    layout = CassetteLayout(0, 0)
    dropped = 0

    def read(start: int, end: int) -> None:
        nonlocal dropped
        chunk = data[start:end]
        layout.ids.append(_line_value(chunk, _ID_LINE))
        layout.origins.append(_origin(chunk))
        layout.urls.append(_line_value(chunk, _URL_LINE))
        layout.recorded_at.append(_line_value(chunk, _RECORDED_AT_LINE))
        layout.durations.append(_duration(chunk))
        key = raw_bucket_key(chunk, 0, len(chunk))
        layout.keys.append(key if key is not None else _parsed_key(chunk))
        if end - dropped >= _DROP_EVERY:
            let_go(data, dropped, end)
            dropped = end - end % mmap.PAGESIZE

    found = spans_of(data, read)
    let_go(data, dropped, len(data))
    if found is None:
        return None
    layout.opened, layout.closed, layout.spans = found
    return layout


def let_go(data: mmap.mmap | bytes, start: int, end: int) -> None:
    """Drop a map's pages between ``start`` (page-aligned) and ``end`` from this process's
    memory (they stay in the page cache; reading them again faults them back in)."""
    advise: Callable[..., None] | None = getattr(data, "madvise", None)
    length = (end - start) - (end - start) % mmap.PAGESIZE
    if advise is not None and length > 0 and hasattr(mmap, "MADV_DONTNEED"):
        advise(mmap.MADV_DONTNEED, start, length)


def crc32_of(handle: io.BufferedReader) -> int:
    """The CRC-32 of an open file's bytes, read from its start in 1 MiB pieces."""
    handle.seek(0)
    buffer = bytearray(_PIECE)
    view = memoryview(buffer)
    crc = 0
    while True:
        count = handle.readinto(buffer)
        if not count:
            return crc
        crc = zlib.crc32(view[:count], crc)


def write_side_index(
    cassette: Path,
    data: bytes,
    rows: list[tuple[Any, Any, str, BucketKey, str, float]],
    *,
    mode: int,
) -> Path | None:
    """Write the side index of the cassette just written at ``cassette`` with ``data``,
    whose exchanges are ``rows`` of (id, origin, request URL, bucket key, recorded_at,
    duration_ms), in file order.

    The index is one JSON object with a column per field (so that reading it checks each
    column at C speed); the distinct (method, URL) pairs are listed once and numbered.
    Returns the index written, or None when ``data`` is not in the layout rec writes.

    Raises:
        OSError: the index could not be written (the cassette is written all the same;
            an old index left behind no longer matches it and is ignored).
    """
    found = spans_of(data)
    if found is None or len(found[2]) != len(rows):
        return None
    opened, closed, spans = found
    requests: dict[tuple[str, str], int] = {}
    numbers = [requests.setdefault((str(row[3][0]), row[2]), len(requests)) for row in rows]
    document = {
        "rec_side_index": SIDE_INDEX_VERSION,
        "cassette": {"size": len(data), "crc32": zlib.crc32(data)},
        "exchanges_at": [opened, closed],
        "requests": [list(pair) for pair in requests],
        "starts": [start for start, _ in spans],
        "ends": [end for _, end in spans],
        "ids": [row[0] for row in rows],
        "origins": [row[1] for row in rows],
        "request": numbers,
        "kinds": [row[3][3] for row in rows],
        "turns": [row[3][4] if len(row[3]) > 4 else None for row in rows],
        "last_turns": [row[3][5] if len(row[3]) > 4 else None for row in rows],
        "recorded_at": [row[4] for row in rows],
        "durations": [row[5] for row in rows],
    }
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    return write_atomic(side_index_file(cassette), text + "\n", mode=mode)


def read_side_index(cassette: Path, handle: io.BufferedReader, size: int) -> CassetteLayout | None:
    """The layout the side index of ``cassette`` (open as ``handle``, ``size`` bytes) holds,
    or None when there is none, it does not parse, or it does not fit the file as it is."""
    try:
        with side_index_file(cassette).open("rb") as index:
            document = json.loads(index.read())
        layout = _layout_from(document, size)
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None
    if layout is None or document["cassette"]["crc32"] != crc32_of(handle):
        return None
    return layout


def _only(values: list[Any], *kinds: type) -> bool:
    return isinstance(values, list) and set(map(type, values)) <= set(kinds)


def _layout_from(document: dict[str, Any], size: int) -> CassetteLayout | None:
    if document.get("rec_side_index") != SIDE_INDEX_VERSION:
        return None
    if document["cassette"]["size"] != size:
        return None
    opened, closed = document["exchanges_at"]
    if type(opened) is not int or type(closed) is not int or not 0 < opened < closed <= size:
        return None
    pairs = document["requests"]
    if not _only(pairs, list) or not all(_only(pair, str) and len(pair) == 2 for pair in pairs):
        return None
    starts, ends, numbers = document["starts"], document["ends"], document["request"]
    kinds, turns, lasts = document["kinds"], document["turns"], document["last_turns"]
    ids, origins = document["ids"], document["origins"]
    recorded_at, durations = document["recorded_at"], document["durations"]
    columns = (starts, ends, numbers, kinds, turns, lasts, ids, origins, recorded_at, durations)
    if not all(isinstance(c, list) and len(c) == len(starts) for c in columns):
        return None
    if not (
        _only(starts, int)
        and _only(ends, int)
        and _only(numbers, int)
        and _only(kinds, str)
        and _only(turns, int, type(None))
        and _only(lasts, str, type(None))
        and _only(recorded_at, str)
        and _only(durations, int, float)
        and all(map(operator.lt, starts, ends))
        and all(map(operator.lt, ends[:-1], starts[1:]))
        and (not starts or (starts[0] > opened and ends[-1] < closed))
        and (not numbers or (min(numbers) >= 0 and max(numbers) < len(pairs)))
        and [t is None for t in turns] == [last is None for last in lasts]
    ):
        return None
    routes = [route_of(method, url) for method, url in pairs]
    layout = CassetteLayout(opened, closed, list(zip(starts, ends, strict=True)))
    layout.ids, layout.origins = ids, origins
    layout.recorded_at, layout.durations = recorded_at, durations
    layout.urls = [pairs[n][1] for n in numbers]
    layout.keys = [
        (*routes[n], kind) if count is None else (*routes[n], kind, count, last)
        for n, kind, count, last in zip(numbers, kinds, turns, lasts, strict=True)
    ]
    return layout
