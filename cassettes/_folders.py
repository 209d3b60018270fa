"""The folders rec writes in: created private, their entries made durable, and locked.

Recordings hold prompts and answers, so what rec creates is private: files 0600 and
folders 0700, like other tools that keep session data. A file rec replaces keeps the
permissions it had (a ``chmod`` is an explicit choice), and ``REC_FILE_MODE`` (octal,
e.g. ``0640``) sets another mode for new files (:func:`file_mode`); their folders get the
matching search bits (``0750``, :func:`private_folder`).

A rename or an unlink survives a power cut once its folder is fsynced
(:func:`fsync_folder`): the atomic writer (``cassettes._atomic_write``) does it after each
rename, and finalising a recording after it removes the working files. :func:`locked` takes
a cross-process lock file in a folder, so that concurrent writers (pytest-xdist workers,
two recorders) queue instead of clobbering each other.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from cassettes._errors import InputError

__all__ = ["FILE_MODE_VARIABLE", "file_mode", "fsync_folder", "locked", "private_folder"]

FILE_MODE_VARIABLE = "REC_FILE_MODE"
"""Environment variable: the octal mode of the files rec creates (default ``0600``)."""


def file_mode() -> int:
    """The mode for new files: ``0600``, or ``REC_FILE_MODE``.

    Raises:
        InputError: ``REC_FILE_MODE`` is not an octal mode the owner can read and write.
    """
    value = os.environ.get(FILE_MODE_VARIABLE, "").strip()
    if not value:
        return 0o600
    try:
        mode = int(value, 8)
    except ValueError:
        mode = -1
    if not 0 <= mode <= 0o777 or mode & 0o600 != 0o600:
        raise InputError(
            f"{value!r} is not a file mode rec can use",
            path=FILE_MODE_VARIABLE,
            fix="Give an octal mode the owner can read and write, such as 0600 or 0644",
        )
    return mode


def _folder_mode(mode: int) -> int:
    """Folders get a search bit wherever files get a read bit (0640 -> 0750)."""
    return mode | ((mode & 0o444) >> 2)


def private_folder(path: str | Path) -> Path:
    """Create ``path`` and its missing parents as private folders (0700, see module doc).

    Folders that exist already keep their permissions.
    """
    folder = Path(path)
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    mode = _folder_mode(file_mode())
    for item in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another writer
            item.mkdir(mode=mode)
            os.chmod(item, mode)  # mkdir's mode is filtered by the umask
    return folder


def fsync_folder(path: str | Path) -> None:
    """Make a rename or unlink in ``path`` durable (no-op where folders cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on folders; the rename is still atomic
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(
    path: str | Path, *, timeout: float = 60.0, lock_dir: str | Path | None = None
) -> Iterator[None]:
    """Hold a cross-process lock for ``path``.

    The lock is a ``.<name>.lock`` file beside ``path``, or in ``lock_dir`` when given
    (recordings keep theirs in ``.rec/`` so the folder stays clean).
    """
    from filelock import FileLock  # imported by writers only: a read-only command never locks

    target = Path(path)
    folder = Path(lock_dir) if lock_dir is not None else target.parent
    private_folder(folder)
    lock = FileLock(str(folder / f".{target.name}.lock"), timeout=timeout, mode=file_mode())
    with lock:
        yield
