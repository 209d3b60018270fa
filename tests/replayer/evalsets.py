"""Builders for EvalSets used by the scoring tests (real models, no pasted JSON)."""

from __future__ import annotations

from typing import Any

from cassettes._evalset import EvalCase, EvalSet, IntermediateData, Invocation
from cassettes._genai_types import Content, FunctionCall, Part

Call = tuple[str, dict[str, Any] | None]


def invocation(user: str = "hi", calls: list[Call] | None = None, reply: str = "") -> Invocation:
    """One turn with tool calls (name, args-or-None) and a text reply."""
    return Invocation(
        user_content=Content(role="user", parts=[Part(text=user)]),
        final_response=Content(role="model", parts=[Part(text=reply)]),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name=n, args=a) for n, a in (calls or [])]
        ),
    )


def evalset(
    cases: dict[str, list[Invocation]], *, eval_set_id: str = "set1", **extra: Any
) -> EvalSet:
    """An EvalSet with one case per key."""
    return EvalSet(
        eval_set_id=eval_set_id,
        eval_cases=[
            EvalCase(eval_id=eval_id, conversation=turns, **extra.get(eval_id, {}))
            for eval_id, turns in cases.items()
        ],
    )
