"""Who owns a recording: an exclusive lock held for the recorder's whole life.

A recorder takes ``.rec/NAME.owner.lock`` (an OS file lock, released by the kernel when
the process dies, however it dies) before it creates its journal, and keeps it until its
files are finalised. Recovery (``rec stop``, the next ``rec start`` on the folder) only
touches a recording whose lock it can take itself, so it can never finalise a journal a
live recorder is still writing, and two recoveries never run at once. ``rec status`` and
``rec stop`` tell a live recorder from a dead one by the lock too, never by a pid that
the system may have given to another process since.

Before ``rec stop`` sends a signal it also checks that the pid still belongs to the
process that wrote the state file (:func:`process_start`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from cassettes._folders import file_mode, private_folder

__all__ = ["OwnerLock", "owned_by_someone", "owning", "process_start", "same_process"]


class OwnerLock:
    """The exclusive lock on one recording (see the module docstring).

    An OS lock on an open file (``flock`` on POSIX, ``msvcrt.locking`` on Windows), not a
    lock-file convention: the kernel frees it when its process dies, so a dead recorder
    never blocks recovery and a live one is never taken for dead. Taken without waiting.

    Example::

        lock = OwnerLock(paths.owner_lock)
        if not lock.acquire():
            raise ...  # another recorder owns it
        try:
            ...
        finally:
            lock.release()
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock if nobody holds it (never waits); True when taken."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this OwnerLock")
        private_folder(self.path.parent)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags, file_mode())
        try:
            _lock(fd)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        """Give the lock back (the kernel does the same when the process dies)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor drops its lock


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


@contextlib.contextmanager
def owning(path: str | Path) -> Iterator[bool]:
    """Hold the lock for the block if nobody else does; yields whether it was taken."""
    lock = OwnerLock(path)
    taken = lock.acquire()
    try:
        yield taken
    finally:
        if taken:
            lock.release()


def owned_by_someone(path: str | Path) -> bool:
    """Whether a live process (this one included) holds the lock right now."""
    if not Path(path).exists():
        return False
    with owning(path) as taken:
        return not taken


def process_start(pid: int) -> str | None:
    """When process ``pid`` started, as the kernel counts it (None when unknown).

    A pid is reused once its process is gone; the pair (pid, start) is not.
    """
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return None
    # Field 2 (the command) may hold spaces and parentheses: count from the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def same_process(pid: int, started: str | None) -> bool:
    """Whether ``pid`` is still the process that started at ``started``.

    False when the pid is gone, or when the start time cannot be confirmed (no
    ``/proc``, or the state file did not record it): rec never signals a process it
    cannot identify.
    """
    if started is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return process_start(pid) == started
