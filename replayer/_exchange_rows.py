"""What replay needs to know of every recorded exchange, read without parsing its bodies.

A replayed case uses a few of a recording's exchanges, but some decisions look across all
of them: which calls overlapped in time (:mod:`replayer._completion_order`), which request
followed an answer (:mod:`replayer._recorded_clock`), which exchanges nothing played. They
need an exchange's ``id``, ``recorded_at``, ``duration_ms`` and ``origin`` only. For a
lazily loaded cassette (:class:`~cassettes.LazyExchanges`) those come from its layout (the
side index, else the scan of the file's lines: ``cassettes._side_index``), so neither the
bodies nor the pages of exchanges no case asks for are read. A value that is not written
as rec writes it is taken from the parsed exchange instead (which is validated then).
"""

from __future__ import annotations

import datetime as dt
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from cassettes._cassette import Exchange, LazyExchanges

__all__ = ["ExchangeRow", "ExchangeRows", "exchange_rows"]


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


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _written_row(position: int, written: tuple[Any, Any, Any, Any]) -> ExchangeRow | None:
    """The row of an exchange from what its layout read, None unless it is as rec writes it."""
    id_, at, duration, origin = written
    if (
        isinstance(id_, int)
        and not isinstance(id_, bool)
        and isinstance(at, str)
        and _is_number(duration)
        and origin in (None, "tool")
    ):
        return ExchangeRow(position, id_, at, float(duration), origin == "tool")
    return None


def _row(exchanges: Sequence[Exchange], position: int) -> ExchangeRow:
    if isinstance(exchanges, LazyExchanges) and not exchanges.parsed(position):
        row = _written_row(position, exchanges.written(position))
        if row is not None:
            return row
    exchange = exchanges[position]
    return ExchangeRow(
        position, exchange.id, exchange.recorded_at, exchange.duration_ms, exchange.origin == "tool"
    )


class _Rows(Sequence[ExchangeRow]):
    """A lazily loaded cassette's rows, each made when it is asked for (not kept)."""

    def __init__(self, owner: ExchangeRows, count: int) -> None:
        self._owner = owner
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> ExchangeRow: ...
    @overload
    def __getitem__(self, index: slice) -> list[ExchangeRow]: ...
    def __getitem__(self, index: int | slice) -> ExchangeRow | list[ExchangeRow]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return _row(self._owner.exchanges, index)

    def __iter__(self) -> Iterator[ExchangeRow]:
        exchanges = self._owner.exchanges
        if not isinstance(exchanges, LazyExchanges):
            return
        for position, written in enumerate(exchanges.each_written()):
            row = _written_row(position, written) if written is not None else None
            yield row if row is not None else _row(exchanges, position)


class ExchangeRows:
    """The rows of one cassette's exchanges, and the way back from a served exchange.

    A lazily loaded cassette's rows are made from its layout each time they are read, so
    none is kept for the exchanges a case never touches."""

    def __init__(self, exchanges: Sequence[Exchange]) -> None:
        # Weakly, for a lazy cassette: the rows are cached while the cassette lives.
        self._lazy = weakref.ref(exchanges) if isinstance(exchanges, LazyExchanges) else None
        self._list = None if isinstance(exchanges, LazyExchanges) else exchanges
        self.rows: Sequence[ExchangeRow]
        if isinstance(exchanges, LazyExchanges):
            self.rows = _Rows(self, len(exchanges))
        else:
            self.rows = [_row(exchanges, p) for p in range(len(exchanges))]
        self._by_id: dict[int, int] | None = None
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
        if self._is_at(exchanges, exchange.id, exchange):  # ids count up from 0 as rec writes
            return exchange.id
        if self._by_id is None:
            self._by_id = {}
            for row in self.rows:
                self._by_id.setdefault(row.id, row.position)
        position = self._by_id.get(exchange.id)
        return position if self._is_at(exchanges, position, exchange) else None

    @staticmethod
    def _is_at(exchanges: LazyExchanges, position: int | None, exchange: Exchange) -> bool:
        return (
            position is not None
            and 0 <= position < len(exchanges)
            and exchanges.parsed(position)
            and exchanges[position] is exchange
        )


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
