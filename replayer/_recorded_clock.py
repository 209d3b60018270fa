"""The frozen clock of replay: the replayed process reads the time the recording was made.

An agent whose requests depend on the clock (an instruction with ``datetime.now()``, as
ADK's memory sample has) can only replay if it reads the recording's time. So while a
case replays (``rec replay``'s default; ``--no-freeze-time`` turns it off), the wall clock
of the process (``time.time``, ``datetime.now``, ``date.today``, ...) is moved with
`time-machine <https://github.com/adamchainz/time-machine>`_:

- each turn starts at its recorded start: the invocation's ``creation_timestamp`` (the
  user event's time with rec's ADK capture plugin, the first model request's arrival in
  traffic-only extraction); the clock then ticks at real speed;
- when a model call is answered from the recording, the clock jumps forward to the
  arrival of the request that followed it in the same cassette (the time at which the
  recorded agent built its next request, its tools run in between), never past the next
  turn's recorded start, and never backwards.

The monotonic clocks (``time.monotonic``, ``time.perf_counter``: asyncio's loop clock,
aiohttp's and httpx's timeouts) are not moved. The clock is the case's, not the process's:
time-machine's patched functions ask one process-wide dispatcher
(``recorder._traffic._clock_patch``, shared with recorded reads), which answers from the clock of
the case whose task (a :mod:`contextvars` context: the asyncio task running the case, and
what it starts with ``asyncio.to_thread`` or copies of its context) is asking, and the
real time (or an outer time-machine travel's) everywhere else. So cases replay
concurrently (``--parallel``), each on its own recording's time. A turn with no recorded
start (a hand-written case) keeps the clock where it is; a case with none runs on the real
clock, and so does a case run while freezegun has frozen the clock (time-machine cannot
start then; a warning says so). What the agent's own code reads of the clock is served
from the recording where it was recorded (``replayer._served_reads``).

:class:`ClockPlan` holds the decisions (pure); :class:`RecordedClock` moves the clock.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cassettes._cassette import Exchange, LazyExchanges
from cassettes._evalset import EvalCase
from recorder._traffic import CASE_CLOCK, clock_patched
from replayer._exchange_rows import ExchangeRow, exchange_rows

if TYPE_CHECKING:
    import time_machine

__all__ = ["ClockPlan", "RecordedClock", "frozen_clock", "recorded_time"]

log = logging.getLogger(__name__)


def recorded_time(exchange: Exchange) -> float | None:
    """When the request of ``exchange`` arrived (seconds since the epoch), if readable."""
    try:
        return dt.datetime.fromisoformat(exchange.recorded_at).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class ClockPlan:
    """When one case's clock reads what (pure: no clock is touched here)."""

    turns: tuple[float | None, ...]
    """Per turn (0-based), its recorded start; None when unknown."""
    next_request: dict[int, float] = field(default_factory=dict)
    """Per served exchange (by ``id()`` of the recorded object), the arrival of the
    request that followed it in its cassette."""
    lazy: tuple[_LazyFollowing, ...] = ()
    """The same for lazily loaded cassettes, by position (no exchange is parsed for it)."""

    def _next_request(self, exchange: Exchange) -> float | None:
        found = self.next_request.get(id(exchange))
        if found is None:
            for part in self.lazy:
                found = part.after(exchange)
                if found is not None:
                    break
        return found

    @classmethod
    def for_case(
        cls,
        case: EvalCase,
        cassettes: Sequence[Sequence[Exchange]],
        *,
        until: float | None = None,
    ) -> ClockPlan:
        """The plan of ``case`` replayed from ``cassettes`` (each one's exchanges, in order).

        Only model exchanges count (a tool's own calls are not model requests), and only
        those recorded while the case was: from its first recorded turn start to ``until``
        (the next case's recorded start, when cases replay together: another case's answer
        then never moves this case's clock).
        """
        turns = tuple(
            invocation.creation_timestamp if invocation.creation_timestamp > 0 else None
            for invocation in case.conversation or []
        )
        begin = next((t for t in turns if t is not None), None)

        def during(exchange: Exchange) -> bool:
            if until is None:
                return True
            arrival = recorded_time(exchange)
            return arrival is not None and (begin or arrival) <= arrival < until

        following: dict[int, float] = {}
        lazy: list[_LazyFollowing] = []
        for exchanges in cassettes:
            if isinstance(exchanges, LazyExchanges):
                lazy.append(_LazyFollowing(exchanges, begin=begin, until=until))
                continue
            model = sorted(
                (e for e in exchanges if e.origin != "tool" and during(e)), key=lambda e: e.id
            )
            for current, after in zip(model, model[1:], strict=False):
                arrival = recorded_time(after)
                if arrival is not None:
                    following[id(current)] = arrival
        return cls(turns, following, tuple(lazy))

    @property
    def start(self) -> float | None:
        """Where the clock starts: the first recorded turn start (None: not frozen)."""
        return next((t for t in self.turns if t is not None), None)

    def at_turn(self, index: int, now: float) -> float | None:
        """Where to move the clock as turn ``index`` starts (None: leave it)."""
        target = self.turns[index] if index < len(self.turns) else None
        return target if target is not None and target > now else None

    def after_answer(self, exchange: Exchange, now: float, *, turn: int) -> float | None:
        """Where to move the clock once ``exchange`` was answered during ``turn``."""
        target = self._next_request(exchange)
        if target is None:
            return None
        following = next((t for t in self.turns[turn + 1 :] if t is not None), None)
        if following is not None:
            target = min(target, following)
        return target if target > now else None


class _LazyFollowing:
    """``ClockPlan.next_request`` of one lazily loaded cassette, read from its rows
    (:mod:`replayer._exchange_rows`: id, time and origin, no body parsed).

    Where the ids count up in file order (as rec writes them), the request that followed
    a served exchange is found by reading on from it, when it is served: a case replayed
    from a recording of many others reads the rows of its own span, not the whole file.
    Otherwise every row is read once, sorted by id, on the first answer.
    """

    def __init__(
        self, exchanges: LazyExchanges, *, begin: float | None, until: float | None
    ) -> None:
        self.rows = exchange_rows(exchanges)
        self._begin = begin
        self._until = until
        self._in_order = exchanges.ids_count_up()
        self._sorted: dict[int, float] | None = None
        self._first: dict[int, int | None] = {}
        """Position -> the first counted row at or after it (None: none), as read so far."""

    def _counts(self, row: ExchangeRow) -> bool:
        """A model call recorded during the case (within ``begin``..``until``)."""
        if row.tool:
            return False
        if self._until is None:
            return True
        arrival = row.start
        return arrival is not None and (self._begin or arrival) <= arrival < self._until

    def after(self, exchange: Exchange) -> float | None:
        """The arrival of the request that followed ``exchange`` (None: none, or not ours)."""
        position = self.rows.position_of(exchange)
        if position is None:
            return None
        if not self._in_order:
            return self._by_id().get(position)
        rows = self.rows.rows
        if not self._counts(rows[position]):
            return None
        found = self._first_counted(position + 1)
        return None if found is None else rows[found].start

    def _first_counted(self, start: int) -> int | None:
        """The first counted row at or after ``start``; each row is read once per plan."""
        rows = self.rows.rows
        passed: list[int] = []
        found: int | None = None
        at = start
        while at < len(rows):
            if at in self._first:
                found = self._first[at]
                break
            passed.append(at)
            if self._counts(rows[at]):
                found = at
                break
            at += 1
        for position in passed:
            self._first[position] = found
        return found

    def _by_id(self) -> dict[int, float]:
        """Every counted row's following arrival, the rows sorted by id (read once)."""
        if self._sorted is None:
            model = sorted((r for r in self.rows.rows if self._counts(r)), key=lambda r: r.id)
            self._sorted = {}
            for current, after in zip(model, model[1:], strict=False):
                arrival = after.start
                if arrival is not None:
                    self._sorted[current.position] = arrival
        return self._sorted


class RecordedClock:
    """Moves one case's clock along a :class:`ClockPlan` (use :func:`frozen_clock`).

    Thread-safe: answers are reported from the replay server's thread. The clock moves
    by ``time_machine.Traveller.shift``, one attribute update, so a reader on another
    thread never sees it half moved; "now" is read from the case's clock itself, whichever
    thread asks.
    """

    def __init__(self, plan: ClockPlan, traveller: time_machine.Traveller) -> None:
        self.plan = plan
        self._traveller = traveller
        self._lock = threading.Lock()
        self._turn = 0

    def now(self) -> float:
        """The case's time (seconds since the epoch)."""
        return self._traveller.time_ns() / 1e9

    def _move_to(self, target: float | None) -> None:
        if target is not None:
            self._traveller.shift(target - self.now())

    def start_turn(self, index: int) -> None:
        """Turn ``index`` (0-based) is about to be sent."""
        with self._lock:
            self._turn = index
            self._move_to(self.plan.at_turn(index, self.now()))

    def answered(self, exchange: Exchange) -> None:
        """A model call was answered with ``exchange``."""
        with self._lock:
            self._move_to(self.plan.after_answer(exchange, self.now(), turn=self._turn))


@contextmanager
def frozen_clock(plan: ClockPlan) -> Iterator[RecordedClock | None]:
    """Run the block on the plan's clock (ticking from its start); None when it has none.

    The clock is the current context's (see the module's docstring): enter this inside the
    task that runs the case.
    """
    start = plan.start
    if start is None:
        yield None
        return
    import time_machine

    destination, _ = time_machine.extract_timestamp_tzname(start)
    traveller = time_machine.Traveller(destination, None, tick=True)
    with ExitStack() as patched:
        try:
            patched.enter_context(clock_patched())
        except RuntimeError as exc:  # freezegun is active: the caller froze the clock itself
            log.warning("rec: the case runs on the caller's clock, not the recording's (%s)", exc)
            yield None
            return
        token = CASE_CLOCK.set(traveller)
        try:
            yield RecordedClock(plan, traveller)
        finally:
            CASE_CLOCK.reset(token)
