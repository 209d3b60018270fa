"""How expected tool calls are compared with actual ones (the eval config's ``match_type``).

Its own module, without pydantic, so that scoring a plain eval config reads it without the
config's models (:mod:`cassettes._eval_config` re-exports it).
"""

from __future__ import annotations

import enum

__all__ = ["MatchType"]


class MatchType(enum.Enum):
    """How expected tool calls are compared with actual ones."""

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
