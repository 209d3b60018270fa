"""The crash-safe journal: each completed exchange is appended and fsynced before it counts.

One JSON line per :class:`cassettes.Exchange`. Appends go through a single writer thread
so the event loop never blocks on disk and lines never interleave. After a crash the
journal is read back with :func:`read_journal`; a torn last line (the process died while
writing it) is skipped and reported.

A write that fails (a full disk, a file-size limit) is cut back to the last complete
line and raises ``OSError`` naming the journal, so the lines before it, and the ones
after it once there is room again, stay readable. The file is private (0600).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from cassettes import Exchange, private_folder

__all__ = ["Journal", "JournalContents", "read_journal"]

log = logging.getLogger(__name__)


class Journal:
    """Append-only, fsynced exchange log.

    Example::

        journal = Journal(path)
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
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rec-journal")
        self.count = 0

    def append_sync(self, exchange: Exchange) -> None:
        """Append one exchange and fsync (blocking).

        Raises:
            OSError: the line could not be written (the journal is left as it was).
        """
        line = exchange.model_dump_json(exclude_none=True).encode("utf-8") + b"\n"
        with self._lock:
            if self._fd is None:
                raise OSError(errno.EBADF, "the journal is closed", str(self.path))
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(self._fd, view) :]
                os.fsync(self._fd)
            except OSError as exc:
                with contextlib.suppress(OSError):  # drop the partial line
                    os.ftruncate(self._fd, self._size)
                raise OSError(exc.errno, exc.strerror, str(self.path)) from None
            self._size += len(line)
            self.count += 1

    async def append(self, exchange: Exchange) -> None:
        """Append one exchange from the event loop; returns once it is on disk."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self.append_sync, exchange)

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

    A line that does not parse (torn by a crash mid-write) is skipped and counted.
    """
    file = Path(path)
    if not file.exists():
        return JournalContents([], 0)
    exchanges: list[Exchange] = []
    torn = 0
    with open(file, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                exchanges.append(Exchange.model_validate_json(line))
            except ValidationError:
                torn += 1
                log.warning("%s:%d: skipped an incomplete journal line", file, number)
    exchanges.sort(key=lambda e: e.id)
    return JournalContents(exchanges, torn)
