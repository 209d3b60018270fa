"""The event loop rec's own server processes run on (``rec start``, ``rec serve``).

Those processes do nothing but move HTTP bytes on one loop, so the loop's own cost per
request (selector, transports, callbacks) is a large share of what a request costs through
rec. uvloop (libuv, in C) runs the same asyncio code with a fraction of that: it is used
where it is installed (a dependency on every platform it supports, not on Windows), and
the standard loop where it is not. rec's code is plain asyncio either way.

Loops rec starts inside another program (``rec.record()``, ``rec replay``'s proxy thread)
stay the standard loop: they share a process with the user's code.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["loop_kind", "run_server"]

T = TypeVar("T")


def run_server(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, on uvloop's loop where uvloop is installed."""
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        return asyncio.run(main)
    result: T = uvloop.run(main)
    return result


def loop_kind(loop: asyncio.AbstractEventLoop) -> str:
    """``"uvloop"`` or ``"asyncio"``: which implementation ``loop`` is (``rec status``)."""
    return type(loop).__module__.split(".")[0]
