"""The process's wall clock, answered per context: one time-machine patch for everyone.

time-machine moves the wall clock at the C level (``time.time``, ``time.time_ns``,
``datetime.now``, ``utcnow``, ``date.today``, ``time.localtime``, ...): every patched
function asks the traveller on top of ``time_machine.traveller_stack`` for the time. While
:func:`clock_patched` is entered anywhere in the process, that traveller is a dispatcher
that answers each asking :mod:`contextvars` context (an asyncio task, what it starts with
``asyncio.to_thread``) from

1. the read hook (:func:`set_read_hook`), when one is set: recorded reads of the clock
   (``recorder._traffic._reads``) see the time the rest would answer and return what the agent's
   code reads;
2. its case clock (:data:`CASE_CLOCK`): replay's frozen clock of one case;
3. an outer time-machine travel's time, or the real time.

The monotonic clocks (``time.monotonic``, ``time.perf_counter``) are never patched
(asyncio's loop and every timeout need them).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from recorder._traffic._shared_patch import SharedPatch

if TYPE_CHECKING:
    import time_machine

__all__ = ["CASE_CLOCK", "clock_patched", "set_read_hook"]


CASE_CLOCK: contextvars.ContextVar[time_machine.Traveller | None] = contextvars.ContextVar(
    "rec_case_clock", default=None
)
"""The clock of the case the current context runs (None: the real clock)."""

_READ_HOOK: list[Callable[[Callable[[], int]], int]] = []
"""Process-wide, at most one: given the time otherwise answered (a function giving
nanoseconds), the time to answer (see :func:`set_read_hook`)."""


def set_read_hook(hook: Callable[[Callable[[], int]], int] | None) -> None:
    """Ask ``hook`` first for every patched read of the clock (None: no hook)."""
    _READ_HOOK[:] = [] if hook is None else [hook]


_DISPATCH = SharedPatch()
"""Process-wide: what time-machine's patched functions read (see :func:`_dispatcher`)."""


def _install_dispatcher() -> Callable[[], None]:
    """Start a time-machine travel and put the dispatcher in its place; returns the undo."""
    import time_machine

    travel = time_machine.travel(0, tick=True)
    travel.start()  # RuntimeError under freezegun
    stack = time_machine.traveller_stack
    below = stack[-2] if len(stack) > 1 else None
    stack[-1] = dispatcher = _dispatcher(below)

    def undo() -> None:
        stack = time_machine.traveller_stack
        if stack and stack[-1] is dispatcher:
            travel.stop()
        else:  # another travel started on top and is still on: leave it be
            stack.remove(dispatcher)

    return undo


def _dispatcher(below: time_machine.Traveller | None) -> time_machine.Traveller:
    """A traveller answering the asking context (see the module's docstring)."""
    import time_machine

    real = time_machine.escape_hatch.time.time_ns

    def otherwise() -> int:
        clock = CASE_CLOCK.get()
        if clock is not None:
            return clock.time_ns()
        return below.time_ns() if below is not None else real()

    class Dispatcher(time_machine.Traveller):
        def time_ns(self) -> int:
            hook = _READ_HOOK
            return hook[0](otherwise) if hook else otherwise()

    return Dispatcher(0, None, tick=True)


def clock_patched() -> AbstractContextManager[None]:
    """Keep the clock functions patched while the block runs (any number of blocks, in any
    threads, may be in at once).

    Raises:
        RuntimeError: freezegun has frozen the clock (time-machine cannot start then).
    """
    return _DISPATCH.active(_install_dispatcher)
