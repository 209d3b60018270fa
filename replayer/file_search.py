"""Expand command-line paths (files and folders) into the files a command works on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from cassettes import InputError

__all__ = ["expand_paths"]


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
        elif path.is_file():
            found.append(path)
        else:
            raise InputError("no such file or folder", path=path, fix="Check the path")
    return found
