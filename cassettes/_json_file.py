"""Read the JSON files rec is given, with errors that name the file, the place and the fix.

Shared by every loader (cassettes, EvalSets, eval configs): a missing or unreadable file
and broken JSON syntax read the same whichever kind of file it was.
"""

from __future__ import annotations

import errno
import io
import json
import os
import stat
from pathlib import Path
from typing import Any

from cassettes._errors import InputError

__all__ = ["MAX_FILE_BYTES", "open_file", "parse_json", "read_file", "refuse_deep_nesting"]


MAX_FILE_BYTES = 4 * 1024**3
"""The largest file rec reads (4 GiB): a bigger one is refused rather than read into memory."""


def open_file(
    path: str | Path, *, what: str, missing_fix: str = "Check the path"
) -> io.BufferedReader:
    """``path`` open for reading: a regular file of at most :data:`MAX_FILE_BYTES`.

    It opens without blocking and refuses what is not a regular file, so a FIFO never hangs
    rec and a device (``/dev/zero``, or a symlink to it) is never read without end.

    Raises:
        InputError: the file is missing (``<what> not found``), not a regular file, too
            large or unreadable.
    """
    file = Path(path)
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError(f"{what} not found", path=file, fix=missing_fix) from None
    except IsADirectoryError:
        raise InputError(
            f"{what} is a folder, not a file", path=file, fix="Name the file"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a device with nothing behind it)
            raise InputError(
                f"{what} is not a regular file (a FIFO, device or socket)",
                path=file,
                fix="Name a file on disk",
            ) from None
        raise InputError(
            f"cannot read {what} ({exc.strerror})", path=file, fix="Check its permissions"
        ) from None
    handle = os.fdopen(fd, "rb")
    try:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{what} is a folder, not a file", path=file, fix="Name the file")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(
                f"{what} is not a regular file (a FIFO, device or socket)",
                path=file,
                fix="Name a file on disk",
            )
        if info.st_size > MAX_FILE_BYTES:
            raise InputError(
                f"{what} is {info.st_size:,} bytes, more than rec reads ({MAX_FILE_BYTES:,})",
                path=file,
                fix="Split it, or name the right file",
            )
    except BaseException:
        handle.close()
        raise
    return handle


def read_file(path: str | Path, *, what: str, missing_fix: str = "Check the path") -> bytes:
    """The bytes of ``path``: a regular file (:func:`open_file`), read whole and bounded.

    The one reader of rec's input files.

    Raises:
        InputError: the file is missing (``<what> not found``), not a regular file, too
            large or unreadable.
    """
    file = Path(path)
    with open_file(file, what=what, missing_fix=missing_fix) as handle:
        try:
            data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise InputError(
                f"cannot read {what} ({exc.strerror})", path=file, fix="Check the disk"
            ) from None
    if len(data) > MAX_FILE_BYTES:
        raise InputError(
            f"{what} grew beyond what rec reads ({MAX_FILE_BYTES:,} bytes)",
            path=file,
            fix="Name a file that is not being written",
        )
    return data


def parse_json(data: bytes | str, *, path: str | Path, fix: str = "Fix the JSON syntax") -> Any:
    """Parse JSON text.

    Raises:
        InputError: not valid JSON; names the line and column.
    """
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON ({exc.msg})",
            path=path,
            where=f"line {exc.lineno} column {exc.colno}",
            fix=fix,
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte {exc.start} cannot be decoded)",
            path=path,
            fix="Save the file as UTF-8 JSON, or restore it from version control",
        ) from None
    except RecursionError:
        raise InputError(
            "JSON nested too deeply to read (more levels than any real file has)",
            path=path,
            fix="Restore the file from version control or regenerate it",
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise InputError(
            f"a value in the JSON cannot be read ({str(exc).split(';')[0]})",
            path=path,
            fix="Restore the file from version control or regenerate it",
        ) from None


def refuse_deep_nesting(data: bytes | str, path: str | Path) -> None:
    """Refuse an eval set nested deeper than ADK's own reader goes (pydantic's JSON parser
    stops at 200 levels): ADK cannot load it, and copying its session state would exhaust
    Python's recursion limit mid-run.

    Raises:
        InputError: nested too deeply; names the line and column.
    """
    import pydantic_core

    try:
        pydantic_core.from_json(data)
    except ValueError as exc:
        if "recursion limit" not in str(exc):
            return  # json.loads read it; what pydantic's parser minds is not nesting
        raise InputError(
            "nested more deeply than ADK reads an eval set (200 levels)",
            path=path,
            where=str(exc).partition(" at ")[2] or None,
            fix="Flatten the value (session state, tool arguments) or restore the file",
        ) from None
