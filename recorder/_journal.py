"""The crash-safe journal: each completed exchange is written right behind its response.

One JSON line per :class:`cassettes.Exchange` (or, for a Live journal, per
:class:`cassettes._live.LiveJournalLine`: the class is generic over the line's model).
Appends go through a single writer thread so the event loop never blocks on disk and lines
never interleave. An append may hand the writer a function that builds the exchange
(:meth:`Journal.append_built`): the recorder's per-exchange CPU work (parsing, redaction,
the secret scan) then runs on that thread, one hop off the event loop. Every exchange that
completed while the writer was busy is written with one ``write``.

What survives what:

- **rec killed** (SIGKILL, a crash of rec): an append returns once its line is written to
  the file (the kernel holds it). The recorder appends an exchange right behind its
  response without holding the connection for it (``recorder._forwarding``), so what is
  lost is what was in flight: responses not yet ended, and the lines of ended ones still
  being built or written (a bounded few; lines keep the order their responses ended in).
- **the machine dies** (power loss, a kernel crash): lines become durable by ``fsync``, on
  a thread of their own that the appends never wait for. One fsync covers every line
  written since the last (group commit), and runs as soon as :data:`SYNC_BYTES` are
  pending, else at most :data:`SYNC_INTERVAL` after the previous one ended. So such a
  crash loses at most the lines written in the last ``SYNC_INTERVAL`` plus one fsync.
- **rec stop**: the recorder waits for every answered exchange's append, then
  :meth:`Journal.close` fsyncs what remains before it returns, so what a client received
  in full is on disk before the recording is finalised.

A large response body is written in pieces while it passes (:class:`BodyChunk` lines,
appended with :meth:`Journal.submit_line`), and its exchange then as a
:class:`ChunkedExchange` line that counts them. Reading a journal back (after a crash too:
a torn last line is skipped and reported) is the capture files' reader's
(``recorder._capture_files.read_journal``), which puts such a body back together.

The recorder's journal opens with a header line (``recorder._journal_header``) naming the
secret scan every exchange in it passed, so that finalisation need not scan them again.

A write that fails (a full disk, a file-size limit) is cut back to the last complete
line and the group is retried one line at a time, so the lines that fit are kept and
only the others raise ``OSError`` naming the journal; the lines before it, and the ones
after it once there is room again, stay readable. An fsync that fails is logged once and
retried with the next. The file is private (0600).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeAlias, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from cassettes._folders import private_folder
from recorder._journal_header import JournalHeader

__all__ = ["BodyChunk", "Journal", "Written"]

log = logging.getLogger(__name__)

Line = TypeVar("Line", bound=BaseModel)
"""What one line of a journal holds (an :class:`Exchange` for the model traffic)."""
_L = TypeVar("_L", bound=BaseModel)
_Line_co = TypeVar("_Line_co", bound=BaseModel, covariant=True)

SYNC_INTERVAL = 0.005
"""Seconds from the end of one fsync to the next, while lines are pending: how long a
written line may wait to become durable (plus the fsync itself)."""
SYNC_BYTES = 1 << 20
"""Pending bytes that start an fsync at once, without waiting out :data:`SYNC_INTERVAL`."""


class BodyChunk(BaseModel):
    """A piece of a large response body, written while the client receives it.

    On disk a JSON head line, ``{"body_chunk": ID, "length": N}``, then the piece's N
    bytes and a newline: the bytes are not encoded, so a 50 MB body costs no more to
    write than its size.
    """

    model_config = ConfigDict(extra="forbid")

    body_chunk: int
    """The id of the exchange whose body this is."""
    data: bytes = Field(exclude=True)
    """The piece's bytes, its ``content-encoding`` undone (the screen cleared them: see
    :mod:`recorder._body_screen`)."""

    def journal_line(self) -> tuple[bytes, ...]:
        """The head line and the bytes, as the journal holds them (apart: written with no
        copy of the piece)."""
        head = b'{"body_chunk":%d,"length":%d}\n' % (self.body_chunk, len(self.data))
        return (head, self.data, b"\n")


@dataclass(frozen=True)
class Written(Generic[_Line_co]):
    """A line built together with its JSON text, which the journal writes as is (the
    builder wrote it once, for its own checks: it is not written again)."""

    line: _Line_co
    data: bytes
    """``line.model_dump_json(exclude_none=True)``, UTF-8, and a newline."""


class Journal(Generic[Line]):
    """Append-only exchange log; each line is written before its append returns and
    fsynced in groups shortly after (see the module's promise).

    Example::

        journal = Journal[Exchange](path)
        await journal.append(exchange)   # in the file when this returns
        journal.close()                  # durable when this returns
    """

    def __init__(
        self,
        path: str | Path,
        *,
        header: JournalHeader | None = None,
        prepare: Callable[[Sequence[object]], None] | None = None,
    ) -> None:
        """Open (or create) the journal at ``path``.

        ``header`` is written as the first line of a new (empty) file; a file that holds
        lines already is appended to as it is. ``prepare``, on the writer thread, is given
        each group's builds before the first is made, for builds that cost less made
        together (the recorder's :func:`recorder._build_worker.build_together`); each
        build still makes its own line, in order, whatever ``prepare`` did or raised.
        """
        self.path = Path(path)
        self._prepare = prepare
        fd, self._size = _opened(self.path, header)
        self._fd: int | None = fd
        self._lock = threading.Lock()
        """Held while writing: one group at a time."""
        self._queue: list[tuple[Line | Callable[[], Built[Line]], _Done[Line]]] = []
        self._queue_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rec-journal")
        self._failure: OSError | None = None
        self._sync_lock = threading.Lock()
        """Held while an fsync runs."""
        self._pending = threading.Condition()
        """Guards :attr:`_unsynced` and :attr:`_closing`; notified by each write."""
        self._unsynced = 0
        """Bytes written since the last fsync began."""
        self._closing = False
        self._sync_failed = False
        self.count = 0
        """Exchanges in the file (they survive rec being killed)."""
        self.synced = 0
        """Of :attr:`count`, the exchanges an fsync has made durable."""
        self.commits = 0
        """fsyncs so far: fewer than :attr:`count` when lines were written close together."""
        self._syncer = threading.Thread(
            target=self._sync_loop, name="rec-journal-sync", daemon=True
        )
        self._syncer.start()

    def append_sync(self, exchange: Line) -> None:
        """Append one exchange (blocking); it is in the file when this returns.

        Raises:
            OSError: the line could not be written (the journal is left as it was).
        """
        done: Future[Line | None] = Future()
        self._enqueue(exchange, done)
        self._commit()
        done.result()

    async def append(self, exchange: Line) -> None:
        """Append one exchange from the event loop; returns once it is in the file."""
        await self._submit(exchange)

    async def append_built(self, build: Callable[[], Built[Line]]) -> Line | None:
        """Build an exchange on the writer thread and append it, from the event loop.

        ``build`` runs on the writer thread just before its group is written; it returns
        the exchange to write (or a :class:`Written` of it and its text), or None for one
        that must not be (nothing is written).

        Returns:
            The exchange, once it is in the file (None when ``build`` returned None).

        Raises:
            OSError: the line could not be written. Whatever ``build`` raised.
        """
        return await self._submit(build)

    async def _submit(self, item: Line | Callable[[], Built[Line]]) -> Line | None:
        return await self.submit_in_order(item)

    def submit_in_order(
        self, item: Line | Callable[[], Built[Line]]
    ) -> asyncio.Future[Line | None]:
        """Queue a line now (lines keep the order of these calls) and return the future of
        its write, from the event loop; for a caller that must not wait on the disk
        between lines (a Live session's frames)."""
        done: asyncio.Future[Line | None] = asyncio.get_running_loop().create_future()
        self._enqueue(item, done)
        return done

    def _enqueue(self, item: Line | Callable[[], Built[Line]], done: _Done[Line]) -> None:
        with self._queue_lock:
            self._queue.append((item, done))
            if len(self._queue) == 1:  # else a commit is queued already and takes it too
                self._executor.submit(self._commit)

    def submit_all(
        self, items: Sequence[tuple[Callable[[], Built[BaseModel]], asyncio.Future[Any]]]
    ) -> None:
        """Queue lines of any kind (builds, as :meth:`submit_line` takes them) whose
        futures the caller made, in order and together: one group when the writer is idle;
        from the event loop."""
        with self._queue_lock:
            idle = not self._queue  # else a commit is queued already and takes them too
            self._queue.extend(cast("list[Any]", items))
            if idle and items:
                self._executor.submit(self._commit)

    def submit_line(
        self, build: Callable[[], Built[BaseModel]]
    ) -> asyncio.Future[BaseModel | None]:
        """Queue a line of another kind than ``Line`` (a :class:`BodyChunk`, a
        :class:`ChunkedExchange`), built on the writer thread, in order with the others;
        from the event loop."""
        return cast("asyncio.Future[BaseModel | None]", self.submit_in_order(cast("Any", build)))

    def _commit(self) -> None:
        """Write every queued exchange with one write (the fsync follows on its own thread),
        then settle their appends: one wake-up of each waiting event loop per group."""
        with self._lock:
            with self._queue_lock:
                group, self._queue = self._queue, []
            outcomes: list[tuple[_Done[Line], Line | None, BaseException | None]] = []
            try:
                self._write_group(group, outcomes)
            finally:
                _settle(outcomes)

    def _write_group(
        self,
        group: list[tuple[Line | Callable[[], Built[Line]], _Done[Line]]],
        outcomes: list[tuple[_Done[Line], Line | None, BaseException | None]],
    ) -> None:
        if self._prepare is not None:
            try:
                self._prepare([item for item, _ in group if not isinstance(item, BaseModel)])
            except Exception:  # each build makes its line on its own, as without it
                log.debug("preparing %d journal lines failed", len(group), exc_info=True)
        lines: list[tuple[bytes, ...]] = []
        serialised: list[tuple[Line, _Done[Line]]] = []
        for item, done in group:
            try:
                made = _line_of(item)
            except Exception as exc:  # noqa: BLE001 - reported to that append alone
                outcomes.append((done, None, exc))
                continue
            if made is None:
                outcomes.append((done, None, None))
                continue
            lines.append(made[1])
            serialised.append((made[0], done))
        if serialised:
            self._write_lines(lines, serialised, outcomes)

    def _write_lines(
        self,
        lines: list[tuple[bytes, ...]],
        serialised: list[tuple[Line, _Done[Line]]],
        outcomes: list[tuple[_Done[Line], Line | None, BaseException | None]],
    ) -> None:
        """Write a group's lines with one write; when that fails, one line at a time, so
        what fits is kept and the rest fails on its own."""
        try:
            self._write([part for line in lines for part in line], _exchange_count(serialised))
        except OSError:
            if len(serialised) == 1:
                outcomes.append((serialised[0][1], None, self._error()))
                return
            for line, (exchange, done) in zip(lines, serialised, strict=True):
                try:
                    self._write(line, _exchange_count([(exchange, done)]))
                except OSError:
                    outcomes.append((done, None, self._error()))
                else:
                    outcomes.append((done, exchange, None))
            return
        outcomes.extend((done, exchange, None) for exchange, done in serialised)

    def _write(self, parts: Sequence[bytes], exchanges: int) -> None:
        """Append ``parts`` and hand them to the syncer; on failure cut the file back and
        re-raise. Under the lock."""
        if self._fd is None:
            self._failure = OSError(errno.EBADF, "the journal is closed")
            raise self._failure
        data = _buffers(parts)
        try:
            for buffer in data:
                _write_all(self._fd, buffer)
        except OSError as exc:
            with contextlib.suppress(OSError):  # drop the partial lines
                os.ftruncate(self._fd, self._size)
            self._failure = exc
            raise
        written = sum(map(len, data))
        self._size += written
        with self._pending:
            self.count += exchanges
            self._unsynced += written
            self._pending.notify()

    def _sync_loop(self) -> None:
        """The syncer thread: one fsync for every line written since the last."""
        ended = time.monotonic() - SYNC_INTERVAL
        while True:
            with self._pending:
                while not self._unsynced and not self._closing:
                    self._pending.wait()
                if not self._unsynced:
                    return  # closing, and everything is durable
                while self._unsynced < SYNC_BYTES and not self._closing:
                    remaining = ended + SYNC_INTERVAL - time.monotonic()
                    if remaining <= 0:
                        break
                    self._pending.wait(remaining)
            with self._sync_lock:
                with self._pending:
                    self._unsynced = 0
                    covered, closing = self.count, self._closing
                if not self._sync(covered) and closing:
                    return  # logged; finalisation writes the recording with fsyncs of its own
            ended = time.monotonic()

    def _sync(self, covered: int) -> bool:
        """fsync the file (under the sync lock); ``covered`` lines were written before it
        began. False: it failed."""
        if self._fd is None:
            return True
        try:
            os.fsync(self._fd)
        except OSError as exc:
            if not self._sync_failed:
                self._sync_failed = True
                log.error("could not fsync %s (%s); retrying with the next", self.path, exc)
            with self._pending:
                self._unsynced += 1  # not durable yet: the next round tries again
            return False
        self.commits += 1
        self.synced = covered
        return True

    def _error(self) -> OSError:
        exc = self._failure
        return OSError(
            exc.errno if exc else errno.EIO, exc.strerror if exc else "write failed", str(self.path)
        )

    def close(self) -> None:
        """Write pending appends, fsync them, and close the file."""
        self._executor.shutdown(wait=True)
        with self._pending:
            self._closing = True
            self._pending.notify()
        self._syncer.join()
        with self._lock, self._sync_lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _opened(path: Path, header: JournalHeader | None) -> tuple[int, int]:
    """The journal file opened for appending (private, created with ``header`` as its
    first line when new), and its size."""
    private_folder(path.parent)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)
    size = os.fstat(fd).st_size
    if header is not None and not size:
        line = header.model_dump_json().encode("utf-8") + b"\n"
        try:
            _write_all(fd, line)
        except OSError:
            os.close(fd)
            raise
        size += len(line)
    return fd, size


_JOIN_BELOW = 1 << 16
"""Lines shorter than this are joined into one write; a longer part (a body's piece) is
written on its own rather than copied."""


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may take part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _buffers(parts: Sequence[bytes]) -> list[bytes]:
    """``parts`` as few writes: the short ones joined, each long one as it is."""
    out: list[bytes] = []
    short: list[bytes] = []
    for part in parts:
        if len(part) < _JOIN_BELOW:
            short.append(part)
            continue
        if short:
            out.append(b"".join(short))
            short = []
        out.append(part)
    if short:
        out.append(b"".join(short))
    return out


def _line_of(item: Any) -> tuple[Any, tuple[bytes, ...]] | None:
    """A queued line (or its build, made here) and its bytes as written; None: no line."""
    built = item if isinstance(item, BaseModel) else item()
    if built is None:
        return None
    if isinstance(built, Written):
        return built.line, (built.data,)
    if isinstance(built, BodyChunk):
        return built, built.journal_line()
    return built, (built.model_dump_json(exclude_none=True).encode("utf-8") + b"\n",)


def _exchange_count(serialised: Sequence[tuple[BaseModel, Any]]) -> int:
    """How many of the written lines are exchanges (a body's pieces are not)."""
    return sum(not isinstance(built, BodyChunk) for built, _ in serialised)


Built: TypeAlias = _L | Written[_L] | None
"""What a line's builder returns: the line, or it and its text, or None (no line)."""
_Done = Future[_L | None] | asyncio.Future[_L | None]
"""Where an append learns its outcome: a thread's future, or an event loop's."""


def _settle(outcomes: list[tuple[_Done[Line], Line | None, BaseException | None]]) -> None:
    """Give each append its outcome; the appends of one event loop in one call to it."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[Any, Any, BaseException | None]]] = {}
    for done, result, exc in outcomes:
        if isinstance(done, Future):
            if exc is not None:
                done.set_exception(exc)
            else:
                done.set_result(result)
        else:
            by_loop.setdefault(done.get_loop(), []).append((done, result, exc))
    for loop, settled in by_loop.items():
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
            loop.call_soon_threadsafe(_settle_on_loop, settled)


def _settle_on_loop(settled: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    for done, result, exc in settled:
        if done.cancelled():  # its request went away; the line is written all the same
            continue
        if exc is not None:
            done.set_exception(exc)
        else:
            done.set_result(result)
