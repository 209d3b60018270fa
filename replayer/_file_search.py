"""Expand command-line paths (files and folders) into the files a command works on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from cassettes._errors import InputError
from cassettes._file_names import CASSETTE_SUFFIX, cassette_beside, evalset_stem

__all__ = ["expand_paths", "find_cassettes"]


def expand_paths(
    paths: Sequence[str | Path],
    *,
    inside: Callable[[Path], list[Path]],
    empty: str,
    fix: str,
) -> list[Path]:
    """Files as given, folders replaced by ``inside(folder)``.

    Raises:
        InputError: a path does not exist, or a folder yields no file (``empty``, ``fix``).
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = inside(path)
            if not files:
                raise InputError(empty, path=path, fix=fix)
            found.extend(files)
        elif path.exists():  # a FIFO or a device too: its reader refuses it by name
            found.append(path)
        else:
            raise InputError("no such file or folder", path=path, fix="Check the path")
    return found


def find_cassettes(paths: Sequence[str | Path]) -> list[Path]:
    """Expand files and folders into cassette files (``*.cassette.json`` in a folder).

    Raises:
        InputError: a path does not exist, a folder holds no cassette, or a file is an
            eval set.
    """
    found = expand_paths(
        paths,
        inside=lambda folder: sorted(folder.glob(f"*{CASSETTE_SUFFIX}")),
        empty=f"no *{CASSETTE_SUFFIX} in this folder",
        fix="Record one with `rec start --out DIR`, or name the cassette file",
    )
    for path in found:
        if evalset_stem(path) is not None:
            raise InputError(
                "this is an eval set (what a replay is scored against), not a cassette",
                path=path,
                fix=f"Pass the recording beside it, {cassette_beside(path).name}, or the "
                "folder that holds both",
            )
    return found
