"""Where each exchange lies in a cassette file, and what matching needs of it, without parsing it.

A cassette stays one human-readable JSON file. Loading one lazily needs, per exchange, its
byte span, its id, ``origin``, request URL, ``recorded_at`` and ``duration_ms``, and its
bucket key (``cassettes._bucket_keys``): :func:`scan_layout` reads them from the file's
lines in the layout rec writes (no body is parsed), and :func:`side_index_text` keeps
them in a side index, ``.rec/NAME.cassette.json.idx`` beside the cassette, whenever rec
writes a cassette, with the digest of each request's first user turn
(``cassettes._first_user``) and of its JSON body as google-genai sends it
(``cassettes._wire_digest``: a request equal to it is matched without being parsed), so
that the next load reads the index instead of scanning the file (a few times faster, and
it touches none of the file's pages but the first and last).
Its columns are packed, and read into arrays: a load keeps no Python object per exchange,
and replaying one case of a long recording costs what the case uses.

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

import array
import base64
import io
import itertools
import json
import mmap
import operator
import re
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cassettes import _dump_layout as written
from cassettes._bucket_keys import BucketKey, bucket_key, json_scalar, raw_bucket_key, route_of
from cassettes._file_names import side_index_file
from cassettes._wire_digest import DIGEST_SIZE, recorded_wire_digest

__all__ = [
    "SIDE_INDEX_VERSION",
    "CassetteLayout",
    "crc32_of",
    "let_go",
    "map_file",
    "read_side_index",
    "scan_layout",
    "side_index_text",
    "spans_of",
]

SIDE_INDEX_VERSION = 2
"""Version of the side index format this rec writes and reads (2: with each exchange's
``recorded_at`` and ``duration_ms``; an index of another version is not read)."""

_PIECE = 1 << 20
_DROP_EVERY = 16 << 20
"""Bytes of a scanned file after which its pages are let go (the scan's memory stays flat)."""


@dataclass
class CassetteLayout:
    """Where a cassette's exchanges lie in its file, and what replay reads of each unparsed."""

    opened: int
    """Offset of the ``exchanges`` key (:data:`cassettes._dump_layout.EXCHANGES_OPEN`)."""
    closed: int
    """Offset just after the ``exchanges`` array."""
    spans: Sequence[tuple[int, int]] = field(default_factory=list)
    """Each exchange's object, ``start`` to ``end``."""
    ids: Sequence[Any] = field(default_factory=list)
    """Each exchange's ``id`` as written (None where it cannot be read)."""
    origins: Sequence[Any] = field(default_factory=list)
    urls: Sequence[Any] = field(default_factory=list)
    recorded_at: Sequence[Any] = field(default_factory=list)
    """Each exchange's ``recorded_at`` (None where it cannot be read)."""
    durations: Sequence[Any] = field(default_factory=list)
    """Each exchange's ``duration_ms`` (None where it cannot be read; 0.0 when not written,
    its default)."""
    first_users: Sequence[str] | None = None
    """Each exchange's :func:`~cassettes._first_user.first_user_digest` ('' for none); None
    when not known (a scanned file: its bytes are searched instead)."""
    keys: Sequence[BucketKey | None] = field(default_factory=list)
    """Each exchange's bucket key (``use_turns`` on); None: parse the exchange for it."""
    wires: bytes | None = None
    """Each exchange's :func:`~cassettes._wire_digest.recorded_wire_digest`
    (:data:`~cassettes._wire_digest.NO_DIGEST` for none), one after another
    (:data:`~cassettes._wire_digest.DIGEST_SIZE` bytes each); None when not known (a
    scanned file, or an index written without them)."""


_EXCHANGE_CLOSE = re.compile(re.escape(written.EXCHANGE_CLOSE))
"""The line that closes an exchange. Found with ``re``, not ``bytes.find``: in an indented
file nearly every byte is a space or a newline, which ``bytes.find``'s skip table cannot
skip over (4x slower on a 46 MB cassette, bench/bench_stop.py)."""


def spans_of(
    data: Any, each: Callable[[int, int], None] | None = None
) -> tuple[int, int, list[tuple[int, int]]] | None:
    """(opened, closed, spans) of the exchanges in ``data`` (bytes or an mmap), or None for
    a file not in the layout rec writes; ``each(start, end)`` is called on every span as
    it is found."""
    opened = data.find(written.EXCHANGES_OPEN)
    if opened < 0:
        return None
    spans: list[tuple[int, int]] = []
    pos = opened + len(written.EXCHANGES_OPEN)
    search = _EXCHANGE_CLOSE.search
    while True:
        if data[pos : pos + len(written.EXCHANGE_OPEN)] != written.EXCHANGE_OPEN:
            return None
        found = search(data, pos)
        if found is None:
            return None
        end = found.end()
        spans.append((pos, end))
        if each is not None:
            each(pos, end)
        after = data[end : end + len(written.ARRAY_CLOSE)]
        if after[:2] == b",\n":
            pos = end + 2
        elif after == written.ARRAY_CLOSE:
            return opened, end + len(written.ARRAY_CLOSE), spans
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
    return _line_value(chunk, written.DURATION_LINE) if written.DURATION_LINE in chunk else 0.0


def _origin(chunk: bytes) -> Any:
    """The ``origin`` of the exchange ``chunk``: its last key when it has one, so only its
    last line is read."""
    last = chunk.rfind(b"\n", 0, len(chunk) - len(written.EXCHANGE_CLOSE))
    if last < 0 or not chunk.startswith(written.ORIGIN_LINE, last):
        return None
    try:
        return json_scalar(
            chunk[last + len(written.ORIGIN_LINE) : len(chunk) - len(written.EXCHANGE_CLOSE)]
        )
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
    ids: list[Any] = []
    origins: list[Any] = []
    urls: list[Any] = []
    recorded_at: list[Any] = []
    durations: list[Any] = []
    keys: list[BucketKey | None] = []
    dropped = 0

    def read(start: int, end: int) -> None:
        nonlocal dropped
        chunk = data[start:end]
        ids.append(_line_value(chunk, written.ID_LINE))
        origins.append(_origin(chunk))
        urls.append(_line_value(chunk, written.URL_LINE))
        recorded_at.append(_line_value(chunk, written.RECORDED_AT_LINE))
        durations.append(_duration(chunk))
        key = raw_bucket_key(chunk, 0, len(chunk))
        keys.append(key if key is not None else _parsed_key(chunk))
        if end - dropped >= _DROP_EVERY:
            let_go(data, dropped, end)
            dropped = end - end % mmap.PAGESIZE

    found = spans_of(data, read)
    let_go(data, dropped, len(data))
    if found is None:
        return None
    layout = CassetteLayout(*found, ids=ids, origins=origins, urls=urls, keys=keys)
    layout.recorded_at, layout.durations = recorded_at, durations
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


def side_index_text(
    data: bytes, rows: list[tuple[Any, Any, str, BucketKey, str, float, str]]
) -> str | None:
    """The side index of a cassette written as ``data``, whose exchanges are ``rows`` of
    (id, origin, request URL, bucket key, recorded_at, duration_ms, first user turn's
    digest or ''), in file order; the caller writes it to :func:`side_index_file` of the
    cassette, once the cassette is in place.

    The index is one JSON object; the distinct (method, URL, body kind) triples are listed
    once and numbered, and every other field is a column packed in one string (numbers as
    base64 of little-endian machine values, strings joined with their ends as numbers), so
    that reading it makes a few objects, not several per exchange.
    None when ``data`` is not in the layout rec writes.
    """
    found = spans_of(data)
    if found is None or len(found[2]) != len(rows):
        return None
    if any(row[1] not in (None, "tool") for row in rows):
        return None  # not a valid exchange: no index (the scan reads it, and says so)
    opened, closed, spans = found
    requests: dict[tuple[str, str, str], int] = {}
    numbers = [
        requests.setdefault((str(row[3][0]), row[2], str(row[3][3])), len(requests)) for row in rows
    ]
    document = {
        "rec_side_index": SIDE_INDEX_VERSION,
        "cassette": {"size": len(data), "crc32": zlib.crc32(data)},
        "exchanges_at": [opened, closed],
        "count": len(rows),
        "requests": [list(triple) for triple in requests],
        "starts": _packed("q", [start for start, _ in spans]),
        "ends": _packed("q", [end for _, end in spans]),
        "ids": _packed("q", [row[0] for row in rows]),
        "tools": _packed("B", [int(row[1] == "tool") for row in rows]),
        "request": _packed("q", numbers),
        "turns": _packed("q", [row[3][4] if len(row[3]) > 4 else -1 for row in rows]),
        "last_turns": _packed_strings([str(row[3][5]) if len(row[3]) > 4 else "" for row in rows]),
        "recorded_at": _packed_strings([row[4] for row in rows]),
        "durations": _packed("d", [row[5] for row in rows]),
        "first_users": _packed_strings([row[6] for row in rows]),
        "wires": base64.b64encode(
            b"".join(recorded_wire_digest(data, start, end) for start, end in spans)
        ).decode("ascii"),
    }
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False) + "\n"


def _packed(code: str, values: list[Any]) -> str:
    """``values`` as base64 of little-endian array items of type ``code``."""
    packed = array.array(code, values)
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


def _unpacked(code: str, text: Any, count: int) -> array.array[Any]:
    """The array :func:`_packed` wrote, of ``count`` items.

    Raises:
        ValueError: not such an array.
    """
    if not isinstance(text, str):
        raise ValueError("not a packed column")
    raw = base64.b64decode(text, validate=True)
    packed = array.array(code)
    if len(raw) != count * packed.itemsize:
        raise ValueError("a packed column of another length")
    packed.frombytes(raw)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed


def _packed_strings(values: list[str]) -> dict[str, str]:
    ends = list(itertools.accumulate(map(len, values)))
    return {"text": "".join(values), "ends": _packed("q", ends)}


class _Column(Sequence[Any]):
    """A column's values, each made when it is asked for (from packed columns)."""

    def __init__(self, count: int, item: Callable[[int], Any]) -> None:
        self._count = count
        self._item = item

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if type(index) is int and 0 <= index < self._count:
            return self._item(index)
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return self._item(index)


def _unpacked_strings(document: Any, count: int) -> Callable[[int], str]:
    """The strings :func:`_packed_strings` wrote, ``count`` of them: the one at a position.

    Raises:
        ValueError: not such strings.
    """
    text = document["text"]
    ends = _unpacked("q", document["ends"], count)
    if not isinstance(text, str) or (count and ends[-1] != len(text)):
        raise ValueError("packed strings of another length")
    if any(map(operator.gt, ends[:-1], ends[1:])) or (count and ends[0] < 0):
        raise ValueError("packed strings out of order")
    return lambda i: text[ends[i - 1] if i else 0 : ends[i]]


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


def _layout_from(document: dict[str, Any], size: int) -> CassetteLayout | None:
    if document.get("rec_side_index") != SIDE_INDEX_VERSION:
        return None
    if document["cassette"]["size"] != size:
        return None
    opened, closed = document["exchanges_at"]
    count = document["count"]
    if type(opened) is not int or type(closed) is not int or not 0 < opened < closed <= size:
        return None
    triples = document["requests"]
    if not isinstance(triples, list) or type(count) is not int or count < 0:
        return None
    for triple in triples:
        if not isinstance(triple, list) or len(triple) != 3:
            return None
        if not all(isinstance(part, str) for part in triple):
            return None
    starts, ends = (
        _unpacked("q", document["starts"], count),
        _unpacked("q", document["ends"], count),
    )
    numbers, turns = (_unpacked("q", document[name], count) for name in ("request", "turns"))
    ids, tools = _unpacked("q", document["ids"], count), _unpacked("B", document["tools"], count)
    durations = _unpacked("d", document["durations"], count)
    last = _unpacked_strings(document["last_turns"], count)
    if not (
        all(map(operator.lt, starts, ends))
        and all(map(operator.lt, ends[:-1], starts[1:]))
        and (not count or (starts[0] > opened and ends[-1] < closed))
        and (not count or (min(numbers) >= 0 and max(numbers) < len(triples)))
        and (not count or (min(turns) >= -1 and max(tools) <= 1 and min(ids) >= 0))
    ):
        return None
    routes = [(*route_of(method, url), kind) for method, url, kind in triples]

    def key(position: int) -> BucketKey:
        turn_count = turns[position]
        route = routes[numbers[position]]
        return route if turn_count < 0 else (*route, turn_count, last(position))

    layout = CassetteLayout(opened, closed, _Column(count, lambda i: (starts[i], ends[i])))
    layout.ids, layout.durations = ids, durations
    layout.origins = _Column(count, lambda i: "tool" if tools[i] else None)
    layout.urls = _Column(count, lambda i: triples[numbers[i]][1])
    layout.keys = _Column(count, key)
    layout.recorded_at = _Column(count, _unpacked_strings(document["recorded_at"], count))
    layout.first_users = _Column(count, _unpacked_strings(document["first_users"], count))
    layout.wires = _unpacked_digests(document.get("wires"), count)
    return layout


def _unpacked_digests(text: Any, count: int) -> bytes | None:
    """The wire digests the index keeps (``count`` of them, one after another), or None
    when it keeps none.

    Raises:
        ValueError: not such a column.
    """
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError("not a packed column")
    raw = base64.b64decode(text, validate=True)
    if len(raw) != count * DIGEST_SIZE:
        raise ValueError("a packed column of another length")
    return raw
