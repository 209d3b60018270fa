"""Where rec's asyncio work runs: named tasks (:func:`spawn`), and async lifecycles driven
from sync code on a loop of their own (:func:`running_in_thread`).

An unreferenced task can be garbage-collected mid-flight; a named one shows up readably
in debug output. ruff bans raw ``asyncio.create_task`` elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

__all__ = ["running_in_thread", "spawn"]

T = TypeVar("T")

_running: set[asyncio.Task[Any]] = set()


def spawn(coro: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
    """Start ``coro`` as a named task and keep a reference until it is done."""
    task = asyncio.create_task(coro, name=name)  # noqa: TID251 - the one sanctioned call
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task


@contextlib.contextmanager
def running_in_thread(
    context: AbstractAsyncContextManager[T],
    *,
    name: str = "rec-loop",
    join_timeout: float | None = None,
) -> Iterator[T]:
    """Enter an async context manager on its own event loop in a daemon thread, for the
    duration of a ``with`` block (sync callers: tests, scripts, the pytest plugin).

    An exception raised while entering or leaving it is raised here, in the caller. Leaving
    waits for the context to finish (``join_timeout`` seconds at most, when given).
    """
    ready = threading.Event()
    entered: list[T] = []
    failure: list[BaseException] = []
    raised: list[BaseException] = []
    stop: list[Callable[[], None]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stopped = asyncio.Event()
        try:
            value = await context.__aenter__()
        except BaseException as exc:
            failure.append(exc)
            ready.set()
            return
        entered.append(value)

        def request_stop() -> None:
            loop.call_soon_threadsafe(stopped.set)

        stop.append(request_stop)
        ready.set()
        await stopped.wait()
        error = raised[0] if raised else None
        try:
            await context.__aexit__(type(error) if error else None, error, None)
        except BaseException as exc:
            failure.append(exc)

    def run() -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(main())
        finally:
            loop.close()

    # The thread runs in a copy of the caller's context: a recording's credential scope
    # (``cassettes._secret_shapes.credential_scope``) is its proxy's too.
    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,), name=name)
    thread.daemon = True
    thread.start()
    ready.wait()
    if not entered:
        thread.join()
        raise failure[0]
    try:
        yield entered[0]
    except BaseException as exc:
        raised.append(exc)  # the context learns the block failed; the error goes on
        raise
    finally:
        stop[0]()
        thread.join(timeout=join_timeout)
    if failure:
        raise failure[0]
