"""Every report starts from a masked result: no credential reaches stdout, JUnit or JSON.

A case's failure reasons quote what the agent sent (a miss diff with a tool's URL, its
``apikey=`` and ``key=`` parameters), and its actual invocations hold what tools returned.
Each report masks the whole result with :func:`cassettes._secret_shapes.mask`, the one masking
function, before it lays anything out: a value masked before wrapping cannot be split by a line
break and escape the pattern.
"""

from __future__ import annotations

from typing import Any

from cassettes._eval_result import EvalSetResult
from cassettes._secret_shapes import mask

__all__ = ["masked_result"]


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, list):
        return [_masked(item) for item in value]
    if isinstance(value, dict):
        return {mask(key) if isinstance(key, str) else key: _masked(v) for key, v in value.items()}
    return value


def masked_result(result: EvalSetResult) -> EvalSetResult:
    """``result`` with every string in it masked (the result itself is left as it is)."""
    dumped = result.model_dump(mode="python", by_alias=False)
    masked = _masked(dumped)
    return result if masked == dumped else EvalSetResult.model_validate(masked)
