"""The crash-safe journal: each completed exchange is appended and fsynced before it counts.

One JSON line per :class:`cassettes.Exchange` (or, for a Live journal, per
:class:`cassettes._live.LiveJournalLine`: the class is generic over the line's model).
Appends go through a single writer thread so the event loop never blocks on disk and lines
never interleave. An append may hand the writer a function that builds the exchange
(:meth:`Journal.append_built`): the recorder's per-exchange CPU work (parsing, redaction,
the secret scan) then runs on that thread too, one hop off the event loop instead of two.
The writer commits in groups: every exchange that completed while the previous fsync was
running is written with one ``write`` and made durable with one ``fsync``, and each append
returns only once its own line is on disk. So at one client each exchange costs one fsync,
and at fifty clients the disk is not asked for fifty.

A large response body is written in pieces while it passes (:class:`BodyChunk` lines,
appended with :meth:`Journal.submit_line`), and its exchange then as a
:class:`ChunkedExchange` line that counts them; :func:`read_journal` puts the body back
together. Pieces whose exchange line never came (the process died mid-body, or the
exchange was built whole after all) are ignored.

After a crash the journal is read back with :func:`read_journal`; a torn last line (the
process died while writing it) is skipped and reported.

A write that fails (a full disk, a file-size limit) is cut back to the last complete
line and the group is retried one line at a time, so the lines that fit are kept and
only the others raise ``OSError`` naming the journal; the lines before it, and the ones
after it once there is room again, stay readable. The file is private (0600).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from cassettes._atomic_write import private_folder
from cassettes._bodies import stored_body
from cassettes._cassette import Exchange

__all__ = [
    "BodyChunk",
    "ChunkedExchange",
    "Journal",
    "JournalContents",
    "exchange_lines",
    "read_journal",
]

log = logging.getLogger(__name__)

Line = TypeVar("Line", bound=BaseModel)
"""What one line of a journal holds (an :class:`Exchange` for the model traffic)."""


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

    def journal_line(self) -> bytes:
        """The head line and the bytes, as the journal holds them."""
        head = b'{"body_chunk":%d,"length":%d}\n' % (self.body_chunk, len(self.data))
        return head + self.data + b"\n"


class _ChunkHead(BaseModel):
    model_config = ConfigDict(extra="forbid")

    body_chunk: int
    length: int = Field(ge=0)


class ChunkedExchange(BaseModel):
    """An exchange whose response body is the :class:`BodyChunk` lines before it."""

    model_config = ConfigDict(extra="forbid")

    body_chunks: int
    """How many pieces the body has (fewer on disk: the exchange is incomplete)."""
    exchange: Exchange
    """The exchange, redacted and scanned, without its response body."""


_CHUNK_LINE = b'{"body_chunk":'
_CHUNKED_LINE = b'{"body_chunks":'


class Journal(Generic[Line]):
    """Append-only, fsynced exchange log.

    Example::

        journal = Journal[Exchange](path)
        await journal.append(exchange)   # durable when this returns
        journal.close()
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        private_folder(self.path.parent)
        self._fd: int | None = os.open(
            self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600
        )
        self._size = os.fstat(self._fd).st_size
        self._lock = threading.Lock()
        """Held while writing: one group at a time."""
        self._queue: list[tuple[Line | Callable[[], Line | None], Future[Line | None]]] = []
        self._queue_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rec-journal")
        self._failure: OSError | None = None
        self.count = 0
        """Exchanges on disk."""
        self.commits = 0
        """fsyncs so far: fewer than :attr:`count` when appends arrived together."""

    def append_sync(self, exchange: Line) -> None:
        """Append one exchange and fsync (blocking).

        Raises:
            OSError: the line could not be written (the journal is left as it was).
        """
        done: Future[Line | None] = Future()
        with self._queue_lock:
            self._queue.append((exchange, done))
        self._commit()
        done.result()

    async def append(self, exchange: Line) -> None:
        """Append one exchange from the event loop; returns once it is on disk."""
        await self._submit(exchange)

    async def append_built(self, build: Callable[[], Line | None]) -> Line | None:
        """Build an exchange on the writer thread and append it, from the event loop.

        ``build`` runs on the writer thread just before its group is written; it returns
        the exchange to write, or None for one that must not be (nothing is written).

        Returns:
            The exchange, once it is on disk (None when ``build`` returned None).

        Raises:
            OSError: the line could not be written. Whatever ``build`` raised.
        """
        return await self._submit(build)

    async def _submit(self, item: Line | Callable[[], Line | None]) -> Line | None:
        return await self.submit_in_order(item)

    def submit_in_order(
        self, item: Line | Callable[[], Line | None]
    ) -> asyncio.Future[Line | None]:
        """Queue a line now (lines keep the order of these calls) and return the future of
        its write, from the event loop; for a caller that must not wait on the disk
        between lines (a Live session's frames)."""
        done: Future[Line | None] = Future()
        with self._queue_lock:
            self._queue.append((item, done))
            self._executor.submit(self._commit)
        return asyncio.wrap_future(done)

    def submit_line(
        self, build: Callable[[], BaseModel | None]
    ) -> asyncio.Future[BaseModel | None]:
        """Queue a line of another kind than ``Line`` (a :class:`BodyChunk`, a
        :class:`ChunkedExchange`), built on the writer thread, in order with the others;
        from the event loop."""
        return cast("asyncio.Future[BaseModel | None]", self.submit_in_order(cast("Any", build)))

    def _commit(self) -> None:
        """Write every queued exchange with one write and one fsync (the group commit)."""
        with self._lock:
            with self._queue_lock:
                group, self._queue = self._queue, []
            if not group:
                return  # an earlier commit took this append's line with its group
            lines: list[bytes] = []
            serialised: list[tuple[Line, Future[Line | None]]] = []
            for item, done in group:
                try:
                    built = item if isinstance(item, BaseModel) else item()
                    if built is None:
                        done.set_result(None)
                        continue
                    if isinstance(built, BodyChunk):
                        line = built.journal_line()
                    else:
                        line = built.model_dump_json(exclude_none=True).encode("utf-8") + b"\n"
                except Exception as exc:  # noqa: BLE001 - reported to that append alone
                    done.set_exception(exc)
                    continue
                lines.append(line)
                serialised.append((built, done))
            if not serialised:
                return
            # A body's pieces need no fsync of their own: the fsync of their exchange's line
            # makes them durable with it, and pieces without that line are ignored.
            sync = not all(isinstance(built, BodyChunk) for built, _ in serialised)
            try:
                self._write(b"".join(lines), sync=sync)
            except OSError:
                if len(serialised) == 1:
                    serialised[0][1].set_exception(self._error())
                    return
                # One line at a time: what fits is kept, the rest fails on its own.
                for line, (exchange, done) in zip(lines, serialised, strict=True):
                    try:
                        self._write(line)
                    except OSError:
                        done.set_exception(self._error())
                    else:
                        self.count += 1
                        done.set_result(exchange)
                return
            self.count += len(serialised)
            for exchange, done in serialised:
                done.set_result(exchange)

    def _write(self, data: bytes, *, sync: bool = True) -> None:
        """Append ``data`` and fsync (unless not ``sync``); on failure cut the file back and
        re-raise. Under the lock."""
        if self._fd is None:
            self._failure = OSError(errno.EBADF, "the journal is closed")
            raise self._failure
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
            if sync:
                os.fsync(self._fd)
                self.commits += 1
        except OSError as exc:
            with contextlib.suppress(OSError):  # drop the partial lines
                os.ftruncate(self._fd, self._size)
            self._failure = exc
            raise
        self._size += len(data)

    def _error(self) -> OSError:
        exc = self._failure
        return OSError(
            exc.errno if exc else errno.EIO, exc.strerror if exc else "write failed", str(self.path)
        )

    def close(self) -> None:
        """Flush pending appends and close the file."""
        self._executor.shutdown(wait=True)
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


@dataclass(frozen=True)
class JournalContents:
    """What a journal holds: the complete exchanges and how many lines were torn."""

    exchanges: list[Exchange]
    torn_lines: int


def read_journal(path: str | Path) -> JournalContents:
    """Read every complete exchange from a journal (missing file: empty).

    A line that does not parse (torn by a crash mid-write) is skipped and counted, and so
    is a chunked exchange whose pieces are not all there.
    """
    file = Path(path)
    if not file.exists():
        return JournalContents([], 0)
    exchanges: list[Exchange] = []
    pieces: dict[int, list[bytes]] = {}
    chunked: list[tuple[int, ChunkedExchange]] = []
    torn = 0
    with open(file, "rb") as handle:
        number = 0
        while line := handle.readline():
            number += 1
            if not line.strip():
                continue
            try:
                if line.startswith(_CHUNK_LINE):
                    head = _ChunkHead.model_validate_json(line)
                    data = handle.read(head.length + 1)
                    if len(data) != head.length + 1 or not data.endswith(b"\n"):
                        raise ValueError("a torn piece")
                    pieces.setdefault(head.body_chunk, []).append(data[:-1])
                elif line.startswith(_CHUNKED_LINE):
                    chunked.append((number, ChunkedExchange.model_validate_json(line)))
                else:
                    exchanges.append(Exchange.model_validate_json(line))
            except ValueError:  # ValidationError is one
                torn += 1
                log.warning("%s:%d: skipped an incomplete journal line", file, number)
    for number, record in chunked:
        exchange = _reassembled(record, pieces.get(record.exchange.id, []))
        if exchange is None:
            torn += 1
            log.warning("%s:%d: skipped an exchange whose body is incomplete", file, number)
        else:
            exchanges.append(exchange)
    exchanges.sort(key=lambda e: e.id)
    return JournalContents(exchanges, torn)


def _reassembled(record: ChunkedExchange, pieces: list[bytes]) -> Exchange | None:
    """The exchange of ``record`` with its body put back together (None: pieces missing)."""
    if len(pieces) != record.body_chunks:
        return None
    data = b"".join(pieces)
    response = record.exchange.response
    body = stored_body(
        data, content_type=response.headers.get("content-type"), content_encoding=None
    )
    return record.exchange.model_copy(
        update={"response": response.model_copy(update={"body": body})}
    )


def exchange_lines(path: str | Path) -> int:
    """How many exchange lines a journal holds (a body's pieces are skipped unread)."""
    count = 0
    try:
        with open(path, "rb") as handle:
            while line := handle.readline():
                if line.startswith(_CHUNK_LINE):
                    with contextlib.suppress(ValueError):
                        handle.seek(_ChunkHead.model_validate_json(line).length + 1, os.SEEK_CUR)
                elif line.strip():
                    count += 1
    except FileNotFoundError:
        return 0
    return count
