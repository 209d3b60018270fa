"""What the replay server tells the runner: the exchanges it answered, and the misses.

The server runs in its own thread (or event loop) and the agent talks to it over HTTP, so
the runner cannot see a miss as an exception of its own: the agent sees google-genai's
``APIError``. The server therefore writes into a :class:`ReplayChannel` as it answers —
each exchange it served (replayed, or recorded in auto/record mode) and each miss, under
an id that also travels in the error envelope's ``details`` (see
:func:`cassettes.miss_error_body`). The runner looks a failure's miss up by that id
(:meth:`ReplayChannel.miss_behind`) and reads what a case was served
(:meth:`ReplayChannel.since`).

Example::

    channel = ReplayChannel()
    with replay("weather.cassette.json", channel=channel):
        mark = channel.mark()
        try:
            run_the_agent()
        except Exception as exc:
            miss = channel.miss_behind(exc)   # the ReplayMiss, with its diff, or None
        served, misses = channel.since(mark)
"""

from __future__ import annotations

import itertools
import secrets
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from cassettes._cassette import Exchange
from cassettes._divergence import CLI_HINTS, MissHints, miss_id_in
from cassettes._errors import ReplayMiss

__all__ = ["ChannelMark", "ReplayChannel"]


@dataclass(frozen=True)
class ChannelMark:
    """A position in a channel: how many exchanges and misses it held."""

    exchanges: int
    misses: int


class ReplayChannel:
    """The exchanges a model source answered and the requests it missed, in order.

    Thread-safe: the server writes from its thread while the runner reads from its own.
    """

    def __init__(self, *, hints: MissHints = CLI_HINTS, keep_answered: bool = True) -> None:
        self.hints = hints
        """Whose options a miss's fix names (rec's CLI by default; the pytest plugin and
        ``AgentEvaluator`` pass theirs: :class:`cassettes._divergence.MissHints`)."""
        self.keep_answered = keep_answered
        """Keep every exchange answered (for :attr:`exchanges` and :meth:`since`); off where
        no one reads them (``rec serve``), so a long session keeps none: listeners still
        hear each one."""
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []
        self._misses: dict[str, ReplayMiss] = {}
        self._prefix = secrets.token_hex(4)  # ids from another channel never match here
        self._counter = itertools.count(1)
        self._listeners: list[Callable[[Exchange], None]] = []

    def answered(self, exchange: Exchange) -> None:
        """Note an exchange the client was answered with (a hit, or one just recorded).

        Called before the response is sent: listeners run first (see :meth:`listening`).
        """
        with self._lock:
            if self.keep_answered:
                self._exchanges.append(exchange)
            listeners = list(self._listeners)
        for listener in listeners:
            listener(exchange)

    @contextmanager
    def listening(self, listener: Callable[[Exchange], None]) -> Iterator[None]:
        """Call ``listener(exchange)`` for every exchange answered inside the block (on the
        server's thread, before the client gets the response: the frozen clock moves so)."""
        with self._lock:
            self._listeners.append(listener)
        try:
            yield
        finally:
            with self._lock:
                self._listeners.remove(listener)

    def missed(self, miss: ReplayMiss) -> str:
        """Note a miss; returns the id to put in the error envelope."""
        with self._lock:
            miss_id = f"{self._prefix}-{next(self._counter)}"
            self._misses[miss_id] = miss
        return miss_id

    @property
    def exchanges(self) -> list[Exchange]:
        """Every exchange answered so far, in order."""
        with self._lock:
            return list(self._exchanges)

    @property
    def misses(self) -> list[ReplayMiss]:
        """Every miss so far, in order."""
        with self._lock:
            return list(self._misses.values())

    def mark(self) -> ChannelMark:
        """The current position (see :meth:`since`)."""
        with self._lock:
            return ChannelMark(len(self._exchanges), len(self._misses))

    def since(self, mark: ChannelMark) -> tuple[list[Exchange], list[ReplayMiss]]:
        """The exchanges answered and the misses made after ``mark``."""
        with self._lock:
            return self._exchanges[mark.exchanges :], list(self._misses.values())[mark.misses :]

    def miss(self, miss_id: str) -> ReplayMiss | None:
        """The miss noted under ``miss_id``."""
        with self._lock:
            return self._misses.get(miss_id)

    def miss_behind(self, error: BaseException) -> ReplayMiss | None:
        """The miss that caused ``error``: a :class:`ReplayMiss` in its chain, or a
        google-genai ``APIError`` whose envelope carries one of this channel's miss ids."""
        seen: list[BaseException] = []
        cursor: BaseException | None = error
        while cursor is not None and not any(cursor is s for s in seen):
            seen.append(cursor)
            if isinstance(cursor, ReplayMiss):
                return cursor
            # An APIError exists only once google-genai is imported: `rec serve` never is.
            genai_errors = sys.modules.get("google.genai.errors")
            if genai_errors is not None and isinstance(cursor, genai_errors.APIError):
                miss_id = miss_id_in(cursor.details)
                found = self.miss(miss_id) if miss_id is not None else None
                if found is not None:
                    return found
            cursor = cursor.__cause__ or cursor.__context__
        return None
