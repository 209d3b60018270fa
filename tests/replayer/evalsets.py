"""Builders for EvalSets used by the scoring tests (real models, no pasted JSON)."""

from __future__ import annotations

from typing import Any

from google.genai import types as genai_types

from evalfiles import EvalCase, EvalSet, IntermediateData, Invocation

Call = tuple[str, dict[str, Any] | None]


def invocation(user: str = "hi", calls: list[Call] | None = None, reply: str = "") -> Invocation:
    """One turn with tool calls (name, args-or-None) and a text reply."""
    return Invocation(
        user_content=genai_types.Content(role="user", parts=[genai_types.Part(text=user)]),
        final_response=genai_types.Content(role="model", parts=[genai_types.Part(text=reply)]),
        intermediate_data=IntermediateData(
            tool_uses=[genai_types.FunctionCall(name=n, args=a) for n, a in (calls or [])]
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
