"""How a recording's cassette file is named: ``NAME.cassette.json``.

``rec start --name NAME`` writes ``NAME.cassette.json`` (beside ``NAME.evalset.json``),
replay finds the cassette beside an eval set by that name, and every message names a
recording by ``NAME``. The suffix is written here once.
"""

from __future__ import annotations

from pathlib import Path

from cassettes._errors import InputError

__all__ = ["CASSETTE_SUFFIX", "cassette_file", "check_recording_name", "recording_name"]

CASSETTE_SUFFIX = ".cassette.json"
"""What follows a recording's name in its cassette's file name."""


def cassette_file(folder: str | Path, name: str) -> Path:
    """The cassette of the recording ``name`` in ``folder``: ``folder/NAME.cassette.json``."""
    return Path(folder) / f"{name}{CASSETTE_SUFFIX}"


def recording_name(path: str | Path) -> str:
    """The recording name of a cassette file (``NAME`` of ``NAME.cassette.json``; the stem of
    a file named otherwise)."""
    file = Path(path)
    if file.name.endswith(CASSETTE_SUFFIX):
        return file.name[: -len(CASSETTE_SUFFIX)]
    return file.stem


_FORBIDDEN = frozenset('/\\:*?"<>|')


def check_recording_name(name: str, *, flag: str = "--name") -> str:
    """``name`` if it can name a recording's files, which stay inside their folder.

    The one check for every command that names its output (`rec start`, `rec import`):
    no path separator, no leading dot (``..``, hidden files), no character a file system
    refuses, no control character.

    Raises:
        InputError: the name would leave the folder or is not a file name.
    """
    if (
        not name
        or name.startswith(".")
        or any(ch in _FORBIDDEN or ord(ch) < 32 or ord(ch) == 127 for ch in name)
    ):
        raise InputError(
            f"recording name {name!r} cannot be used as a file name",
            path=flag,
            fix="Use letters, digits, '-' and '_'",
        )
    return name
