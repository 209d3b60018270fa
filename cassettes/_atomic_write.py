"""Write files so that a reader never sees half of one, and a power cut loses none.

Every file rec writes goes through :func:`write_atomic`: the bytes go to a temporary
file in the same folder, are flushed and fsynced, the temporary file is renamed over the
target (an atomic operation on POSIX and Windows), and the folder is fsynced so that the
rename itself survives a power cut. :func:`locked` takes a cross-process lock beside the
target so that concurrent writers (pytest-xdist workers, two recorders) queue instead of
clobbering each other.

Recordings hold prompts and answers, so what rec creates is private: files 0600 and
folders 0700, like other tools that keep session data. A file rec replaces keeps the
permissions it had (a ``chmod`` is an explicit choice), and ``REC_FILE_MODE`` (octal,
e.g. ``0640``) sets another mode for new files; their folders get the matching search
bits (``0750``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from cassettes._errors import InputError

__all__ = [
    "FILE_MODE_VARIABLE",
    "ensure_writable",
    "file_mode",
    "fsync_folder",
    "locked",
    "private_folder",
    "refuse_special",
    "write_atomic",
]

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


def _kind(st_mode: int) -> str:
    if stat.S_ISLNK(st_mode):
        return "a symbolic link"
    if stat.S_ISFIFO(st_mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(st_mode) or stat.S_ISBLK(st_mode):
        return "a device"
    if stat.S_ISSOCK(st_mode):
        return "a socket"
    return "a folder" if stat.S_ISDIR(st_mode) else "not a regular file"


def refuse_special(path: str | Path, *, flag: str | None = None) -> None:
    """Refuse to write over anything but a regular file: a symbolic link, a FIFO, a device
    (``/dev/full``), a socket or a folder would be replaced by a plain file (the rename
    writes over the name, not into what it names).

    Raises:
        InputError: ``path`` exists and is not a regular file; the message names it and
            the fix.
    """
    target = Path(path)
    try:
        st_mode = os.lstat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # a new path
    except OSError:
        return  # unreadable: the write itself reports it
    if stat.S_ISREG(st_mode):
        return
    given = f"Give {flag} " if flag else "Give "
    raise InputError(
        f"is {_kind(st_mode)}, not a regular file: rec writes only regular files or new paths",
        path=target,
        fix=f"{given}a regular file or a new path (rec would replace what is there with a "
        "plain file)",
    )


def write_atomic(path: str | Path, data: bytes | str, *, mode: int | None = None) -> Path:
    """Write ``data`` to ``path`` atomically and durably (temporary file + rename + fsync).

    Creates the parent folder if needed. Returns the path written. The file gets ``mode``
    when given (a file meant to be shared, such as the HTML report), else the mode the
    target has, else :func:`file_mode` (see the module docstring).

    Raises:
        OSError: the file could not be written (the target is left as it was).
        InputError: the target is not a regular file (:func:`refuse_special`).
    """
    target = Path(path)
    refuse_special(target)
    private_folder(target.parent)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            mode = file_mode()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    fsync_folder(target.parent)
    return target


def ensure_writable(path: str | Path, *, flag: str, folder: bool = False) -> Path:
    """Check, before any work is done, that rec can write ``path`` (a file, or with
    ``folder`` a folder to write files into): its folder is created if missing and a
    temporary file is written there and removed.

    Raises:
        InputError: the place cannot be written (read-only, not a folder, a folder where
            a file must go); the message names it, the reason and ``flag``.
    """
    target = Path(path)
    where = target if folder else target.parent
    if not folder:
        refuse_special(target, flag=flag)
    try:
        if not folder and target.is_dir():
            raise IsADirectoryError(21, "is a folder, not a file")
        private_folder(where)
        if not where.is_dir():
            raise NotADirectoryError(20, "not a folder")
        fd, probe = tempfile.mkstemp(prefix=".rec-probe-", dir=where)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(
            f"cannot write here ({exc.strerror or exc})",
            path=target,
            fix=f"Give {flag} a {'folder' if folder else 'file'} in a place you can write to",
        ) from None
    return target


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
