"""ADK's eval enumerations: a verdict in result files (``EvalStatus``) and how expected
tool calls are compared with actual ones in eval configs (``MatchType``).

Their own module, without pydantic, so that scoring and the console report read them
without the file models (:mod:`cassettes._eval_result` and :mod:`cassettes._eval_config`
re-export them).
"""

from __future__ import annotations

import enum

__all__ = ["EvalStatus", "MatchType"]


class EvalStatus(enum.IntEnum):
    """ADK's ``EvalStatus``: a metric's or a case's verdict, as integers in result files."""

    PASSED = 1
    FAILED = 2
    NOT_EVALUATED = 3
    INFORMATIONAL = 4


class MatchType(enum.Enum):
    """How expected tool calls are compared with actual ones (the eval config's
    ``match_type``)."""

    EXACT = 0
    """Same calls, same order, nothing extra (ADK)."""
    IN_ORDER = 1
    """Expected calls appear in order; extra calls allowed (ADK)."""
    ANY_ORDER = 2
    """Each expected call matches one actual call; extra calls allowed (ADK)."""
    SUBSET = 10
    """Each actual call matches one expected call: no unexpected calls (rec)."""
    SUPERSET = 11
    """Each expected call matches one actual call, in any order (rec)."""
