"""How a recording's cassette file is named: ``NAME.cassette.json``.

``rec start --name NAME`` writes ``NAME.cassette.json`` (beside ``NAME.evalset.json``),
replay finds the cassette beside an eval set by that name, and every message names a
recording by ``NAME``. The suffix is written here once.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CASSETTE_SUFFIX", "cassette_file", "recording_name"]

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
