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

from cassettes import Exchange, JsonBody

__all__ = ["ORDER_WAIT_S", "CompletionOrder"]

ORDER_WAIT_S = 2.0
"""The longest a response is held for the exchanges recorded to finish before it."""


@dataclass(frozen=True)
class _Span:
    exchange: Exchange
    start: float
    end: float
    conversation: str
    request: str


def _span(exchange: Exchange) -> _Span | None:
    body = exchange.request.body
    if exchange.origin == "tool" or not isinstance(body, JsonBody):
        return None
    if not isinstance(body.value, dict) or not body.value.get("contents"):
        return None
    try:
        start = dt.datetime.fromisoformat(exchange.recorded_at).timestamp()
    except ValueError:
        return None
    contents = body.value["contents"]
    return _Span(
        exchange,
        start,
        start + exchange.duration_ms / 1000.0,
        json.dumps(contents[0], sort_keys=True),
        json.dumps(body.value, sort_keys=True),
    )


class CompletionOrder:
    """Which recorded exchanges must be answered before another's response is sent.

    Args:
        cassettes: each cassette's exchanges (their objects are the ones the replay serves).

    Thread-safe (the server may run in its own thread while a runner reads it).
    """

    def __init__(self, cassettes: Sequence[Sequence[Exchange]]) -> None:
        self._before: dict[int, list[Exchange]] = {}
        self._done: set[int] = set()
        self._lock = threading.Lock()
        for exchanges in cassettes:
            spans = sorted(
                (s for e in exchanges if (s := _span(e)) is not None), key=lambda s: s.start
            )
            for i, first in enumerate(spans):
                for later in spans[i + 1 :]:
                    if later.start >= first.end:
                        break  # sorted by start: no later span overlaps ``first`` either
                    if later.conversation != first.conversation or later.request == first.request:
                        continue
                    if first.end < later.end:
                        self._before.setdefault(id(later.exchange), []).append(first.exchange)
                    elif later.end < first.end:
                        self._before.setdefault(id(first.exchange), []).append(later.exchange)

    def waits_for(self, exchange: Exchange) -> list[Exchange]:
        """The exchanges recorded to finish before ``exchange`` that are not answered yet."""
        before = self._before.get(id(exchange))
        if not before:
            return []
        with self._lock:
            return [e for e in before if id(e) not in self._done]

    def answered(self, exchange: Exchange) -> None:
        """The response of ``exchange`` was sent (or failed): nothing waits for it now."""
        with self._lock:
            self._done.add(id(exchange))
