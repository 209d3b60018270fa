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
before playing a hit and tells it when the response was sent.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cassettes._cassette import Exchange, JsonBody

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


def _spans(exchanges: Sequence[Exchange]) -> dict[str, list[_Span]]:
    """The model calls of one cassette by conversation (first content), sorted by start."""
    found: dict[str, list[_Span]] = {}
    for exchange in exchanges:
        body = exchange.request.body
        if exchange.origin == "tool" or not isinstance(body, JsonBody):
            continue
        if not isinstance(body.value, dict) or not body.value.get("contents"):
            continue
        try:
            start = dt.datetime.fromisoformat(exchange.recorded_at).timestamp()
        except ValueError:
            continue
        key = json.dumps(body.value["contents"][0], sort_keys=True)
        end = start + exchange.duration_ms / 1000.0
        found.setdefault(key, []).append(_Span(exchange, start, end, body.value))
    for spans in found.values():
        spans.sort(key=lambda s: s.start)
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
        for exchanges in cassettes:
            for spans in _spans(exchanges).values():
                self._order(spans)

    def _order(self, spans: list[_Span]) -> None:
        """Note who waits for whom among one conversation's calls (sorted by start)."""
        for i, first in enumerate(spans):
            for j in range(i + 1, len(spans)):
                later = spans[j]
                if later.start >= first.end:
                    break  # sorted by start: no later call overlaps ``first`` either
                if first.end == later.end or later.request == first.request:
                    continue
                if first.end < later.end:
                    self._before.setdefault(id(later.exchange), []).append(first.exchange)
                else:
                    self._before.setdefault(id(first.exchange), []).append(later.exchange)

    def waits_for(self, exchange: Exchange) -> list[Exchange]:
        """The exchanges recorded to finish before ``exchange`` that are not answered yet
        (in this round: when the recording is played again, it waits for them again)."""
        before = self._before.get(id(exchange))
        if not before:
            return []
        with self._lock:
            rounds = self._served.get(id(exchange), 0)
            return [e for e in before if self._served.get(id(e), 0) <= rounds]

    def answered(self, exchange: Exchange) -> None:
        """The response of ``exchange`` was sent (or failed)."""
        with self._lock:
            self._served[id(exchange)] = self._served.get(id(exchange), 0) + 1
