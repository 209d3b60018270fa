"""The cassette: recorded HTTP exchanges, one JSON file per recording.

A cassette is pretty-printed, deterministic JSON (fixed field order, exchanges in the
order their requests arrived) so that a change to a recording reads well in review::

    {
      "format_version": 1,
      "name": "checkout-bug",
      "upstream": "https://generativelanguage.googleapis.com",
      "exchanges": [
        {
          "id": 0,
          "recorded_at": "2026-11-29T12:00:00.000000+00:00",
          "duration_ms": 812.4,
          "client": {"google-genai-sdk": "2.34.0", "gl-python": "3.11.7"},
          "request": {"method": "POST", "url": "https://.../v1beta/models/m:generateContent",
                      "headers": {...}, "body": {"kind": "json", "value": {...}}},
          "response": {"status": 200, "headers": {...},
                       "body": {"kind": "sse", "complete": true,
                                "events": [{"offset_ms": 161.2, "data": {...}}]}}
        }
      ]
    }

Bodies form a discriminated union on ``kind``: ``json`` (parsed), ``text``, ``base64``
(binary, explicitly marked) and ``sse`` (one item per server-sent event with its offset
from the request start; ``complete: false`` marks a stream that was cut).

A recording of an agent with MCP toolsets also has an ``mcp`` section: the MCP sessions
the agent opened, by toolset (its own format, versioned on its own: ``cassettes._mcp``).
A recording of a Gemini Live program has a ``live`` section: each Live WebSocket session
as its ordered frames in both directions (``cassettes._live``, also versioned on its own).
A recording of an ADK agent whose code read the clock, a uuid or a random draw has a
``reads`` section: those values per invocation, in order (``cassettes._reads``).
"""

from __future__ import annotations

import array
import bisect
import collections
import contextlib
import itertools
import json
import logging
import mmap
import operator
import os
import re
import weakref
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, overload
from urllib.parse import urlsplit

import pydantic_core
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from cassettes._bucket_keys import BucketKey, bucket_key
from cassettes._errors import InputError
from cassettes._first_user import first_user_digest
from cassettes._gc_pause import gc_paused
from cassettes._json_file import open_file, parse_json, read_file
from cassettes._json_text import dump_model_indent2
from cassettes._live import LIVE_FORMAT_VERSION, LiveRecording
from cassettes._live_media import restore_media
from cassettes._mcp import MCP_FORMAT_VERSION, McpRecording
from cassettes._reads import READS_FORMAT_VERSION, ReadsRecording
from cassettes._side_index import (
    CassetteLayout,
    let_go,
    map_file,
    read_side_index,
    scan_layout,
)
from cassettes._validation import Base64Text, Milliseconds, error_fix, invalid
from cassettes._wire_digest import DIGEST_SIZE

__all__ = [
    "FORMAT_VERSION",
    "FROM_FILE",
    "BinaryBody",
    "Body",
    "Cassette",
    "Exchange",
    "JsonBody",
    "LazyExchanges",
    "RecordedRequest",
    "RecordedResponse",
    "SseBody",
    "SseEvent",
    "TextBody",
    "TraceImport",
    "cassette_problem",
    "dump_cassette",
    "load_cassette",
    "parse_cassette",
    "pydantic_error_location",
    "request_bucket",
]

log = logging.getLogger(__name__)

FORMAT_VERSION: Literal[1] = 1
"""Version of the cassette format this rec writes and reads."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# What replay writes back must be what was recorded: these rules (checked by pydantic-core,
# so loading stays fast) keep out values that would split a response or inject stream events.
_HeaderName = Annotated[str, StringConstraints(pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")]
"""An HTTP header name (RFC 9110 token)."""
MAX_HEADER_VALUE = 8190
"""The longest header value rec replays: what aiohttp's client (google-genai's async
transport) reads, and what rec's recorder itself receives."""
_HeaderValue = Annotated[
    str,
    StringConstraints(pattern=r"^[^\x00-\x08\x0a-\x1f\x7f]*$", max_length=MAX_HEADER_VALUE),
]
"""An HTTP header value: no line break, NUL or other control byte (a tab is allowed), and
no longer than a client reads."""
_HttpStatus = Annotated[int, Field(ge=200, le=599)]
"""A final status code a server can send (1xx are interim answers, never a response)."""
_Method = Annotated[str, StringConstraints(pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")]
"""An HTTP method (RFC 9110 token): not empty, no space or line break."""
_ExchangeId = Annotated[int, Field(ge=0, lt=2**53)]


_URL_FORBIDDEN = re.compile(r"[\x00-\x20\x7f]")


def _valid_url(url: str) -> str:
    """An absolute http(s) URL that parses (``http://[::1`` does not)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number or out of range
    except ValueError as exc:
        raise ValueError(f"not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an absolute http(s) URL with a host")
    if _URL_FORBIDDEN.search(url):
        raise ValueError("the URL holds a space or a control byte")
    return url


_Url = Annotated[str, AfterValidator(_valid_url)]


class JsonBody(_Model):
    """A body that was valid JSON, stored parsed."""

    kind: Literal["json"] = "json"
    value: Any = None
    """The parsed JSON document."""


class TextBody(_Model):
    """A text body that was not JSON."""

    kind: Literal["text"] = "text"
    text: str
    """The decoded text."""


class BinaryBody(_Model):
    """A body stored as its exact bytes (standard base64): binary data, or anything rec
    cannot store parsed without changing it (an unknown ``content-encoding``, a body that
    does not decode as its header says, JSON with ``NaN``, a stream with invalid UTF-8)."""

    kind: Literal["base64"] = "base64"
    base64: Base64Text
    """The bytes, standard base64 encoded."""
    content_encoding: _HeaderValue | None = None
    """Set when the bytes are still encoded as the upstream sent them (the value of its
    ``content-encoding`` header, which replay sends again with them)."""


class SseEvent(_Model):
    """One server-sent event, as the client received it.

    A Gemini event is one ``data: <json>`` line; it is stored parsed in ``data``. Any
    other event (several lines, ``event:``/``id:`` fields, non-JSON data) is stored
    verbatim in ``lines`` so that replay reproduces its framing exactly.
    """

    offset_ms: Milliseconds
    """Milliseconds from the start of the request to the arrival of this event."""
    data: Any = None
    """The parsed JSON payload of a single ``data:`` line."""
    lines: list[str] | None = None
    """The event's raw lines, for events that are not one JSON ``data:`` line."""


class SseBody(_Model):
    """A ``text/event-stream`` response, one item per event."""

    kind: Literal["sse"] = "sse"
    line_ending: Literal["\r\n", "\n"] = "\r\n"
    """The line terminator the server used (Gemini uses CRLF)."""
    complete: bool = True
    """False when the stream was cut before the server finished it."""
    events: list[SseEvent] = Field(default_factory=list)
    """The events in the order they arrived."""
    tail: str | None = None
    """Bytes received after the last complete event (a cut stream), as text."""

    @model_validator(mode="after")
    def _lines_keep_their_framing(self) -> SseBody:
        for index, event in enumerate(self.events):
            for number, line in enumerate(event.lines or []):
                if self.line_ending in line:
                    raise invalid(
                        "sse_line",
                        "events[{index}].lines[{number}] holds the stream's line break, which "
                        "would inject events into the replayed stream",
                        "Store each line of the event as its own item of lines, or re-record "
                        "the exchange",
                        index=index,
                        number=number,
                    )
        return self


Body = Annotated[JsonBody | TextBody | BinaryBody | SseBody, Field(discriminator="kind")]
"""Any recorded body."""


class RecordedRequest(_Model):
    """A request as the proxy forwarded it, after redaction."""

    method: _Method
    url: _Url
    """The full upstream URL (the ``key`` query parameter removed)."""
    headers: dict[_HeaderName, _HeaderValue] = Field(default_factory=dict)
    """Lower-cased header names, credentials removed."""
    body: Body | None = None


class RecordedResponse(_Model):
    """The response the client received (bodies decoded from gzip/deflate/br)."""

    status: _HttpStatus
    headers: dict[_HeaderName, _HeaderValue] = Field(default_factory=dict)
    body: Body | None = None


class Exchange(_Model):
    """One request and its response."""

    id: _ExchangeId
    """Position of the request in arrival order within the recording."""
    recorded_at: str
    """ISO 8601 time the request arrived."""
    duration_ms: Milliseconds = 0.0
    """Milliseconds from the request's arrival to the end of its response."""
    client: dict[str, str] = Field(default_factory=dict)
    """Client library versions read from the ``user-agent`` header."""
    request: RecordedRequest
    response: RecordedResponse
    origin: Literal["tool"] | None = None
    """``tool`` for an HTTP call an agent's tool made itself (captured in-process while
    recording, served through respx by ``rec replay --live-tools``); absent for the
    model traffic that went through the proxy."""
    not_compared: list[str] | None = None
    """Match ignore paths (``generationConfig``, ``contents[*].parts[*].thoughtSignature``)
    naming the parts of the request the recording does not hold: set on a model call
    rebuilt from a trace, whose schema keeps only some of the request; replay compares
    the rest. Absent for an exchange recorded whole."""


class TraceImport(_Model):
    """What ``rec import TRACE`` rebuilt a cassette from, and what the trace lacked."""

    source: str
    """The trace's shape and ADK's telemetry schema, in words."""
    not_compared: list[str] = Field(default_factory=list)
    """The request parts no exchange of the trace holds (the union of the exchanges'
    ``not_compared``), for reports."""
    unreplayable: dict[str, str] = Field(default_factory=dict)
    """Eval case id -> why the case cannot replay (a model call the trace does not hold
    whole); such a case fails with that reason."""


class Cassette(_Model):
    """A recording: the exchanges of one session, in arrival order."""

    format_version: Literal[1] = FORMAT_VERSION
    name: str
    upstream: str | None = None
    """The API base URL the exchanges were recorded from."""
    exchanges: list[Exchange] = Field(default_factory=list)
    mcp: McpRecording | None = None
    """The MCP sessions of the agent's MCP toolsets (absent when it has none)."""
    live: LiveRecording | None = None
    """The Gemini Live (WebSocket) sessions, frame by frame (absent when there were none)."""
    reads: ReadsRecording | None = None
    """The clock, randomness and ids the agent's code read, per invocation and reader
    (``cassettes._reads``; absent when it read none)."""
    trace: TraceImport | None = None
    """Where the exchanges were rebuilt from, when they came from a trace (``rec import``)."""

    @field_validator("exchanges")
    @classmethod
    def _unique_ids(cls, exchanges: list[Exchange], info: ValidationInfo) -> list[Exchange]:
        # Checked when a file is read; a recorder finishing its journal never stops on it.
        first: dict[int, int] = {}
        if not (info.context or {}).get("rec_file") or len({e.id for e in exchanges}) == len(
            exchanges
        ):
            return exchanges
        for index, exchange in enumerate(exchanges):
            if exchange.id in first:
                raise invalid(
                    "duplicate_id",
                    "exchanges[{first}] and exchanges[{index}] both have id {id}",
                    "Give each exchange its own id (they count up from 0 in arrival order)",
                    first=first[exchange.id],
                    index=index,
                    id=exchange.id,
                )
            first[exchange.id] = index
        return exchanges


_CASSETTE_ADAPTER: TypeAdapter[Cassette] = TypeAdapter(Cassette)
_EXCHANGE_ADAPTER: TypeAdapter[Exchange] = TypeAdapter(Exchange)

FROM_FILE = {"rec_file": True}
"""Validation context for a cassette read from a file: the rules about the file as a whole
(unique exchange ids) apply too."""


def pydantic_error_location(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as a JSON path (``exchanges[3].response``)."""
    out = ""
    previous: int | str | None = None
    for part in loc:
        after, previous = previous, part
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("json", "text", "base64", "sse") and after == "body":
            continue  # discriminator tag pydantic inserts; not a key in the file
        elif part == "[key]":
            continue  # the key itself is the problem: it is already in the path
        else:
            text = part if part.isprintable() and "." not in part else json.dumps(part)
            out += f".{text}" if out else text
    return out or "(top level)"


def cassette_problem(error: Any) -> tuple[str, str]:
    """(problem, fix) for one pydantic error in a cassette, in the words of the rule broken."""
    loc = tuple(error["loc"])
    kind = error["type"]
    fix = error_fix(error, "Fix that field, or re-record the cassette")
    if kind == "string_pattern_mismatch" and ("headers" in loc or "content_encoding" in loc):
        if loc[-1] == "[key]":
            return "not a valid HTTP header name", "Fix the name, or re-record the exchange"
        return (
            "the header value holds a line break or NUL (or another control byte), which "
            "would split the replayed response",
            "Remove it, or re-record the exchange",
        )
    if kind == "string_too_long" and "headers" in loc:
        return (
            f"the header value is {len(error['input']):,} characters, longer than HTTP clients "
            f"read ({MAX_HEADER_VALUE:,})",
            "Shorten it, or re-record the exchange",
        )
    if kind == "string_pattern_mismatch" and loc[-1:] == ("method",):
        return "not an HTTP method (empty, or holding a space or line break)", fix
    if kind in ("greater_than_equal", "less_than_equal") and loc[-1:] == ("status",):
        return f"HTTP status {error['input']} cannot be replayed (a final status is 200-599)", fix
    return str(error["msg"]), fix


def parse_cassette(data: bytes | str, *, path: str | Path = "<cassette>") -> Cassette:
    """Validate cassette JSON text.

    Raises:
        InputError: the text is not JSON, or not a cassette of a known format version;
            the message names the file, the line or JSON path, and the fix.
    """
    with gc_paused():  # a large acyclic tree: collections only slow building it
        return _parse_cassette(data, path=path)


# The sections with a format version of their own: (key, name in messages, version read).
_SECTION_VERSIONS = (
    ("mcp", "MCP", MCP_FORMAT_VERSION),
    ("live", "Live", LIVE_FORMAT_VERSION),
    ("reads", "Reads", READS_FORMAT_VERSION),
)


def _parse_cassette(data: bytes | str, *, path: str | Path) -> Cassette:
    raw = parse_json(data, path=path, fix="Restore the file from version control or re-record it")
    if isinstance(raw, dict) and raw.get("format_version") not in (None, FORMAT_VERSION):
        raise InputError(
            f"cassette format_version {raw.get('format_version')!r} is not supported "
            f"(this rec reads version {FORMAT_VERSION})",
            path=path,
            where="format_version",
            fix="Upgrade rec, or re-record the cassette with this version",
        )
    for key, label, version in _SECTION_VERSIONS:
        section = raw.get(key) if isinstance(raw, dict) else None
        if isinstance(section, dict) and section.get("format_version") != version:
            raise InputError(
                f"{label} section format_version {section.get('format_version')!r} is not "
                f"supported (this rec reads version {version})",
                path=path,
                where=f"{key}.format_version",
                fix="Upgrade rec, or re-record the cassette with this version",
            )
    try:
        cassette = _CASSETTE_ADAPTER.validate_python(raw, context=FROM_FILE)
    except ValidationError as exc:
        first = exc.errors()[0]
        problem, fix = cassette_problem(first)
        if "url" in first and first["type"] != "string_pattern_mismatch":
            problem += " (not a rec cassette?)"  # a type error rather than a broken rule
        raise InputError(
            problem, path=path, where=pydantic_error_location(tuple(first["loc"])), fix=fix
        ) from None
    if cassette.live is not None:
        # Large Live media lies in files beside the cassette: read back into the frames.
        cassette.live = restore_media(cassette.live, path)
    return cassette


def load_cassette(path: str | Path, *, lazy: bool = False) -> Cassette:
    """Read and validate a cassette file.

    With ``lazy``, a file in the layout rec writes has only its top level validated here;
    its exchanges come as :class:`LazyExchanges`, each parsed and validated the first time
    it is used (what ``rec serve`` and replay want from a large recording). Where each
    exchange lies and what matching needs of it come from the cassette's side index when it
    still fits the file (``cassettes._side_index``), else from a scan of the file's lines;
    neither parses a body. The file is mapped, not read: only the pages of the exchanges
    used count in memory. A file in any other layout is read whole, as without ``lazy``.

    Raises:
        InputError: the file is missing, unreadable or invalid (the message says where).
    """
    file = Path(path)
    if lazy:
        found = _lazy_cassette(file)
        if found is not None:
            return found
    data = read_file(
        file, what="cassette", missing_fix="Check the path, or record one with `rec start`"
    )
    return parse_cassette(data, path=file)


_MISSING_FIX = "Check the path, or record one with `rec start`"


def _lazy_cassette(path: Path) -> Cassette | None:
    """The cassette with lazily parsed exchanges, or None for a file in another layout."""
    with open_file(path, what="cassette", missing_fix=_MISSING_FIX) as handle:
        info = os.fstat(handle.fileno())
        if info.st_size == 0:
            return None
        try:
            data = map_file(handle, info.st_size)
            layout = read_side_index(path, handle, info.st_size)
            # A map's file is watched by a descriptor of its own (see _RawFile.bytes_of).
            watched = os.dup(handle.fileno()) if isinstance(data, mmap.mmap) else None
        except OSError as exc:
            raise InputError(
                f"cannot read cassette ({exc.strerror or exc})", path=path, fix="Check the disk"
            ) from None
    if layout is None:
        layout = scan_layout(data)
        if layout is None:
            return None
    skeleton = data[: layout.opened] + b'\n  "exchanges": []' + data[layout.closed :]
    let_go(data, 0, layout.opened)
    cassette = parse_cassette(skeleton, path=path)
    source = _RawFile(path, data, layout, _identity(info), watched)
    source.from_trace = cassette.trace is not None
    source.check_ids()
    count = len(layout.spans)
    cassette.exchanges = LazyExchanges([(source, range(count))])  # type: ignore[assignment]
    return cassette


_PIECE = 1 << 20
"""Bytes of a file read at a time by :meth:`_RawFile.holding`."""


def _occurrences(
    data: bytes | mmap.mmap, needle: bytes, start: int, end: int, base: int
) -> list[int]:
    """Where ``needle`` starts in ``data[start:end]``, as offsets plus ``base``."""
    found = []
    at = data.find(needle, start, end)
    while at >= 0:
        found.append(base + at)
        at = data.find(needle, at + 1, end)
    return found


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


_RECENT = 16
"""Exchanges a file that keeps only what is in use keeps parsed after their last use (the
most recent ones): a request's lookup parses an exchange for its key, and the exchange it
then returns is that one (see :meth:`_RawFile.keep_only_in_use`)."""


class _RawFile:
    """A cassette file mapped read-only and where each exchange lies in it; an exchange is
    parsed and validated on first use, each once (the same object every time), or, once
    :meth:`keep_only_in_use` is called, each while in use.

    The map holds the file as it was loaded even once rec (or anyone writing atomically)
    replaces it; only a file changed in place is refused (its old bytes are gone). An
    exchange's bytes are read from the file's descriptor, not through the map, so they are
    not counted in this process's memory once parsed.
    """

    def __init__(
        self,
        path: Path,
        data: mmap.mmap | bytes,
        layout: CassetteLayout,
        identity: tuple[int, ...],
        watched: int | None = None,
    ) -> None:
        self.path = path
        self.data = data
        self.layout = layout
        self.spans = layout.spans
        self.identity = identity
        self.parsed: MutableMapping[int, Exchange] = {}
        """The exchanges parsed (and still held, once only those in use are kept)."""
        self.recent: collections.deque[Exchange] | None = None
        """The exchanges used last, kept parsed once only those in use are kept."""
        self.parses = 0
        """How many times an exchange was parsed from the file (one released and used again
        is parsed again)."""
        self.from_trace = False
        """The cassette was rebuilt from a trace (``rec import``): some exchanges may hold
        only part of their request (``Exchange.not_compared``)."""
        self._whole: list[Exchange] | None = None
        self.ascending = False
        """The exchange ids count up in file order, as rec writes them (see :meth:`check_ids`)."""
        self._fd = watched
        """A descriptor of the mapped file, to read an exchange's bytes and to tell a change
        in place by ``fstat``: no path lookup, so nothing that blocks an event loop (closed
        with this object)."""
        if watched is not None:
            weakref.finalize(self, os.close, watched)

    def check_ids(self) -> None:
        """Exchange ids are unique (as the layout read them)."""
        ids = self.layout.ids
        with contextlib.suppress(TypeError):  # a damaged id (a string, null): looked at below
            if all(type(i) is int for i in ids[:1]) and all(map(operator.lt, ids[:-1], ids[1:])):
                self.ascending = True
                return  # counting up, as rec writes them (read from the side index at C speed)
        first: dict[object, int] = {}
        for position, value in enumerate(ids):
            if value is None or isinstance(value, (dict, list)):
                continue  # the exchange's own validation reports it
            if value in first:
                raise InputError(
                    f"exchanges[{first[value]}] and exchanges[{position}] both have id {value}",
                    path=self.path,
                    where="exchanges",
                    fix="Give each exchange its own id (they count up from 0 in arrival order)",
                )
            first[value] = position

    def keep_only_in_use(self) -> None:
        """From now on keep an exchange parsed only while something holds it, and the
        :data:`_RECENT` used last: what a server answering thousands of requests from a
        large file wants (it keeps no model per request served). One used again is parsed
        again, so it is the same object only while it is held: a caller that tells
        exchanges apart by ``id()`` across uses must hold them."""
        self.parsed = weakref.WeakValueDictionary(self.parsed)
        self.recent = collections.deque(maxlen=_RECENT)

    def held(self) -> Mapping[int, Exchange]:
        """The exchanges parsed and still held, by position (as they are now)."""
        parsed = self.parsed
        return parsed if isinstance(parsed, dict) else dict(parsed.items())

    def origin(self, position: int, held: Mapping[int, Exchange] | None = None) -> Any:
        """The exchange's ``origin`` as written (read without parsing the exchange); ``held``
        is :meth:`held`, when the caller asks for many."""
        exchange = (self.parsed if held is None else held).get(position)
        if exchange is not None:
            return exchange.origin
        return self.layout.origins[position]

    def url(self, position: int) -> Any:
        """The exchange's request URL as written (read without parsing the exchange)."""
        exchange = self.parsed.get(position)
        if exchange is not None:
            return exchange.request.url
        return self.layout.urls[position]

    def written(self, position: int) -> tuple[Any, Any, Any, Any]:
        """The exchange's (id, recorded_at, duration_ms, origin) as the layout read them (from
        the side index or the scan: no page of the exchange is read); each may be None."""
        layout = self.layout
        return (
            layout.ids[position],
            layout.recorded_at[position],
            layout.durations[position],
            layout.origins[position],
        )

    def holding(self, needle: bytes) -> set[int]:
        """The positions of the exchanges whose bytes hold ``needle``. The file is read in
        pieces (the map's pages are not touched: they would count in this process's memory);
        raises as :meth:`bytes_of` does."""
        if not needle:
            return set(range(len(self.spans)))
        opened, closed = self.layout.opened, self.layout.closed
        if self._fd is None:
            hits = _occurrences(self.data, needle, opened, closed, 0)
        else:
            if _identity(os.fstat(self._fd)) != self.identity:
                self.bytes_of(0)  # raises the error for a file changed in place
            hits = []
            overlap = len(needle) - 1
            at = opened
            while at < closed:
                piece = os.pread(self._fd, min(_PIECE + overlap, closed - at), at)
                if not piece:
                    break
                hits.extend(_occurrences(piece, needle, 0, len(piece), at))
                at += _PIECE
        found: set[int] = set()
        spans = self.spans
        for hit in hits:
            position = bisect.bisect_right(spans, hit, key=operator.itemgetter(0)) - 1
            if position >= 0 and hit + len(needle) <= spans[position][1]:
                found.add(position)
        return found

    def bytes_of(self, position: int) -> bytes:
        """The exchange's bytes as the file held them when it was loaded; a mapped file's
        are read from its descriptor (the map's pages would stay counted in memory).

        Raises:
            InputError: the file was changed in place since (not replaced): the bytes
                the layout points at are no longer the ones it was read from.
        """
        start, end = self.spans[position]
        if self._fd is None:  # read whole: its bytes cannot change
            return self.data[start:end]
        if _identity(os.fstat(self._fd)) == self.identity:
            data = os.pread(self._fd, end - start, start)
            if len(data) == end - start:
                return data
        raise InputError(
            "the cassette changed on disk while rec was using it",
            path=self.path,
            fix="Run the command again once the file is written",
        )

    def span_of(self, position: int) -> tuple[mmap.mmap | bytes, int, int]:
        """The file's bytes as loaded (the map itself: nothing copied, no page touched) and
        the exchange's span in them; raises as :meth:`bytes_of` does."""
        if self._fd is not None and _identity(os.fstat(self._fd)) != self.identity:
            self.bytes_of(position)  # raises the error for a file changed in place
        start, end = self.spans[position]
        return self.data, start, end

    def exchange(self, position: int) -> Exchange:
        found = self.parsed.get(position)
        if found is None:
            found = self.parsed[position] = self._parse(position)
        recent = self.recent
        if recent is not None and (not recent or recent[-1] is not found):
            recent.append(found)
        return found

    def _parse(self, position: int) -> Exchange:
        """Exchange ``position`` parsed and validated from the file's bytes."""
        if self._whole is not None:
            found = self._whole[position]
        else:
            try:
                raw = _exchange_json(self.bytes_of(position))
            except (ValueError, RecursionError):
                raw = None
            if not isinstance(raw, dict) or raw.get("id") != self.layout.ids[position]:
                # Not what the layout promised: the whole file says where it is broken,
                # or, when it parses, holds the exchange after all.
                self._whole = parse_cassette(bytes(self.data), path=self.path).exchanges
                return self._whole[position]
            self.parses += 1
            try:
                found = _EXCHANGE_ADAPTER.validate_python(raw, context=FROM_FILE)
            except ValidationError as exc:
                error = exc.errors()[0]
                problem, fix = cassette_problem(error)
                where = pydantic_error_location(("exchanges", position, *error["loc"]))
                raise InputError(problem, path=self.path, where=where, fix=fix) from None
        return found


def _exchange_json(data: bytes) -> Any:
    """``json.loads(data)``, parsed by pydantic-core's parser (jiter: about 40% faster on an
    exchange, and its short strings such as keys are shared). Where jiter refuses what
    ``json.loads`` reads (a lone surrogate escape, nesting deeper than jiter's limit) or
    refuses at all, ``json.loads`` decides, so the result and the errors are its own: jiter
    reads numbers, escapes and duplicate keys exactly as it does (see
    tests/cassettes/test_lazy_cassette.py)."""
    try:
        return pydantic_core.from_json(data)
    except ValueError:
        return json.loads(data)


_Segment = tuple["_RawFile", Sequence[int]]
"""Positions of exchanges in one file (a range, or an array: no object per exchange)."""


class LazyExchanges(Sequence[Exchange]):
    """Exchanges of cassette files, each parsed and validated the first time it is used.

    :class:`~cassettes.MatchIndex` reads what matching needs straight from the file's
    bytes (:meth:`raw`), so building an index parses no body. Iterating parses every
    exchange (once). The exchanges are held as runs of positions in their files, so a
    selection of many of them makes no object per exchange.
    """

    def __init__(self, segments: list[_Segment]) -> None:
        self._rows = [(source, positions) for source, positions in segments if positions]
        self._ends = list(itertools.accumulate(len(p) for _, p in self._rows))

    def _at(self, index: int) -> tuple[_RawFile, int]:
        """The file and position of exchange ``index``."""
        count = self._ends[-1] if self._ends else 0
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError(index)
        segment = bisect.bisect_right(self._ends, index) if len(self._ends) > 1 else 0
        source, positions = self._rows[segment]
        return source, positions[index - (self._ends[segment - 1] if segment else 0)]

    def _each(self) -> Iterator[tuple[_RawFile, int]]:
        for source, positions in self._rows:
            for position in positions:
                yield source, position

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, index: int) -> Exchange: ...
    @overload
    def __getitem__(self, index: slice) -> LazyExchanges: ...
    def __getitem__(self, index: int | slice) -> Exchange | LazyExchanges:
        if isinstance(index, slice):
            return self.select(range(*index.indices(len(self))))
        source, position = self._at(index)
        return source.exchange(position)

    def __iter__(self) -> Iterator[Exchange]:
        if all(source.recent is None for source, _ in self._rows):  # each kept once parsed
            with gc_paused():  # many small acyclic trees: collections only slow building them
                for source, position in self._each():
                    source.exchange(position)
        for source, position in self._each():
            yield source.exchange(position)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyExchanges({len(self)} exchanges)"

    def raw(self, index: int) -> tuple[bytes, int, int]:
        """Bytes holding exchange ``index`` as written in its file, and its span in them."""
        source, position = self._at(index)
        data = source.bytes_of(position)
        return data, 0, len(data)

    def mapped(self, index: int) -> tuple[mmap.mmap | bytes, int, int]:
        """:meth:`raw` without the copy: the file's map itself and the exchange's span in it,
        so a search within the span reads only the pages it looks at."""
        source, position = self._at(index)
        return source.span_of(position)

    def bucket(self, index: int) -> BucketKey | None:
        """The bucket key of exchange ``index`` (``cassettes._bucket_keys``, turns counted),
        without parsing it; None when it must be parsed for it."""
        source, position = self._at(index)
        return source.layout.keys[position]

    def first_user(self, index: int) -> str | None:
        """The side index's digest of exchange ``index``'s first user turn
        (``cassettes._first_user``), without parsing it; None when the index does not say."""
        source, position = self._at(index)
        digests = source.layout.first_users
        return None if digests is None else digests[position]

    def each_bucket(self) -> Iterator[tuple[BucketKey | None, str | None]]:
        """:meth:`bucket` and :meth:`first_user` of every exchange, in order (one pass over
        the side index's columns)."""
        for source, positions in self._rows:
            keys, digests = source.layout.keys, source.layout.first_users
            for position in positions:
                yield keys[position], None if digests is None else digests[position]

    def wires(self) -> Iterator[bytes | None]:
        """Each exchange's wire digest (``cassettes._wire_digest``) from its file's side
        index, in order; None where the index keeps none (nothing is read or parsed)."""
        for source, positions in self._rows:
            digests = source.layout.wires
            if digests is None:
                yield from itertools.repeat(None, len(positions))
                continue
            for position in positions:
                yield digests[position * DIGEST_SIZE : (position + 1) * DIGEST_SIZE]

    def wire(self, index: int) -> bytes | None:
        """:meth:`wires` of exchange ``index``."""
        source, position = self._at(index)
        digests = source.layout.wires
        if digests is None:
            return None
        return digests[position * DIGEST_SIZE : (position + 1) * DIGEST_SIZE]

    def first_users_known(self) -> bool:
        """Whether :meth:`first_user` says for every exchange (each file's side index
        keeps the digests; a scanned file has none)."""
        return all(source.layout.first_users is not None for source, _ in self._rows)

    def origin(self, index: int) -> Any:
        """The ``origin`` of exchange ``index`` (``tool`` or None), without parsing it."""
        source, position = self._at(index)
        return source.origin(position)

    def url(self, index: int) -> Any:
        """The request URL of exchange ``index``, without parsing it."""
        source, position = self._at(index)
        return source.url(position)

    def written(self, index: int) -> tuple[Any, Any, Any, Any]:
        """Exchange ``index``'s (id, recorded_at, duration_ms, origin) as written, without
        parsing it or reading its bytes (see :meth:`_RawFile.written`)."""
        source, position = self._at(index)
        return source.written(position)

    def each_written(self) -> Iterator[tuple[Any, Any, Any, Any] | None]:
        """:meth:`written` of every exchange in order, None for one parsed already."""
        for source, positions in self._rows:
            held = source.held()
            for position in positions:
                yield None if position in held else source.written(position)

    def of_tools(self, tool: bool) -> array.array[int]:
        """The indexes of the tools' own exchanges (``origin: tool``), or with ``tool`` false
        of all the others, read without parsing any."""
        found: array.array[int] = array.array("q")
        index = 0
        for source, positions in self._rows:
            held = source.held()
            for position in positions:
                if (source.origin(position, held) == "tool") is tool:
                    found.append(index)
                index += 1
        return found

    def first_asking(self, text: str) -> LazyExchanges | None:
        """The exchanges whose request's first user turn may be ``text`` (its digest in the
        side index is ``text``'s), still unparsed; None when a file's index does not say."""
        if not self.first_users_known():
            return None
        digest = first_user_digest(text)
        segments: list[_Segment] = []
        for source, positions in self._rows:
            digests = source.layout.first_users
            assert digests is not None
            segments.append(
                (source, array.array("q", (p for p in positions if digests[p] == digest)))
            )
        return LazyExchanges(segments)

    def holding(self, needle: bytes) -> LazyExchanges:
        """The exchanges whose bytes in their file hold ``needle``, still unparsed; the files
        are read in pieces, not through their maps (no page of theirs counts in memory)."""
        hits: dict[int, set[int]] = {}
        segments: list[_Segment] = []
        for source, positions in self._rows:
            if id(source) not in hits:
                hits[id(source)] = source.holding(needle)
            found = hits[id(source)]
            segments.append((source, array.array("q", (p for p in positions if p in found))))
        return LazyExchanges(segments)

    def partial_indexes(self) -> list[int]:
        """The indexes of the exchanges that may hold only part of their request (those
        holding ``not_compared`` in a cassette imported from a trace): such files are
        searched as :meth:`holding` searches, other files not at all; none is parsed."""
        hits: dict[int, set[int]] = {}
        found: list[int] = []
        index = 0
        for source, positions in self._rows:
            if not source.from_trace:
                index += len(positions)
                continue
            if id(source) not in hits:
                hits[id(source)] = source.holding(b'"not_compared"')
            held = hits[id(source)]
            for position in positions:
                if position in held:
                    found.append(index)
                index += 1
        return found

    def ids_count_up(self) -> bool:
        """Whether the exchanges' ids count up in their order, as rec writes them (so id
        order is this order), read from the files' layouts: none is parsed."""
        if not self._rows:
            return True
        if len(self._rows) > 1:
            return False
        source, positions = self._rows[0]
        return source.ascending and isinstance(positions, range) and positions.step > 0

    def parsed(self, index: int) -> bool:
        """Whether exchange ``index`` is parsed (and still held, once only those in use are
        kept: :meth:`keep_only_in_use`)."""
        source, position = self._at(index)
        return position in source.parsed

    def parses(self) -> int:
        """How many times its files' exchanges were parsed so far (an exchange let go and
        used again counts again; files shared with other selections count theirs too)."""
        return sum(source.parses for source in {id(s): s for s, _ in self._rows}.values())

    def keep_only_in_use(self) -> None:
        """Keep from now on only the exchanges in use parsed, and the last few used, in all
        of these exchanges' files (see :meth:`_RawFile.keep_only_in_use`)."""
        for source, _ in self._rows:
            source.keep_only_in_use()

    def loaded(self) -> Iterator[Exchange]:
        """The exchanges parsed so far and still held (none is parsed by asking)."""
        for source, positions in self._rows:
            held = source.held()
            for position in positions:
                found = held.get(position)
                if found is not None:
                    yield found

    def select(self, indexes: Iterable[int]) -> LazyExchanges:
        """The exchanges at ``indexes``, still unparsed."""
        if len(self._rows) == 1:
            source, positions = self._rows[0]
            return LazyExchanges([(source, array.array("q", map(positions.__getitem__, indexes)))])
        segments: list[_Segment] = []
        for index in indexes:
            source, position = self._at(index)
            if not segments or segments[-1][0] is not source:
                segments.append((source, array.array("q")))
            segments[-1][1].append(position)  # type: ignore[attr-defined]
        return LazyExchanges(segments)

    def __add__(self, other: LazyExchanges) -> LazyExchanges:
        return LazyExchanges(self._rows + other._rows)


def dump_cassette(cassette: Cassette) -> str:
    """Serialise deterministically: fixed field order, indent 2, UTF-8, no nulls."""
    if isinstance(cassette.exchanges, LazyExchanges):
        cassette = cassette.model_copy(update={"exchanges": list(cassette.exchanges)})
    return dump_model_indent2(cassette) + "\n"


def request_bucket(request: RecordedRequest, *, use_turns: bool = True) -> BucketKey:
    """The bucket :class:`~cassettes.MatchIndex` files ``request`` under
    (``cassettes._bucket_keys``)."""
    body = request.body
    if body is None:
        return bucket_key(request.method, request.url, None, use_turns=use_turns)
    value = body.value if isinstance(body, JsonBody) else None
    return bucket_key(request.method, request.url, body.kind, value, use_turns=use_turns)
