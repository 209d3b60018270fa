"""Recorded reads served back: each case's agent code reads what the recording read.

When a case replays from cassettes with a ``reads`` section (``cassettes._reads``), its
turns read the clock, ``uuid.uuid4()``, ``random`` and ``secrets`` through
``recorder._traffic._reads``: each turn gets a :class:`ServedReads` holding the reads of the
invocation recorded for that turn (the EvalSet's ``invocation_id``). An ADK agent's turns
get it from ``replayer._reads_plugin`` (which moves the reader as ADK's callbacks run, as
the capture plugin did while recording); a plain google-genai program's from
:func:`reading_turn`, one reader per turn. Everything is the case's own (context
variables): cases replay side by side.

Under ``rec replay --mode record`` the same turns record instead
(:func:`recording_case_reads`): each turn's reads go to the recording's reads journal
under the EvalSet's ``invocation_id`` of the turn, which a later replay serves.

A reader that reads more than was recorded (or in another order) continues from the last
recorded clock value of that reader, ticking, and draws real ids and random numbers;
:class:`CaseReads` counts what was served and what was not, for the report. A naive
``datetime.now()`` is local time: the case runs in the recorded time zone
(:func:`recorded_zone`, process-wide ``TZ`` while such cases run; cases recorded in
another zone at the same time keep the first one's, with a warning).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from cassettes._evalset import EvalCase
from cassettes._reads import InvocationReads, ReadKind, ReadsRecording
from recorder._traffic import (
    ReadSession,
    RecordingReads,
    SharedPatch,
    begin_invocation,
    end_invocation,
)

__all__ = [
    "CaseReads",
    "RecordedCaseReads",
    "ServedReads",
    "case_reads",
    "reading_turn",
    "recorded_zone",
    "recording_case_reads",
]

log = logging.getLogger(__name__)

_Value = TypeVar("_Value", int, float, str)


class CaseReads:
    """One case's recorded reads, turn by turn, and what replay made of them."""

    def __init__(self, eval_id: str, turns: Sequence[InvocationReads | None]) -> None:
        self.eval_id = eval_id
        self.turns = list(turns)
        self.served: Counter[ReadKind] = Counter()
        """Reads answered from the recording, by kind."""
        self.beyond: Counter[ReadKind] = Counter()
        """Reads beyond (or out of the order of) the recording, by kind."""
        self._lock = threading.Lock()

    def count(self, kind: ReadKind, *, served: bool) -> None:
        """Count one read."""
        with self._lock:
            (self.served if served else self.beyond)[kind] += 1

    def session(self, turn: int) -> ReadSession:
        """The reads of the case's ``turn``-th turn (0-based), served from its recording."""
        return ServedReads(self.turns[turn] if turn < len(self.turns) else None, self)

    def turn_ended(self, session: ReadSession) -> None:
        """The turn read through ``session`` ended (served reads keep nothing)."""

    def summary(self) -> str | None:
        """One line for the report: what was served, and what ran past the recording."""
        if not self.served and not self.beyond:
            return None
        line = "replayed reads: " + _counts(self.served)
        if self.beyond:
            line += (
                f"; {_counts(self.beyond)} beyond the recording (the clock continued from "
                "its last recorded value; ids and random draws were real)"
            )
        return line


class RecordedCaseReads(CaseReads):
    """``--mode record``: one case's reads recorded turn by turn, each turn's under the
    EvalSet's ``invocation_id`` of that turn (the id replay looks them up by), and handed to
    ``keep`` (the recording's reads journal) as the turn ends. A turn without an id (a
    hand-written EvalSet, a user-simulator turn) reads for real and keeps nothing."""

    def __init__(
        self, eval_id: str, invocation_ids: Sequence[str], keep: Callable[[RecordingReads], None]
    ) -> None:
        super().__init__(eval_id, [])
        self._ids = list(invocation_ids)
        self._keep = keep

    def session(self, turn: int) -> ReadSession:
        return RecordingReads(self._ids[turn] if turn < len(self._ids) else "")

    def turn_ended(self, session: ReadSession) -> None:
        if not isinstance(session, RecordingReads) or not session.reads.invocation_id:
            return
        for reads in session.reads.readers.values():
            for read in reads:
                self.count(read.kind, served=True)
        self._keep(session)

    def summary(self) -> str | None:
        return f"recorded reads: {_counts(self.served)}" if self.served else None


def _counts(counter: Counter[ReadKind]) -> str:
    return ", ".join(f"{kind} x{n}" for kind, n in sorted(counter.items())) or "none"


class ServedReads(ReadSession):
    """One turn's reads, served in order per reader."""

    def __init__(self, recorded: InvocationReads | None, case: CaseReads) -> None:
        super().__init__()
        self._recorded = recorded.readers if recorded is not None else {}
        self._case = case
        self._next: dict[str, int] = {}
        self._ticking: dict[str, tuple[int, int]] = {}
        """Per reader past its recording: (last recorded clock value, real time then)."""

    def take(self, reader: str, kind: ReadKind, real: Callable[[], _Value]) -> _Value:
        reads = self._recorded.get(reader, [])
        with self._lock:
            position = self._next.get(reader, 0)
            if position < len(reads) and reads[position].kind == kind:
                self._next[reader] = position + 1
                self._case.count(kind, served=True)
                return reads[position].value  # type: ignore[return-value]
        self._case.count(kind, served=False)
        last = next((r.value for r in reversed(reads) if r.kind == "clock"), None)
        if kind != "clock" or not isinstance(last, int):
            return real()
        with self._lock:
            since = self._ticking.setdefault(reader, (last, _real_ns()))
        return since[0] + (_real_ns() - since[1])  # type: ignore[return-value]


def _real_ns() -> int:
    import time_machine

    return time_machine.escape_hatch.time.time_ns()


@contextmanager
def reading_turn(reads: CaseReads | None, turn: int) -> Iterator[None]:
    """A plain google-genai program's ``turn``-th turn (0-based) reads through ``reads``
    while the block runs in the current context: one reader (``run``) for the whole turn,
    since a program has no callbacks to name others. No change when ``reads`` is None."""
    if reads is None:
        yield
        return
    session = reads.session(turn)
    begin_invocation(session)
    try:
        yield
    finally:
        end_invocation()
        reads.turn_ended(session)


def case_reads(case: EvalCase, sections: Sequence[ReadsRecording]) -> CaseReads | None:
    """The case's recorded reads, turn by turn (None: none of its turns read anything)."""
    by_id: dict[str, InvocationReads] = {}
    for section in sections:
        by_id.update(section.by_invocation())
    turns = [by_id.get(invocation.invocation_id) for invocation in case.conversation or []]
    if not any(turns):
        return None
    return CaseReads(case.eval_id, turns)


def recording_case_reads(case: EvalCase, journal: Path) -> CaseReads:
    """``--mode record``: the case's reads, recorded into the reads ``journal`` of the
    recording being written (merged into its cassette's ``reads`` section)."""
    from recorder import write_reads

    ids = [invocation.invocation_id for invocation in case.conversation or []]
    return RecordedCaseReads(case.eval_id, ids, functools.partial(write_reads, journal))


_ZONE = SharedPatch()
"""Process-wide: the ``TZ`` applied while cases recorded in it run."""
_ZONE_APPLIED: list[str] = []
"""The zone :data:`_ZONE` applied, while it is in place."""


@contextmanager
def recorded_zone(reads: CaseReads | None) -> Iterator[None]:
    """Run the block in the time zone the case was recorded in (see the module's
    docstring); no change when it is unknown or already the process's."""
    zone = next((t.zone for t in reads.turns if t is not None and t.zone), None) if reads else None
    if zone is None:
        yield
        return

    def apply() -> Callable[[], None]:
        before = os.environ.get("TZ")
        _set_tz(zone)
        _ZONE_APPLIED[:] = [zone]

        def undo() -> None:
            _set_tz(before)
            _ZONE_APPLIED.clear()

        return undo

    def joining() -> None:
        applied = _ZONE_APPLIED[0] if _ZONE_APPLIED else None
        if applied != zone:
            log.warning(
                "rec: case %s was recorded in time zone %s, but a case recorded in %s runs "
                "at the same time: its local times are read in %s",
                reads.eval_id if reads else "?",
                zone,
                applied,
                applied,
            )

    with _ZONE.active(apply, joining=joining):
        yield


def _set_tz(zone: str | None) -> None:
    if zone is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = zone
    time.tzset()
