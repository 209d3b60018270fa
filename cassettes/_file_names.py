"""How rec's files are named: ``NAME.cassette.json`` beside ``NAME.evalset.json``.

``rec start --name NAME`` writes ``NAME.cassette.json`` (beside ``NAME.evalset.json``),
replay finds the cassette beside an eval set by that name, and every message names a
recording by ``NAME``. ADK's legacy eval files end ``.test.json``. The suffixes are
written here once; everything else builds and reads names with these functions.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cassettes._errors import InputError

__all__ = [
    "CASSETTE_SUFFIX",
    "CONFIG_NAMES",
    "EVALSET_SUFFIX",
    "EVALSET_SUFFIXES",
    "LEGACY_EVALSET_SUFFIX",
    "cassette_beside",
    "cassette_file",
    "check_recording_name",
    "evalset_file",
    "evalset_stem",
    "files_to_check",
    "recording_name",
    "side_index_file",
    "source_name",
]

CONFIG_NAMES = ("test_config.json", "eval_config.json")
"""The config file names ADK looks for beside an eval file, in its order."""

CASSETTE_SUFFIX = ".cassette.json"
"""What follows a recording's name in its cassette's file name."""

EVALSET_SUFFIX = ".evalset.json"
"""What follows a recording's name in the eval set rec writes for it."""

LEGACY_EVALSET_SUFFIX = ".test.json"
"""ADK's legacy eval files (``AgentEvaluator.evaluate`` finds them in a folder)."""

EVALSET_SUFFIXES = (EVALSET_SUFFIX, LEGACY_EVALSET_SUFFIX)
"""How eval set files end: rec's ``NAME.evalset.json`` and ADK's legacy ``NAME.test.json``."""


def files_to_check(paths: Iterable[str | Path]) -> list[Path]:
    """The files ``rec check`` reads for ``paths``: each file, and the eval sets, cassettes and
    eval configs in each folder (searched recursively), in order, each once.

    Raises:
        InputError: a path does not exist.
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            suffixes = (*EVALSET_SUFFIXES, CASSETTE_SUFFIX)
            for pattern in (*(f"*{suffix}" for suffix in suffixes), *CONFIG_NAMES):
                files.extend(sorted(path.rglob(pattern)))
        elif path.exists():
            files.append(path)
        else:
            raise InputError("no such file or folder", path=path, fix="Check the path")
    return list(dict.fromkeys(files))


def cassette_file(folder: str | Path, name: str) -> Path:
    """The cassette of the recording ``name`` in ``folder``: ``folder/NAME.cassette.json``."""
    return Path(folder) / f"{name}{CASSETTE_SUFFIX}"


def side_index_file(cassette: str | Path) -> Path:
    """The side index rec keeps of a cassette file (``cassettes._side_index``):
    ``.rec/NAME.cassette.json.idx`` in the cassette's folder, with rec's other working files."""
    file = Path(cassette)
    return file.parent / ".rec" / f"{file.name}.idx"


def evalset_file(folder: str | Path, name: str) -> Path:
    """The eval set of the recording ``name`` in ``folder``: ``folder/NAME.evalset.json``."""
    return Path(folder) / f"{name}{EVALSET_SUFFIX}"


def recording_name(path: str | Path) -> str:
    """The recording name of a cassette file (``NAME`` of ``NAME.cassette.json``; the stem of
    a file named otherwise)."""
    file = Path(path)
    if file.name.endswith(CASSETTE_SUFFIX):
        return file.name[: -len(CASSETTE_SUFFIX)]
    return file.stem


def evalset_stem(path: str | Path) -> str | None:
    """``NAME`` of ``NAME.evalset.json`` / ``NAME.test.json`` (None for other files)."""
    name = Path(path).name
    for suffix in EVALSET_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return None


def source_name(path: str | Path) -> str:
    """The name a file gives what is made from it: ``NAME`` of ``NAME.evalset.json``,
    ``NAME.test.json`` or ``NAME.cassette.json``, else the file's stem (``prod.bug`` of
    ``prod.bug.json``, ``sessions`` of ``sessions.db``) — never cut at the first dot."""
    return evalset_stem(path) or recording_name(path)


def cassette_beside(evalset_path: Path) -> Path:
    """The recording ``rec start`` writes beside an eval set: ``NAME.cassette.json``."""
    name = evalset_stem(evalset_path) or evalset_path.name.removesuffix(".json")
    return cassette_file(evalset_path.parent, name)


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
