"""What replay needs to know of every recorded exchange, read without parsing its bodies.

A replayed case uses a few of a recording's exchanges, but some decisions look across all
of them: which calls overlapped in time (:mod:`replayer._completion_order`), which request
followed an answer (:mod:`replayer._recorded_clock`), which exchanges nothing played. They
need an exchange's ``id``, ``recorded_at``, ``duration_ms`` and ``origin`` only. For a
lazily loaded cassette (:class:`~cassettes.LazyExchanges`) those are read from the
exchange's own lines in the file (its keys sit at indent 6 in the layout rec writes), so
the bodies of exchanges no case asks for are never parsed. A value that is not written as
rec writes it is taken from the parsed exchange instead (which is validated then).
"""

from __future__ import annotations

import datetime as dt
import json
import mmap
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cassettes._cassette import Exchange, LazyExchanges

__all__ = ["ExchangeRow", "ExchangeRows", "exchange_rows"]

_ID_LINE = b'\n      "id": '
_RECORDED_AT_LINE = b'\n      "recorded_at": '
_DURATION_LINE = b'\n      "duration_ms": '
_HEAD = 512
"""Bytes from an exchange's start within which rec writes its first keys."""


@dataclass(frozen=True)
class ExchangeRow:
    """One exchange's place, id, time and origin."""

    position: int
    """Its index in the cassette's exchanges."""
    id: int
    recorded_at: str
    duration_ms: float
    tool: bool
    """A tool's own HTTP call (``origin: tool``), not a model call."""

    @property
    def start(self) -> float | None:
        """When the request arrived (seconds since the epoch), None when not readable."""
        try:
            return dt.datetime.fromisoformat(self.recorded_at).timestamp()
        except ValueError:
            return None


_MISSING = object()
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _raw_line(data: bytes | mmap.mmap, marker: bytes, start: int, end: int) -> bytes | None:
    """The value written on the exchange's line for ``marker`` (None: no such line)."""
    at = data.find(marker, start, min(end, start + _HEAD))
    if at < 0:
        at = data.find(marker, start, end)
    if at < 0:
        return None
    at += len(marker)
    return data[at : data.find(b"\n", at, end)].rstrip(b",")


def _number(raw: bytes | None) -> Any:
    """A JSON number's value (``_MISSING`` for anything else)."""
    if raw is None or not _NUMBER.fullmatch(raw):
        return _MISSING
    return float(raw) if any(c in raw for c in b".eE") else int(raw)


def _string(raw: bytes | None) -> Any:
    """A JSON string's value (``_MISSING`` for anything else)."""
    if raw is None or len(raw) < 2 or raw[:1] != b'"' or raw[-1:] != b'"':
        return _MISSING
    if b"\\" not in raw:
        try:
            return raw[1:-1].decode("utf-8")
        except UnicodeDecodeError:
            return _MISSING
    try:
        value = json.loads(raw)
    except ValueError:
        return _MISSING
    return value if isinstance(value, str) else _MISSING


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _row(exchanges: Sequence[Exchange], position: int) -> ExchangeRow:
    if isinstance(exchanges, LazyExchanges) and not exchanges.parsed(position):
        data, start, end = exchanges.mapped(position)
        id_ = _number(_raw_line(data, _ID_LINE, start, end))
        at = _string(_raw_line(data, _RECORDED_AT_LINE, start, end))
        written = _raw_line(data, _DURATION_LINE, start, end)
        duration = 0.0 if written is None else _number(written)  # absent: the default
        origin = exchanges.origin(position)
        if (
            isinstance(id_, int)
            and not isinstance(id_, bool)
            and isinstance(at, str)
            and _is_number(duration)
            and origin in (None, "tool")
        ):
            return ExchangeRow(position, id_, at, float(duration), origin == "tool")
    exchange = exchanges[position]
    return ExchangeRow(
        position, exchange.id, exchange.recorded_at, exchange.duration_ms, exchange.origin == "tool"
    )


class ExchangeRows:
    """The rows of one cassette's exchanges, and the way back from a served exchange."""

    def __init__(self, exchanges: Sequence[Exchange]) -> None:
        # Weakly, for a lazy cassette: the rows are cached while the cassette lives.
        self._lazy = weakref.ref(exchanges) if isinstance(exchanges, LazyExchanges) else None
        self._list = None if isinstance(exchanges, LazyExchanges) else exchanges
        self.rows = [_row(exchanges, p) for p in range(len(exchanges))]
        self._by_id: dict[int, int] = {}
        for row in self.rows:
            self._by_id.setdefault(row.id, row.position)
        self._eager: dict[int, int] | None = None

    @property
    def exchanges(self) -> Sequence[Exchange]:
        """The cassette's exchanges (empty once a lazy cassette is gone)."""
        if self._lazy is None:
            assert self._list is not None
            return self._list
        return self._lazy() or []

    def position_of(self, exchange: Exchange) -> int | None:
        """The position of this very object in the cassette, or None (another cassette's)."""
        exchanges = self.exchanges
        if not isinstance(exchanges, LazyExchanges):
            if self._eager is None:
                self._eager = {id(e): p for p, e in enumerate(exchanges)}
            return self._eager.get(id(exchange))
        position = self._by_id.get(exchange.id)
        if position is None or not exchanges.parsed(position):
            return None
        return position if exchanges[position] is exchange else None


_CACHE: dict[int, ExchangeRows] = {}


def exchange_rows(exchanges: Sequence[Exchange]) -> ExchangeRows:
    """The rows of ``exchanges``, read once per lazily loaded cassette (kept while it lives)."""
    if not isinstance(exchanges, LazyExchanges):
        return ExchangeRows(exchanges)
    key = id(exchanges)
    found = _CACHE.get(key)
    if found is None or found.exchanges is not exchanges:
        found = _CACHE[key] = ExchangeRows(exchanges)
        weakref.finalize(exchanges, _CACHE.pop, key, None)
    return found
