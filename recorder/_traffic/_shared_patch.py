"""A process-wide patch that is in place while at least one block needs it.

Concurrent blocks (cases run side by side, recordings in threads) share one patch: the first
block to enter applies it, the last to leave undoes it, and the blocks between only count.
The wall clock's dispatcher, the recorded reads' patches and replay's time zone are each one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class SharedPatch:
    """One process-wide patch, counted by the blocks that use it.

    Example::

        _PATCH = SharedPatch()

        with _PATCH.active(apply):  # apply() patches and returns the undo
            ...
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self._undo: Callable[[], None] | None = None

    @contextmanager
    def active(
        self, apply: Callable[[], Callable[[], None]], *, joining: Callable[[], None] | None = None
    ) -> Iterator[None]:
        """Run the block with the patch in place: ``apply()`` (which returns the undo) when
        no other block has it, else ``joining()`` (under the lock, to check the patch in
        place suits this block). An ``apply`` that raises leaves nothing counted."""
        with self.lock:
            if self.users == 0:
                self._undo = apply()
            elif joining is not None:
                joining()
            self.users += 1
        try:
            yield
        finally:
            with self.lock:
                self.users -= 1
                if self.users == 0 and self._undo is not None:
                    undo, self._undo = self._undo, None
                    undo()
