"""Every report starts from a masked result: no credential reaches stdout, JUnit or JSON.

A case's failure reasons quote what the agent sent (a miss diff with a tool's URL, its
``apikey=`` and ``key=`` parameters), and its actual invocations hold what tools returned.
Each report masks the whole result before it lays anything out: a value masked before
wrapping cannot be split by a line break and escape the pattern.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from replayer._scoring.views import SetResultView

__all__ = ["masked_result"]

_Result = TypeVar("_Result", bound="SetResultView")


def masked_result(result: _Result) -> _Result:
    """``result`` with every string in it masked (the result itself is left as it is)."""
    return result.masked()
