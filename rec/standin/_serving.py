"""Serving in a daemon thread: an asyncio loop of its own that the caller's thread starts and stops.

Both stand-ins (:class:`~rec.standin.server.StandinGemini` over HTTP,
:class:`~rec.standin.live.StandinLive` over WebSocket) run their listener this way.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

ServerT = TypeVar("ServerT")


def start_loop_thread(
    open_server: Callable[[], Coroutine[Any, Any, ServerT]], name: str
) -> tuple[asyncio.AbstractEventLoop, ServerT, threading.Thread]:
    """Open a server on a new event loop in a daemon thread; return once it listens.

    Raises:
        BaseException: whatever ``open_server`` raised (``OSError`` when the port is in use).
    """
    ready = threading.Event()
    opened: list[tuple[asyncio.AbstractEventLoop, ServerT]] = []
    failure: list[BaseException] = []

    def run() -> None:
        loop = asyncio.new_event_loop()
        try:
            opened.append((loop, loop.run_until_complete(open_server())))
        except BaseException as exc:  # noqa: BLE001 - raised in the starting thread
            failure.append(exc)
            ready.set()
            loop.close()
            return
        ready.set()
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    ready.wait()
    if failure:
        raise failure[0]
    loop, server = opened[0]
    return loop, server, thread


def stop_loop_thread(
    loop: asyncio.AbstractEventLoop,
    thread: threading.Thread | None,
    shutdown: Coroutine[Any, Any, None],
    timeout: float,
) -> None:
    """Run ``shutdown`` on ``loop``, stop the loop and join its thread (each within ``timeout``)."""
    asyncio.run_coroutine_threadsafe(shutdown, loop).result(timeout=timeout)
    loop.call_soon_threadsafe(loop.stop)
    if thread is not None:
        thread.join(timeout=timeout)


def serve_until_interrupted(url: str) -> None:
    """Print ``url`` and block until Ctrl-C (the stand-ins' shell commands)."""
    print(url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
