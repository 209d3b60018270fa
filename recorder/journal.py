"""The crash-safe journal: each completed exchange is appended and fsynced before it counts.

One JSON line per :class:`cassettes.Exchange`. Appends go through a single writer thread
so the event loop never blocks on disk and lines never interleave. After a crash the
journal is read back with :func:`read_journal`; a torn last line (the process died while
writing it) is skipped and reported.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from cassettes import Exchange

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "ab")  # noqa: SIM115 - closed in close()
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rec-journal")
        self.count = 0

    def append_sync(self, exchange: Exchange) -> None:
        """Append one exchange and fsync (blocking)."""
        line = exchange.model_dump_json(exclude_none=True).encode("utf-8") + b"\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            os.fsync(self._file.fileno())
            self.count += 1

    async def append(self, exchange: Exchange) -> None:
        """Append one exchange from the event loop; returns once it is on disk."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self.append_sync, exchange)

    def close(self) -> None:
        """Flush pending appends and close the file."""
        self._executor.shutdown(wait=True)
        with self._lock:
            if not self._file.closed:
                self._file.close()


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
