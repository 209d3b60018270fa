"""Write files so that a reader never sees half of one, and a power cut loses none.

Every file rec writes goes through :func:`write_atomic`: the bytes go to a temporary
file in the same folder, are flushed and fsynced, the temporary file is renamed over the
target (an atomic operation on POSIX and Windows), and the folder is fsynced so that the
rename itself survives a power cut. The folder is created private, and the file gets the
mode of what rec creates (``cassettes._folders``); concurrent writers queue on
``cassettes._folders.locked``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from cassettes._errors import InputError
from cassettes._folders import file_mode, fsync_folder, private_folder

__all__ = ["ensure_writable", "refuse_special", "write_atomic"]


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
    target has, else ``cassettes._folders.file_mode``.

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
