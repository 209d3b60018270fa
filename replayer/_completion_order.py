"""Concurrent model calls finish in the order they finished in the recording.

A ParallelAgent's branches call the model at the same time, and ADK appends each branch's
events to the session as the branch finishes, so the next agent's request (a merger)
carries the branches' outputs in completion order. Recorded, that order is the model's
latency; replayed, every answer is instant and the branches would finish in declaration
order, so the merger's request would never match. Replay therefore holds the response of
an exchange until the exchanges that finished before it in the recording, while it was
in flight, have been answered.

Exchange B waits for A when, in the same cassette, both are model calls of the same
conversation (the same first content: the session's first user turn), their requests
differ (identical requests are interchangeable), they overlapped in time, and A's response
ended before B's. The wait is bounded (:data:`ORDER_WAIT_S`): an A the replay never asks
for (the agent changed) delays B by that much once, and then B is answered anyway, so
nothing deadlocks.

:class:`CompletionOrder` holds the decisions (pure, no I/O); the replay handler asks it
before playing a hit and tells it when the response was sent. For a lazily loaded
cassette the decision for an exchange is made when it is first asked for, from the calls
recorded while it was in flight: the others' bodies are never parsed.
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cassettes._cassette import Exchange, JsonBody, LazyExchanges
from replayer._exchange_rows import exchange_rows

__all__ = ["ORDER_WAIT_S", "CompletionOrder"]

ORDER_WAIT_S = 2.0
"""The longest a response is held for the exchanges recorded to finish before it."""


@dataclass
class _Span:
    exchange: Exchange
    start: float
    end: float
    body: dict[str, Any]
    _request: str | None = None

    @property
    def request(self) -> str:
        """The request body, canonical (built only for overlapping calls)."""
        if self._request is None:
            self._request = json.dumps(self.body, sort_keys=True)
        return self._request


def _span(exchange: Exchange) -> tuple[str, _Span] | None:
    """(conversation key, span) of a model call with contents; None for anything else."""
    body = exchange.request.body
    if exchange.origin == "tool" or not isinstance(body, JsonBody):
        return None
    if not isinstance(body.value, dict) or not body.value.get("contents"):
        return None
    try:
        start = dt.datetime.fromisoformat(exchange.recorded_at).timestamp()
    except ValueError:
        return None
    key = json.dumps(body.value["contents"][0], sort_keys=True)
    end = start + exchange.duration_ms / 1000.0
    return key, _Span(exchange, start, end, body.value)


def _spans(exchanges: Sequence[Exchange]) -> dict[str, list[_Span]]:
    """The model calls of one cassette by conversation (first content), sorted by start."""
    found: dict[str, list[_Span]] = {}
    for exchange in exchanges:
        spanned = _span(exchange)
        if spanned is not None:
            found.setdefault(spanned[0], []).append(spanned[1])
    for spans in found.values():
        spans.sort(key=lambda s: s.start)
    return found


def _waits(first: _Span, later: _Span) -> tuple[_Span, _Span] | None:
    """(waiting, awaited) for two calls of one conversation, ``first`` sorted before
    ``later`` by start: the one that ended later waits when they overlapped, ended apart
    and differ; None when neither waits."""
    if later.start >= first.end or first.end == later.end or later.request == first.request:
        return None
    return (later, first) if first.end < later.end else (first, later)


class _LazyCassette:
    """One lazily loaded cassette's orders, worked out for an exchange when it is served:
    only the calls recorded in flight with it are parsed (read by time from the file's
    lines, :mod:`replayer._exchange_rows`)."""

    def __init__(self, exchanges: LazyExchanges) -> None:
        self.rows = exchange_rows(exchanges)
        timed = [
            (start, row.position, start + row.duration_ms / 1000.0)
            for row in self.rows.rows
            if not row.tool and (start := row.start) is not None
        ]
        timed.sort()
        self._timed = timed
        self._starts = [start for start, _, _ in timed]
        self._longest = max((end - start for start, _, end in timed), default=0.0)

    def before(self, exchange: Exchange) -> list[Exchange] | None:
        """What ``exchange`` waits for; None when it is not this cassette's."""
        position = self.rows.position_of(exchange)
        if position is None:
            return None
        spanned = _span(exchange)
        if spanned is None:
            return []
        key, served = spanned
        # The calls that overlapped it started at most the longest call before it.
        low = bisect.bisect_left(self._starts, served.start - self._longest - 1.0)
        high = bisect.bisect_left(self._starts, served.end + 1.0)
        exchanges = self.rows.exchanges
        found: list[Exchange] = []
        for start, other_position, end in self._timed[low:high]:
            # Sorted as ``_spans`` sorts (by start, ties in cassette order); the times
            # decide first, so only a call that ran alongside it is parsed.
            if (start, other_position) < (served.start, position):
                overlapped = served.start < end
            else:
                overlapped = start < served.end
            if other_position == position or not overlapped or not end < served.end:
                continue
            other = _span(exchanges[other_position])
            if other is None or other[0] != key or other[1].request == served.request:
                continue
            found.append(other[1].exchange)
        return found


class CompletionOrder:
    """Which recorded exchanges must be answered before another's response is sent.

    Args:
        cassettes: each cassette's exchanges (their objects are the ones the replay serves).

    Thread-safe (the server may run in its own thread while a runner reads it).
    """

    def __init__(self, cassettes: Sequence[Sequence[Exchange]]) -> None:
        self._before: dict[int, list[Exchange]] = {}
        self._served: dict[int, int] = {}
        """How many times each exchange was answered (a run repeats them: --num-runs)."""
        self._lock = threading.Lock()
        self._lazy: list[_LazyCassette] = []
        self._asked: set[int] = set()
        """Exchanges the lazy cassettes were asked about."""
        for exchanges in cassettes:
            if isinstance(exchanges, LazyExchanges):
                self._lazy.append(_LazyCassette(exchanges))
                continue
            for spans in _spans(exchanges).values():
                self._order(spans)

    def _order(self, spans: list[_Span]) -> None:
        """Note who waits for whom among one conversation's calls (sorted by start)."""
        for i, first in enumerate(spans):
            for j in range(i + 1, len(spans)):
                later = spans[j]
                if later.start >= first.end:
                    break  # sorted by start: no later call overlaps ``first`` either
                waits = _waits(first, later)
                if waits is not None:
                    self._before.setdefault(id(waits[0].exchange), []).append(waits[1].exchange)

    def _before_of(self, exchange: Exchange) -> list[Exchange] | None:
        if self._lazy and id(exchange) not in self._asked:
            with self._lock:
                if id(exchange) not in self._asked:
                    for cassette in self._lazy:
                        found = cassette.before(exchange)
                        if found is not None:
                            if found:
                                self._before.setdefault(id(exchange), []).extend(found)
                            break
                    self._asked.add(id(exchange))
        return self._before.get(id(exchange))

    def waits_for(self, exchange: Exchange) -> list[Exchange]:
        """The exchanges recorded to finish before ``exchange`` that are not answered yet
        (in this round: when the recording is played again, it waits for them again)."""
        before = self._before_of(exchange)
        if not before:
            return []
        with self._lock:
            rounds = self._served.get(id(exchange), 0)
            return [e for e in before if self._served.get(id(e), 0) <= rounds]

    def answered(self, exchange: Exchange) -> None:
        """The response of ``exchange`` was sent (or failed)."""
        with self._lock:
            self._served[id(exchange)] = self._served.get(id(exchange), 0) + 1
