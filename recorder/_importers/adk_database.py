"""Read sessions from ADK's session database (``DatabaseSessionService``).

The database is read with ADK's own ``DatabaseSessionService`` (so every schema version ADK
knows is handled by ADK), imported lazily: rec's recorder does not need ADK otherwise.
A source is a SQLAlchemy URL (``sqlite+aiosqlite:///sessions.db``,
``postgresql+asyncpg://...``) or the path of a SQLite file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from cassettes._errors import InputError

__all__ = ["database_url", "is_database_source", "sessions_from_database"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def is_database_source(source: str) -> bool:
    """True for a SQLAlchemy URL or a SQLite file."""
    if "://" in source:
        return True
    try:  # without blocking: a FIFO is never waited on, nor anything but a file read
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        try:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
        except OSError:
            return False


def database_url(source: str) -> str:
    """The async SQLAlchemy URL ADK needs for a source (a plain SQLite path or ``sqlite://``)."""
    if source.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + source[len("sqlite:///") :]
    if "://" in source:
        return source
    return f"sqlite+aiosqlite:///{Path(source).resolve()}"


def sessions_from_database(
    source: str, *, session_id: str | None = None, latest: int | None = None
) -> list[dict[str, Any]]:
    """The sessions (ADK ``Session`` JSON, camelCase) selected from a session database.

    Args:
        source: a SQLAlchemy URL or a SQLite file path.
        session_id: one session by id (any app, any user).
        latest: the N most recently updated sessions (default 1 when no id is given).

    Raises:
        InputError: google-adk (or SQLAlchemy) is not installed, the database cannot be
            opened, or no session matches.
    """
    try:
        from google.adk.sessions.database_session_service import DatabaseSessionService
    except ImportError as exc:
        raise InputError(
            f"reading an ADK session database needs google-adk with its database extra ({exc})",
            path=source,
            fix="pip install 'google-adk[db]' (or 'sqlalchemy[asyncio]' and 'aiosqlite')",
        ) from None
    url = database_url(source)
    try:
        service = DatabaseSessionService(url)
    except (ValueError, ImportError) as exc:
        raise InputError(
            f"cannot open the session database ({exc})",
            path=source,
            fix="Pass a SQLite file or a SQLAlchemy URL such as sqlite+aiosqlite:///sessions.db",
        ) from None
    import asyncio  # here: `rec check` and the other readers of evalfiles never need it

    return asyncio.run(_read(service, source, session_id=session_id, latest=latest))


async def _read(
    service: Any, source: str, *, session_id: str | None, latest: int | None
) -> list[dict[str, Any]]:
    from sqlalchemy import text

    try:
        async with service.db_engine.connect() as connection:
            if session_id is not None:
                rows = await connection.execute(
                    text("SELECT app_name, user_id, id FROM sessions WHERE id = :id"),
                    {"id": session_id},
                )
            else:
                rows = await connection.execute(
                    text(
                        "SELECT app_name, user_id, id FROM sessions "
                        "ORDER BY update_time DESC, id DESC LIMIT :n"
                    ),
                    {"n": latest or 1},
                )
            keys = [tuple(row) for row in rows]
        sessions = []
        for app_name, user_id, sid in keys:
            session = await service.get_session(app_name=app_name, user_id=user_id, session_id=sid)
            if session is not None:
                sessions.append(session.model_dump(mode="json", by_alias=True, exclude_none=True))
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - any database failure is reported with its cause
        raise InputError(
            f"cannot read sessions from the database ({type(exc).__name__}: {exc})",
            path=source,
            fix="Check that this is an ADK session database (adk web --session_service_uri)",
        ) from None
    finally:
        await service.close()
    if not sessions:
        which = f"session {session_id!r}" if session_id else "any session"
        raise InputError(
            f"the database holds no {which}",
            path=source,
            fix="List the sessions with `adk web`, or drop --session to take the latest",
        )
    if session_id is None:
        sessions.reverse()  # oldest of the latest N first
    return sessions
