"""ADK's ``EvalStatus``: a metric's or a case's verdict, as integers in result files.

Its own module, without pydantic, so that scoring and the console report read it without
the result models (:mod:`cassettes._eval_result` re-exports it).
"""

from __future__ import annotations

import enum

__all__ = ["EvalStatus"]


class EvalStatus(enum.IntEnum):
    """ADK's ``EvalStatus`` values."""

    PASSED = 1
    FAILED = 2
    NOT_EVALUATED = 3
    INFORMATIONAL = 4
