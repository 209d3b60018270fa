"""Why a case run could not produce its invocations (:class:`CaseFailure`).

Its own module, free of google-adk: the parent of ``rec replay --workers N`` receives the
workers' failures and builds its own for a worker that died without importing ADK.
"""

from __future__ import annotations

from dataclasses import dataclass

from cassettes._errors import ReplayMiss

__all__ = ["CaseFailure"]


@dataclass
class CaseFailure:
    """Why a case run could not produce its invocations."""

    eval_id: str
    reason: str
    """One readable paragraph: where (turn, model call) and what happened."""
    miss: ReplayMiss | None = None
    """The replay miss behind it, when the model request matched no recording."""
    turn: int | None = None
    """The 1-based turn (invocation) that could not finish, when known."""
    model_call: int | None = None
    """The 1-based model call of that turn that failed, when it was one."""
