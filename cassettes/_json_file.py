"""Read the JSON files rec is given, with errors that name the file, the place and the fix.

Shared by every loader (cassettes, EvalSets, eval configs): a missing or unreadable file
and broken JSON syntax read the same whichever kind of file it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cassettes._errors import InputError

__all__ = ["parse_json", "read_file"]


def read_file(path: str | Path, *, what: str, missing_fix: str = "Check the path") -> bytes:
    """The bytes of ``path``.

    Raises:
        InputError: the file is missing (``<what> not found``) or unreadable.
    """
    file = Path(path)
    try:
        return file.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} not found", path=file, fix=missing_fix) from None
    except IsADirectoryError:
        raise InputError(
            f"{what} is a folder, not a file", path=file, fix="Name the file"
        ) from None
    except OSError as exc:
        raise InputError(
            f"cannot read {what} ({exc.strerror})", path=file, fix="Check its permissions"
        ) from None


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
