"""Every report starts from a masked result: no credential reaches stdout, JUnit or JSON.

A case's failure reasons quote what the agent sent (a miss diff with a tool's URL, its
``apikey=`` and ``key=`` parameters), and its actual invocations hold what tools returned.
Each report masks the whole result with :func:`cassettes._secret_shapes.mask_json`, the one
masking walk, before it lays anything out: a value masked before wrapping cannot be split by a
line break and escape the pattern.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

from cassettes._secret_shapes import mask_json
from replayer._scoring.plain_result import PlainEvalSetResult

if TYPE_CHECKING:
    from cassettes._eval_result import EvalSetResult

__all__ = ["masked_result"]


@overload
def masked_result(result: EvalSetResult) -> EvalSetResult: ...


@overload
def masked_result(result: PlainEvalSetResult) -> PlainEvalSetResult: ...


@overload
def masked_result(
    result: EvalSetResult | PlainEvalSetResult,
) -> EvalSetResult | PlainEvalSetResult: ...


def masked_result(
    result: EvalSetResult | PlainEvalSetResult,
) -> EvalSetResult | PlainEvalSetResult:
    """``result`` with every string in it masked (the result itself is left as it is).

    A plain result (``rec score``'s console report) masks itself, string by string as the
    walk below does."""
    if isinstance(result, PlainEvalSetResult):
        return result.masked()
    from cassettes._eval_result import EvalSetResult

    dumped = result.model_dump(mode="python", by_alias=False)
    masked = mask_json(dumped)
    return result if masked == dumped else EvalSetResult.model_validate(masked)
