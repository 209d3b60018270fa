"""Exchanges built in a worker process: the recorder's per-exchange CPU off its interpreter.

Building an exchange (:func:`recorder._exchange_build.build_exchange`: parsing, redaction,
the secret scan) takes about 0.5 ms of interpreter time for an agent request. On the
journal's writer thread it would hold the interpreter lock the event loop needs, and the
next request on a connection would wait for the previous one's build (see
bench/README.md). So the recorder hands each exchange to one worker process: the journal's
writer thread sends it and waits for its line, holding nothing while it waits, so the
lines keep their order and the journal its promise (``recorder._journal``). The exchanges
of one journal group go in one round trip (:func:`build_together`): each round trip costs
the writer thread a few waits for the interpreter lock, which the event loop holds while
it is busy, and one per exchange would make the writer the bottleneck of a busy recording.

Nothing depends on the worker being there, or waits for it to start. ``rec start`` starts
it with the recording; a recording made through the API starts it once it has built
:data:`START_AFTER` exchanges itself (a recording of a few, as a test makes, never pays for
a process). Until it says it is ready (its imports take a moment), exchanges are built in
the recorder's process; so is one it fails on, and, once it is gone (it could not start,
or died), every later one, with a warning said once: nothing is lost or held back. A
body over :data:`IN_PROCESS_BYTES` is built in the recorder's process too (copying it to
the worker and its line back would cost more than the build). On Windows there is no
worker.

The worker is ``python -c`` running :func:`run` (:data:`_LAUNCH`) with two pipes: frames
in on its standard input, frames out on the standard output it was started with (its own
prints go to standard error). A frame is an 8-byte little-endian length and a pickle (the
pipes are private to the two processes). It ignores SIGINT (Ctrl-C reaches the whole process group;
the recorder decides when a recording ends) and exits at the end of its input: when the
recorder closes it, or dies.
"""

from __future__ import annotations

import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel

from cassettes._redaction import RedactionRules
from recorder._exchange_build import Received, build_exchange

__all__ = [
    "ANSWER_WAIT_S",
    "IN_PROCESS_BYTES",
    "ROUND_TRIP_BYTES",
    "START_AFTER",
    "BuildWorker",
    "BuiltElsewhere",
    "LineBuild",
    "WorkerBuild",
    "build_together",
    "main",
    "run",
]

log = logging.getLogger(__name__)

IN_PROCESS_BYTES = 1 << 20
"""An exchange whose bodies are larger than this is built in the recorder's process."""
START_AFTER = 16
"""Exchanges a recording builds in its own process before it starts the worker."""
ROUND_TRIP_BYTES = 4 * IN_PROCESS_BYTES
"""Exchanges sent in one round trip hold at most this much (one larger exchange goes
alone): what both processes hold at once for a round trip stays bounded."""

_LENGTH = struct.Struct("<Q")
_CLOSE_WAIT_S = 30.0
"""How long closing waits for the worker to exit once its input ended (it is idle by
then: every build was answered) before it is killed."""
ANSWER_WAIT_S = 60.0
"""How long the recorder waits for the worker to take or answer a round trip (a few ms
of work, far less than this even on a loaded machine) before it gives up on it."""
STOPPED_WAIT_S = 5.0
"""How long the worker may be seen stopped (SIGSTOP, a debugger) before the recorder
gives up on it, whatever the wait it is in."""
_POLL_S = 0.5


class BuiltElsewhere(BaseModel):
    """An exchange line the worker built: the journal holds its text; the recorder keeps
    only its id."""

    id: int


class LineBuild(NamedTuple):
    """The worker's answer for one exchange (:class:`~recorder._exchange_build.ExchangeBuild`
    with the line's text instead of its model)."""

    data: bytes | None
    problem: str | None
    level: int
    refused: bool


class BuildWorker:
    """One worker process, used from one thread at a time (the journal's writer thread;
    a lock keeps any other caller in line).

    Args:
        rules: the recording's redaction rules (sent once, when the worker starts).
    """

    def __init__(self, rules: RedactionRules) -> None:
        self._rules = rules
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._gone = os.name != "posix"  # no select() on a pipe elsewhere
        self._ready = False
        self._before_start = START_AFTER
        self.built = 0
        """Exchanges the worker built."""
        self.round_trips = 0
        """Round trips that brought the worker's builds (one per journal group, or more
        for a group over :data:`ROUND_TRIP_BYTES`)."""

    def start(self) -> None:
        """Start the worker now instead of after the recording's first exchanges (for a
        long recording, whose first exchanges should not wait for it either)."""
        with self._lock:
            if self._process is None and not self._gone:
                self._start()

    def _start(self) -> None:
        """Start the worker process. Under the lock."""
        try:
            root = str(Path(__file__).resolve().parents[1])
            self._process = subprocess.Popen(
                [sys.executable, "-c", _LAUNCH.format(root=root)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                close_fds=True,
            )
            os.set_blocking(self._input(), False)  # a write waits in _wait, bounded
            self._send(self._rules)
        except OSError as exc:
            self._give_up(f"it could not start ({exc.strerror or exc})")

    @property
    def pid(self) -> int | None:
        """The worker's process id (None once it is gone or never started)."""
        return None if self._gone or self._process is None else self._process.pid

    def build(self, got: Received, exchange_id: int) -> LineBuild | None:
        """The worker's build of the exchange; None when the recorder must build it itself
        (the worker is gone, failed on it, or the exchange is too large to send)."""
        return self.build_all([(got, exchange_id)])[0]

    def build_all(self, exchanges: Sequence[tuple[Received, int]]) -> list[LineBuild | None]:
        """:meth:`build` of each of ``exchanges`` (received exchanges and their ids), in as
        few round trips as :data:`ROUND_TRIP_BYTES` allows; in their order."""
        answers: list[LineBuild | None] = [None] * len(exchanges)
        sendable = [i for i, (got, _) in enumerate(exchanges) if got.size() <= IN_PROCESS_BYTES]
        if self._gone or not sendable:
            return answers
        with self._lock:
            if self._process is None and not self._gone:
                before = min(self._before_start, len(sendable))
                self._before_start -= before
                sendable = sendable[before:]
                if not sendable:
                    return answers
                self._start()
            if self._gone or not self._is_ready():
                return answers
            for trip in _round_trips(sendable, exchanges):
                replies = self._round_trip([exchanges[i] for i in trip])
                if replies is None:
                    break
                for i, reply in zip(trip, replies, strict=True):
                    if isinstance(reply, str):  # it raised: the recorder's own build says how
                        log.debug("the build worker failed on #%d:\n%s", exchanges[i][1], reply)
                        continue
                    self.built += 1
                    answers[i] = LineBuild(*reply)
        return answers

    def _round_trip(self, exchanges: list[tuple[Received, int]]) -> list[Any] | None:
        """The worker's answers to ``exchanges``; None once it is gone. Under the lock."""
        try:
            self._send(exchanges)
            replies = self._receive(ANSWER_WAIT_S)
            self.round_trips += 1
        except (OSError, EOFError, pickle.PickleError) as exc:
            self._stopped_answering(exc)
            return None
        if not isinstance(replies, list) or len(replies) != len(exchanges):
            self._give_up(f"it answered {len(exchanges)} exchanges with {type(replies).__name__}")
            return None
        return replies

    def close(self) -> None:
        """End the worker's input and wait for it to exit (killed if it does not)."""
        with self._lock:
            self._gone = True
            process, self._process = self._process, None
        if process is None:
            return
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()
        if _stopped(process):  # it cannot read the end of its input: not waited for
            process.kill()
        try:
            process.wait(timeout=_CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def wait_ready(self, timeout: float) -> bool:
        """Start the worker now if it has not started, and wait up to ``timeout`` seconds
        for it to say it is ready (for a caller that wants its builds from the first
        exchange on); whether it is."""
        with self._lock:
            if self._process is None and not self._gone:
                self._start()
            return not self._gone and self._is_ready(timeout)

    def _is_ready(self, timeout: float = 0.0) -> bool:
        """Whether the worker said it is ready; waits up to ``timeout`` seconds (by default
        not at all). Under the lock."""
        if self._ready:
            return True
        try:
            readable, _, _ = select.select([self._output()], [], [], timeout)
            if readable:
                _receive(self._output())  # its first frame says it is ready
                self._ready = True
        except (OSError, EOFError, pickle.PickleError, ValueError) as exc:
            self._give_up(f"it did not start ({_exit_of(self._process) or exc})")
        return self._ready

    def _send(self, value: object) -> None:
        """Send a frame, waiting (bounded) for the worker to take it. Under the lock."""
        _send(self._input(), value, lambda fd: self._wait(fd, ANSWER_WAIT_S, write=True))

    def _receive(self, timeout: float) -> Any:
        """The worker's next frame, waited for up to ``timeout`` seconds. Under the lock."""
        return _receive(self._output(), lambda fd: self._wait(fd, timeout, write=False))

    def _wait(self, fd: int, timeout: float, *, write: bool) -> None:
        """Wait until the worker's pipe ``fd`` can be written or read.

        Raises:
            TimeoutError: not within ``timeout`` seconds, or the worker was seen stopped
                for :data:`STOPPED_WAIT_S` (alive, but it will not answer).
        """
        deadline = time.monotonic() + timeout
        stopped_since: float | None = None
        while True:
            watched = [fd]
            ready = (
                select.select([], watched, [], _POLL_S)[1]
                if write
                else (select.select(watched, [], [], _POLL_S)[0])
            )
            if ready:
                return
            now = time.monotonic()
            if not _stopped(self._process):
                stopped_since = None
            elif stopped_since is None:
                stopped_since = now
            elif now - stopped_since >= STOPPED_WAIT_S:
                raise TimeoutError(f"it is stopped and has not answered in {STOPPED_WAIT_S:g} s")
            if now >= deadline:
                raise TimeoutError(f"it has not answered in {timeout:g} s")

    def _input(self) -> int:
        assert self._process is not None and self._process.stdin is not None
        return self._process.stdin.fileno()

    def _output(self) -> int:
        assert self._process is not None and self._process.stdout is not None
        return self._process.stdout.fileno()

    def _stopped_answering(self, exc: BaseException) -> None:
        """Give up on a worker a frame could not be sent to or read from. Under the lock."""
        self._give_up(f"it stopped answering ({_exit_of(self._process) or exc})")

    def _give_up(self, why: str) -> None:
        """Build in the recorder's process from now on; said once."""
        self._gone = True
        log.warning(
            "rec's build worker is not available: %s; exchanges are built in rec's own "
            "process from now on (nothing is lost; recording uses more of its time)",
            why,
        )
        if self._process is not None and self._process.poll() is None:
            self._process.kill()


@dataclass(slots=True, eq=False)
class WorkerBuild:
    """A journal line the build worker builds (a build for
    :meth:`~recorder._journal.Journal.submit_line`): called on the journal's writer thread,
    it gives ``finish`` the worker's answer (None: the recorder builds it itself). The
    journal's :func:`build_together` asks for the answers of a whole group at once."""

    worker: BuildWorker
    got: Received
    exchange_id: int
    finish: Callable[[LineBuild | None], Any]
    asked: bool = False
    answer: LineBuild | None = None

    def __call__(self) -> Any:
        if not self.asked:
            self.asked = True
            self.answer = self.worker.build(self.got, self.exchange_id)
        answer, self.answer = self.answer, None
        return self.finish(answer)


def build_together(builds: Sequence[object]) -> None:
    """Ask each build worker for the answers of the :class:`WorkerBuild` items among
    ``builds`` (a journal group's, before the first is made) in one go; the others are
    left alone."""
    asked: dict[int, tuple[BuildWorker, list[WorkerBuild]]] = {}
    for build in builds:
        if isinstance(build, WorkerBuild) and not build.asked:
            asked.setdefault(id(build.worker), (build.worker, []))[1].append(build)
    for worker, group in asked.values():
        answers = worker.build_all([(build.got, build.exchange_id) for build in group])
        for build, answer in zip(group, answers, strict=True):
            build.asked = True
            build.answer = answer


def _round_trips(indices: list[int], exchanges: Sequence[tuple[Received, int]]) -> list[list[int]]:
    """``indices`` split into runs holding at most :data:`ROUND_TRIP_BYTES` each."""
    trips: list[list[int]] = []
    size = 0
    for i in indices:
        got_size = exchanges[i][0].size()
        if trips and size + got_size <= ROUND_TRIP_BYTES:
            trips[-1].append(i)
            size += got_size
        else:
            trips.append([i])
            size = got_size
    return trips


def _exit_of(process: subprocess.Popen[bytes] | None) -> str | None:
    if process is None:
        return None
    code = process.poll()
    if code is None:
        return None
    return f"exited with status {code}" if code >= 0 else f"killed by signal {-code}"


_LAUNCH = (
    "import sys; sys.path = [{root!r}, *(p for p in sys.path if p)]; "
    "import recorder._build_worker as w; w.run()"
)
"""The worker's command (``python -c``): rec's own packages first on its path, where the
recorder imported them from, and the current folder off it, as for the ``rec`` command.
``python -m`` would put the current folder first, and a package of the user's there named
``recorder`` (or ``pydantic``) would be imported instead."""


def _stopped(process: subprocess.Popen[bytes] | None) -> bool:
    """Whether ``process`` is alive but stopped (SIGSTOP, a debugger): its state in
    ``/proc`` (Linux; elsewhere never said, and the waits' own bounds apply)."""
    if process is None or process.poll() is not None:
        return False
    try:
        with open(f"/proc/{process.pid}/stat", "rb") as handle:
            state = handle.read().rpartition(b")")[2].split()[:1]
    except OSError:
        return False
    return state in ([b"T"], [b"t"])


_Wait = Callable[[int], None]
"""Waits until a descriptor can be used (the recorder's side: bounded); raises OSError."""


def _send(fd: int, value: object, wait: _Wait | None = None) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        if wait is not None:
            wait(fd)
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:  # a non-blocking pipe, full after all: wait again
            continue


def _receive(fd: int, wait: _Wait | None = None) -> Any:
    (length,) = _LENGTH.unpack(_read(fd, _LENGTH.size, wait))
    return pickle.loads(_read(fd, length, wait))


def _read(fd: int, count: int, wait: _Wait | None = None) -> bytes:
    parts: list[bytes] = []
    while count:
        if wait is not None:
            wait(fd)
        part = os.read(fd, min(count, 1 << 20))
        if not part:
            raise EOFError("the other end closed the pipe")
        parts.append(part)
        count -= len(part)
    return b"".join(parts)


def main() -> None:
    """The worker: build each exchange that comes in, until the input ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answers = os.dup(1)  # the frames' own descriptor: a stray print goes to stderr
    os.dup2(2, 1)
    try:
        _send(answers, "ready")
        rules: RedactionRules = _receive(0)
    except (OSError, EOFError):
        return
    while True:
        try:
            message = _receive(0)
        except EOFError:
            return
        answer = [_built(got, exchange_id, rules) for got, exchange_id in message]
        try:
            _send(answers, answer)
        except OSError:  # the recorder is gone
            return


def _built(got: Received, exchange_id: int, rules: RedactionRules) -> object:
    """The worker's answer for one exchange: a :class:`LineBuild` as a plain tuple, or the
    traceback of what its build raised."""
    try:
        built = build_exchange(got, exchange_id, rules)
    except Exception:  # noqa: BLE001 - the recorder builds it again and reports it
        return traceback.format_exc()
    data = built.written.data if built.written is not None else None
    return tuple(LineBuild(data, built.problem, built.level, built.refused))


def run() -> None:
    """The worker process (:data:`_LAUNCH`): :func:`main`, then exit."""
    main()
    # Its input ended and every answer is written: the heap (the modules, a large
    # recording's last exchanges) need not be freed object by object before it exits.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    run()
