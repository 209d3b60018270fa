"""Concurrent model calls finish in the order they finished in the recording.

A ParallelAgent's branches call the model at the same time, and ADK appends each branch's
events to the session as the branch finishes, so the next agent's request (a merger)
carries the branches' outputs in completion order. Recorded, that order is the model's
latency; replayed, every answer is instant and the branches race, so the merger's request
would not match. Replay therefore holds the response of an exchange until the exchanges
recorded to finish before it have been answered:

- the calls that ran while it was in flight and ended before it (it overlapped them);
- the call of its own session that ended last before it started. A branch that ran whole
  before another branch's first call (a loaded machine) imposes its order this way; a
  call that continues that one (its request carries the response) waits at no cost.
  Which session a call belongs to is the conversations' threading
  (``cassettes._conversations``, as eval cases are made) of its conversation's calls
  recorded up to it: the next session's first call of a cassette whose cases open with
  the same user turn does not wait for the session before.

Both are calls of the same conversation (the same first content: the session's first
user turn) in the same cassette, with another request (identical requests are
interchangeable). The wait is bounded (:data:`ORDER_WAIT_S`): an exchange the replay never
asks for (the agent changed) delays the one waiting by that much once, and then it is
answered anyway, so nothing deadlocks.

:class:`CompletionOrder` holds the decisions (pure, no I/O); the replay handler asks it
before playing a hit and tells it when the response was sent. The session's last call,
and for a lazily loaded cassette the calls it overlapped, are found when an exchange is
first asked for: only calls recorded alongside it or before it in its conversation are
parsed (another conversation's are passed over by the side index's first user turn).
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cassettes._cassette import Exchange, JsonBody, LazyExchanges
from cassettes._conversations import Thread, Threading
from cassettes._first_user import first_user_digest, first_user_text
from replayer._exchange_rows import exchange_rows

__all__ = ["ORDER_WAIT_S", "SESSION_CALLS_MOST", "SESSION_WINDOW", "CompletionOrder"]

ORDER_WAIT_S = 2.0
"""The longest a response is held for the exchanges recorded to finish before it."""

SESSION_WINDOW = 32
"""How many model calls that ended before a call are read to find the last of them."""

SESSION_CALLS_MOST = 2048
"""The most calls of one conversation a lazily loaded cassette threads into sessions (a
long recording whose cases all open with the same user turn): a call after them waits
only for the calls it ran alongside and the one its request continues."""


@dataclass
class _Span:
    exchange: Exchange
    start: float
    end: float
    body: dict[str, Any]
    _request: str | None = None

    @property
    def request(self) -> str:
        """The request body, canonical (built only for calls that may wait)."""
        if self._request is None:
            self._request = json.dumps(self.body, sort_keys=True)
        return self._request

    def continues(self, earlier: _Span) -> bool:
        """Whether this request re-sends ``earlier``'s contents and more (it was sent
        after ``earlier``'s response, in the same session)."""
        before, after = earlier.body["contents"], self.body["contents"]
        return len(before) < len(after) and after[: len(before)] == before


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


@dataclass(frozen=True)
class _Asked:
    """An exchange a response is asked for, as the recording's calls are compared with it."""

    position: int
    """Its index in the cassette."""
    key: str
    """Its conversation (first content)."""
    digest: str | None
    """The digest of its first user turn when that is its first content (what a lazily
    loaded cassette's side index holds for each call); None: no call is passed over by it."""
    span: _Span


def _asked(position: int, exchange: Exchange) -> _Asked | None:
    spanned = _span(exchange)
    if spanned is None:
        return None
    key, span = spanned
    first = span.body["contents"][0]
    opens = isinstance(first, dict) and first.get("role", "user") == "user"
    text = first_user_text(span.body) if opens else None
    digest = first_user_digest(text) if text is not None else None
    return _Asked(position, key, digest, span)


@dataclass
class _Threaded:
    """One conversation's calls threaded into sessions, in the order they started."""

    threading: Threading = field(default_factory=Threading)
    sessions: dict[int, tuple[Exchange, Thread | None]] = field(default_factory=dict)
    """Each call threaded (by the object's id) and its session."""
    next: int = 0
    """Where the threading is in the cassette's calls by start."""


class _Recording:
    """One cassette's model calls by time (read from its rows, :mod:`replayer._exchange_rows`:
    a lazily loaded cassette's bodies are parsed only for the calls recorded near the one
    asked about)."""

    def __init__(self, exchanges: Sequence[Exchange]) -> None:
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
        self._by_end = sorted((end, position) for _, position, end in timed)
        self._ends = [end for end, _ in self._by_end]
        self._threaded: dict[str, _Threaded] = {}
        """Per conversation, its calls threaded so far (:meth:`_one_session`)."""

    def _call(self, position: int, asked: _Asked) -> _Span | None:
        """The span of the model call at ``position`` when it is of ``asked``'s
        conversation (another first user turn in the side index: not parsed)."""
        exchanges = self.rows.exchanges
        if (
            asked.digest is not None
            and isinstance(exchanges, LazyExchanges)
            and not exchanges.parsed(position)
            and exchanges.first_user(position) not in (None, asked.digest)
        ):
            return None
        found = _span(exchanges[position])
        return found[1] if found is not None and found[0] == asked.key else None

    def overlapped(self, asked: _Asked) -> list[Exchange]:
        """The calls that ran while ``asked`` was in flight and ended before it."""
        position, served = asked.position, asked.span
        # The calls that overlapped it started at most the longest call before it.
        low = bisect.bisect_left(self._starts, served.start - self._longest - 1.0)
        high = bisect.bisect_left(self._starts, served.end + 1.0)
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
            other = self._call(other_position, asked)
            if other is not None and other.request != served.request:
                found.append(other.exchange)
        return found

    def last_of_session(self, asked: _Asked) -> Exchange | None:
        """The call of ``asked``'s session that ended last before it started, if another
        request; None when that call is another session's (or none ended before it)."""
        served = asked.span
        last: _Span | None = None
        low = max(0, bisect.bisect_right(self._ends, served.start) - SESSION_WINDOW)
        for index in range(bisect.bisect_right(self._ends, served.start) - 1, low - 1, -1):
            other = self._call(self._by_end[index][1], asked)
            if other is not None and other.request != served.request:
                last = other
                break
        if last is None:
            return None
        if served.continues(last) or self._one_session(asked, last):
            return last.exchange
        return None

    def _one_session(self, asked: _Asked, last: _Span) -> bool:
        """Whether the conversations' threading, of the calls recorded up to ``asked``,
        puts ``last`` in ``asked``'s session."""
        threaded = self._threaded.get(asked.key)
        if threaded is None:
            threaded = self._threaded[asked.key] = _Threaded()
        lazy = isinstance(self.rows.exchanges, LazyExchanges)
        timed = self._timed
        served = asked.span.exchange
        while id(served) not in threaded.sessions and threaded.next < len(timed):
            if lazy and len(threaded.sessions) >= SESSION_CALLS_MOST:
                return False
            other = self._call(timed[threaded.next][1], asked)
            threaded.next += 1
            if other is not None:
                thread = threaded.threading.add(other.exchange)
                threaded.sessions[id(other.exchange)] = (other.exchange, thread)
        found = threaded.sessions.get(id(served))
        earlier = threaded.sessions.get(id(last.exchange))
        if found is None or earlier is None or found[0] is not served:
            return False
        return earlier[0] is last.exchange and found[1] is not None and found[1] is earlier[1]

    def before(self, exchange: Exchange, *, overlaps: bool) -> list[Exchange] | None:
        """What ``exchange`` waits for (the calls it overlapped only when ``overlaps``);
        None when it is not this cassette's."""
        position = self.rows.position_of(exchange)
        if position is None:
            return None
        asked = _asked(position, exchange)
        if asked is None:
            return []
        found = self.overlapped(asked) if overlaps else []
        last = self.last_of_session(asked)
        if last is not None:
            found.append(last)
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
        self.held = 0
        """Responses held for the calls recorded to finish before them (:meth:`holds`)."""
        self._recordings: list[tuple[_Recording, bool]] = []
        """Each cassette, and whether the calls it overlapped are found when asked (a lazily
        loaded one) rather than all at once here."""
        self._asked: set[int] = set()
        """Exchanges the recordings were asked about."""
        for exchanges in cassettes:
            lazy = isinstance(exchanges, LazyExchanges)
            self._recordings.append((_Recording(exchanges), lazy))
            if not lazy:
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
        if id(exchange) not in self._asked:
            with self._lock:
                if id(exchange) not in self._asked:
                    for recording, overlaps in self._recordings:
                        found = recording.before(exchange, overlaps=overlaps)
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

    def holds(self, exchange: Exchange) -> bool:
        """Whether ``exchange`` must wait for its turn now (counted in :attr:`held`)."""
        if not self.waits_for(exchange):
            return False
        with self._lock:
            self.held += 1
        return True

    def answered(self, exchange: Exchange) -> None:
        """The response of ``exchange`` was sent (or failed)."""
        with self._lock:
            self._served[id(exchange)] = self._served.get(id(exchange), 0) + 1
