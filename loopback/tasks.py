"""The one place rec creates asyncio tasks: named, and referenced until they finish.

An unreferenced task can be garbage-collected mid-flight; a named one shows up readably
in debug output. ruff bans raw ``asyncio.create_task`` elsewhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["spawn"]

T = TypeVar("T")

_running: set[asyncio.Task[Any]] = set()


def spawn(coro: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
    """Start ``coro`` as a named task and keep a reference until it is done."""
    task = asyncio.create_task(coro, name=name)  # noqa: TID251 - the one sanctioned call
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task
