"""Where rec's asyncio work runs: named tasks (:func:`spawn`), and async lifecycles driven
from sync code on a loop of their own (:func:`running_in_thread`).

An unreferenced task can be garbage-collected mid-flight; a named one shows up readably
in debug output. ruff bans raw ``asyncio.create_task`` elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

T = TypeVar("T")

_running: set[asyncio.Task[Any]] = set()


def spawn(coro: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
    """Start ``coro`` as a named task and keep a reference until it is done."""
    task = asyncio.create_task(coro, name=name)  # noqa: TID251 - the one sanctioned call
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task


class _InThread:
    """An async context manager entered and left on its own loop, in a thread of its own
    (:func:`running_in_thread`)."""

    def __init__(self, context: AbstractAsyncContextManager[Any]) -> None:
        self.context = context
        self.ready = threading.Event()
        self.entered: list[Any] = []
        self.failure: list[BaseException] = []
        self.raised: BaseException | None = None
        """What the caller's block raised (the context learns the block failed)."""
        self._stop: Callable[[], object] | None = None

    async def main(self) -> None:
        loop = asyncio.get_running_loop()
        stopped = asyncio.Event()
        try:
            value = await self.context.__aenter__()
        except BaseException as exc:
            self.failure.append(exc)
            self.ready.set()
            return
        self.entered.append(value)
        self._stop = functools.partial(loop.call_soon_threadsafe, stopped.set)
        self.ready.set()
        await stopped.wait()
        error = self.raised
        try:
            await self.context.__aexit__(type(error) if error else None, error, None)
        except BaseException as exc:
            self.failure.append(exc)

    def run(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self.main())
        finally:
            loop.close()

    def stop(self) -> None:
        assert self._stop is not None
        self._stop()


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
    inside = _InThread(context)
    # The thread runs in a copy of the caller's context: a recording's credential scope
    # (``cassettes._secret_shapes.credential_scope``) is its proxy's too.
    thread = threading.Thread(target=contextvars.copy_context().run, args=(inside.run,), name=name)
    thread.daemon = True
    thread.start()
    inside.ready.wait()
    if not inside.entered:
        thread.join()
        raise inside.failure[0]
    try:
        yield inside.entered[0]
    except BaseException as exc:
        inside.raised = exc  # the context learns the block failed; the error goes on
        raise
    finally:
        inside.stop()
        thread.join(timeout=join_timeout)
    if inside.failure:
        raise inside.failure[0]
