"""Recorded reads served back: each case's agent code reads what the recording read.

When a case replays from cassettes with a ``reads`` section (``cassettes._reads``), its
turns read the clock, ``uuid.uuid4()``, ``random`` and ``secrets`` through
``recorder._traffic._reads``: :class:`ReadsPlugin` (first among the case's ADK plugins) starts a
:class:`ServedReads` for each turn, holding the reads of the invocation recorded for that
turn (the EvalSet's ``invocation_id``), and moves the reader as ADK's callbacks run, the
same way the capture plugin did while recording. Everything is the case's own (context
variables): cases replay side by side.

A reader that reads more than was recorded (or in another order) continues from the last
recorded clock value of that reader, ticking, and draws real ids and random numbers;
:class:`CaseReads` counts what was served and what was not, for the report. A naive
``datetime.now()`` is local time: the case runs in the recorded time zone
(:func:`recorded_zone`, process-wide ``TZ`` while such cases run; cases recorded in
another zone at the same time keep the first one's, with a warning).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from cassettes._evalset import EvalCase
from cassettes._reads import InvocationReads, ReadKind, ReadsRecording
from recorder._traffic import (
    ReaderCallbacks,
    ReadSession,
    begin_invocation,
    end_invocation,
    in_tool,
)

__all__ = ["CaseReads", "ReadsPlugin", "ServedReads", "case_reads", "recorded_zone"]

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


class ReadsPlugin(ReaderCallbacks, BasePlugin):
    """Serves one case's recorded reads: a :class:`ServedReads` per turn, the reader moved
    by ADK's callbacks as the capture plugin moved it while recording."""

    def __init__(self, reads: CaseReads) -> None:
        super().__init__(name="rec_served_reads")
        self.reads = reads
        self._turn = 0

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        if in_tool():  # a run inside a tool (AgentTool) reads as the tool
            return None
        turns = self.reads.turns
        recorded = turns[self._turn] if self._turn < len(turns) else None
        self._turn += 1
        begin_invocation(ServedReads(recorded, self.reads))
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        if not in_tool():
            end_invocation()


def case_reads(case: EvalCase, sections: Sequence[ReadsRecording]) -> CaseReads | None:
    """The case's recorded reads, turn by turn (None: none of its turns read anything)."""
    by_id: dict[str, InvocationReads] = {}
    for section in sections:
        by_id.update(section.by_invocation())
    turns = [by_id.get(invocation.invocation_id) for invocation in case.conversation or []]
    if not any(turns):
        return None
    return CaseReads(case.eval_id, turns)


class _Zone:
    """Process-wide: the ``TZ`` applied while cases recorded in it run."""

    lock = threading.Lock()
    users = 0
    applied: str | None = None
    before: str | None = None


@contextmanager
def recorded_zone(reads: CaseReads | None) -> Iterator[None]:
    """Run the block in the time zone the case was recorded in (see the module's
    docstring); no change when it is unknown or already the process's."""
    zone = next((t.zone for t in reads.turns if t is not None and t.zone), None) if reads else None
    if zone is None:
        yield
        return
    with _Zone.lock:
        if _Zone.users and _Zone.applied != zone:
            log.warning(
                "rec: case %s was recorded in time zone %s, but a case recorded in %s runs "
                "at the same time: its local times are read in %s",
                reads.eval_id if reads else "?",
                zone,
                _Zone.applied,
                _Zone.applied,
            )
        elif _Zone.users == 0:
            _Zone.before, _Zone.applied = os.environ.get("TZ"), zone
            _set_tz(zone)
        _Zone.users += 1
    try:
        yield
    finally:
        with _Zone.lock:
            _Zone.users -= 1
            if _Zone.users == 0:
                _set_tz(_Zone.before)
                _Zone.applied = None


def _set_tz(zone: str | None) -> None:
    if zone is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = zone
    time.tzset()
