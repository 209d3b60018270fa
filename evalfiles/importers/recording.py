"""Re-extract the EvalSet of an existing recording (after rec's extraction improves)."""

from __future__ import annotations

from pathlib import Path

from cassettes import InputError, load_cassette
from evalfiles.evalset import EvalSet
from evalfiles.extraction import evalset_from_exchanges

__all__ = ["evalset_from_recording", "find_cassette"]

_SUFFIX = ".cassette.json"


def find_cassette(source: Path, *, name: str | None) -> Path:
    """The cassette a source names: the file itself, or the one (or ``name``) in a folder.

    Raises:
        InputError: the folder holds no cassette, or several and no name picks one.
    """
    if source.is_file():
        return source
    if name is not None and (source / f"{name}{_SUFFIX}").is_file():
        return source / f"{name}{_SUFFIX}"
    found = sorted(source.glob(f"*{_SUFFIX}"))
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(
            "no recording (*.cassette.json) in this folder",
            path=source,
            fix="Pass a recording folder, a cassette file, a session JSON or a session database",
        )
    names = ", ".join(p.name.removesuffix(_SUFFIX) for p in found)
    raise InputError(
        f"several recordings in this folder ({names})",
        path=source,
        fix="Pick one with --name NAME, or pass the cassette file",
    )


def evalset_from_recording(cassette_path: Path, *, eval_set_id: str) -> tuple[EvalSet, str]:
    """The EvalSet of a cassette, and the recording's name."""
    cassette = load_cassette(cassette_path)
    evalset = evalset_from_exchanges(cassette.exchanges, eval_set_id=eval_set_id)
    if not evalset.eval_cases:
        raise InputError(
            "the recording holds no model conversation (no generateContent exchange)",
            path=cassette_path,
            fix="Record a session that calls the model",
        )
    return evalset, cassette.name
