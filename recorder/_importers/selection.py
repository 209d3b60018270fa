"""The sessions an import keeps: the one ``--session`` names, or the ``--latest`` N."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from cassettes._errors import InputError

__all__ = ["select_sessions"]

_Session = TypeVar("_Session")


def select_sessions(
    sessions: Sequence[_Session],
    id_of: Callable[[_Session], object],
    *,
    session_id: str | None,
    latest: int | None,
    path: str | Path,
    where: str,
    fix: str,
) -> list[_Session]:
    """The sessions ``--session`` or ``--latest`` asks for (every one without either).

    Raises:
        InputError: no session of that id ("no session 'x' in the {where}"; ``fix`` says
            where its id is read).
    """
    if session_id is not None:
        chosen = [s for s in sessions if id_of(s) == session_id]
        if not chosen:
            raise InputError(f"no session {session_id!r} in the {where}", path=path, fix=fix)
        return chosen
    if latest is not None:
        return list(sessions[-latest:])
    return list(sessions)
