"""Auto mode's rule for one case: its recording answers until the run leaves it.

``rec replay --mode auto`` runs each case on the path its recording took. A model request
the recording holds (matched as in replay) is answered from it; the first one it does not
hold is where the run left the recorded path. That request and every later request of the
case are sent to the model and recorded, even one that happens to match an exchange of the
recording: what was recorded after that point belongs to the old run's path.

Tools follow the same rule (:class:`replayer._mock_tools.ToolResponseBook`): on the
recorded path a mock tool answers a call recorded with the same name and arguments; a call
recorded with none of them, and every call once the case has left the path, runs the real
tool, and its result goes into the recording with the model request that carries it.

``record`` mode runs every case off its recording from the start
(``RecordedPath(anew=True)``): the model and the tools are all live. One
:class:`RecordedPath` per case run; auto mode runs its cases one at a time, so the model
source follows one case at a time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["Departure", "RecordedPath"]


@dataclass(frozen=True)
class Departure:
    """Where a case's run left its recording."""

    turn: int
    """The turn (1-based user turn of the case) the request was sent in."""
    request: int
    """The request's place among the case's model requests (1-based)."""
    call: str
    """The request, as ``METHOD /path`` (no query)."""
    differs: str
    """What differs from the nearest recorded request (its first difference), or why
    nothing recorded is near."""

    def describe(self) -> str:
        """One line for the reports."""
        return (
            f"left the recording at turn {self.turn}, model request {self.request} "
            f"({self.call}): {self.differs}; from there the model was called and recorded"
        )


class RecordedPath:
    """One case run's position on its recording (thread-safe: the model source answers on
    its own thread while the runner moves the turn)."""

    def __init__(self, *, anew: bool = False) -> None:
        self._lock = threading.Lock()
        self._turn = 0
        self._requests = 0
        self._anew = anew
        self.departure: Departure | None = None
        """Where the run left the recording (None while it is on it)."""

    @property
    def left(self) -> bool:
        """Whether the run is off its recording: past a departure, or recording anew
        (``record`` mode: every request and every tool call is live)."""
        return self._anew or self.departure is not None

    def start_turn(self, index: int) -> None:
        """The case's turn ``index`` (0-based) begins."""
        with self._lock:
            self._turn = index

    def served(self) -> None:
        """A model request was answered from the recording."""
        with self._lock:
            self._requests += 1

    def leave(self, call: str, differs: str) -> Departure:
        """A model request the recording does not hold: the run leaves the recorded path
        (the first departure is kept; later requests are past it)."""
        with self._lock:
            self._requests += 1
            if self.departure is None:
                self.departure = Departure(self._turn + 1, self._requests, call, differs)
            return self.departure

    def sent(self) -> None:
        """A model request past the departure was sent to the model."""
        with self._lock:
            self._requests += 1
