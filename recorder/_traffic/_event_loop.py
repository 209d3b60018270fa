"""The event loop rec's own server processes run on (``rec start``, ``rec serve``).

Those processes do nothing but move HTTP bytes on one loop, so the loop's own cost per
request (selector, transports, callbacks) is a large share of what a request costs through
rec. uvloop (libuv, in C) runs the same asyncio code with a fraction of that: it is used
where it is installed (a dependency on every platform it supports, not on Windows), and
the standard loop where it is not. rec's code is plain asyncio either way.

Loops rec starts inside another program (``rec.record()``, ``rec replay``'s proxy thread)
stay the standard loop: they share a process with the user's code.

The loop shares the interpreter with the journal's writer thread, which builds, redacts
and scans each exchange (:mod:`recorder._journal`). A thread waiting for the interpreter
gets it when the running one blocks, or after the switch interval; at Python's default of
5 ms the loop, and every connection on it, can stand still that long while the writer
builds a group of exchanges. :func:`run_server` runs the loop with
:data:`SWITCH_INTERVAL` and puts the process's interval back afterwards.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["SWITCH_INTERVAL", "loop_kind", "run_server"]

T = TypeVar("T")

SWITCH_INTERVAL = 0.001
"""Seconds a thread may keep the interpreter while another waits for it, in rec's server
processes (Python's default is 0.005)."""


def run_server(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, on uvloop's loop where uvloop is installed, with the
    interpreter's switch interval at :data:`SWITCH_INTERVAL` while it runs."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        try:
            uvloop = importlib.import_module("uvloop")
        except ImportError:
            return asyncio.run(main)
        result: T = uvloop.run(main)
        return result
    finally:
        sys.setswitchinterval(previous)


def loop_kind(loop: asyncio.AbstractEventLoop) -> str:
    """``"uvloop"`` or ``"asyncio"``: which implementation ``loop`` is (``rec status``)."""
    return type(loop).__module__.split(".")[0]
