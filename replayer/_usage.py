"""A case's recorded figures: tokens, calls, latency and cost per turn and in all.

The runner hands over the model exchanges each turn of a case was answered with (in the
order it was answered) and the actual invocations (their tool calls); the figures come
from the recording (:mod:`cassettes._usage`), the cost from a price table
(:mod:`replayer._prices`).
"""

from __future__ import annotations

from collections.abc import Sequence

from cassettes._cassette import Exchange
from cassettes._eval_result import CaseUsage, Figures, TurnUsage
from cassettes._evalset import Invocation, invocation_tool_calls
from cassettes._usage import TOKEN_KINDS, call_figures, is_model_call
from replayer._prices import PriceTable

__all__ = ["case_usage", "summed"]


def _turn(index: int, exchanges: Sequence[Exchange], tools: int, prices: PriceTable) -> TurnUsage:
    calls = [call_figures(e) for e in exchanges if is_model_call(e)]
    tokens = {kind: sum(c.tokens[kind] for c in calls) for kind in TOKEN_KINDS}
    costs = [prices.cost(c.model, c.tokens) for c in calls]
    unpriced = sorted(
        {
            c.model or "(no model named)"
            for c, cost in zip(calls, costs, strict=True)
            if cost is None
        }
    )
    return TurnUsage(
        turn=index + 1,
        prompt_tokens=tokens["prompt"],
        candidates_tokens=tokens["candidates"],
        thoughts_tokens=tokens["thoughts"],
        cached_tokens=tokens["cached"],
        model_calls=len(calls),
        tool_calls=tools,
        first_chunk_seconds=calls[0].first_chunk_seconds if calls else None,
        latency_seconds=max(c.end for c in calls) - min(c.start for c in calls) if calls else 0.0,
        cost_usd=None if unpriced else sum(c for c in costs if c is not None),
        unpriced=unpriced,
        no_usage=sum(not c.has_usage for c in calls),
    )


def summed(parts: Sequence[Figures]) -> dict[str, object]:
    """The fields of several turns' (or cases') figures added up: the first chunk is the
    first part's, the cost unknown when any part's is."""
    unpriced = sorted({m for p in parts for m in p.unpriced})
    return {
        "prompt_tokens": sum(p.prompt_tokens for p in parts),
        "candidates_tokens": sum(p.candidates_tokens for p in parts),
        "thoughts_tokens": sum(p.thoughts_tokens for p in parts),
        "cached_tokens": sum(p.cached_tokens for p in parts),
        "model_calls": sum(p.model_calls for p in parts),
        "tool_calls": sum(p.tool_calls for p in parts),
        "first_chunk_seconds": next(
            (p.first_chunk_seconds for p in parts if p.first_chunk_seconds is not None), None
        ),
        "latency_seconds": sum(p.latency_seconds for p in parts),
        "cost_usd": None if unpriced else sum(p.cost_usd or 0.0 for p in parts),
        "unpriced": unpriced,
        "no_usage": sum(p.no_usage for p in parts),
    }


def case_usage(
    turns: Sequence[Sequence[Exchange]],
    invocations: Sequence[Invocation],
    prices: PriceTable,
) -> CaseUsage:
    """The figures of one run of a case.

    Args:
        turns: per turn, the model exchanges it was answered with.
        invocations: the run's actual invocations (their tool calls are counted).
        prices: the price table the cost is read from.
    """
    count = max(len(turns), len(invocations))
    rows = [
        _turn(
            i,
            turns[i] if i < len(turns) else (),
            len(invocation_tool_calls(invocations[i])) if i < len(invocations) else 0,
            prices,
        )
        for i in range(count)
    ]
    return CaseUsage.model_validate({**summed(rows), "turns": rows})
