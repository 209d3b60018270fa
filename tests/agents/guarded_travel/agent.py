"""``travel_agent`` with the weather tool and a ``before_model_callback`` guardrail.

A turn that asks for "the secret" is answered by the callback: no model call is made, yet
ADK's legacy telemetry still leaves a ``call_llm`` span holding the canned reply. The
weather in Lisbon ends its turn at the tool's result (``skip_summarization``): no later
model request carries that result, only the tool's ``execute_tool`` span.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from tests.agents.travel.agent import MODEL, get_weather

REFUSAL = "I cannot share that."


def guard(callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse | None:
    """Answer a turn that asks for the secret without calling the model."""
    last = llm_request.contents[-1] if llm_request.contents else None
    text = " ".join(p.text or "" for p in (last.parts or [])) if last else ""
    if last is not None and last.role == "user" and "secret" in text.lower():
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=REFUSAL)]))
    return None


def end_turn_in_lisbon(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
) -> None:
    """Lisbon's weather is the turn's answer: the model does not summarise it."""
    if str(args.get("city", "")).lower() == "lisbon":
        tool_context.actions.skip_summarization = True


def travel_agent(
    before_model_callback: Callable[[CallbackContext, LlmRequest], LlmResponse | None] = guard,
) -> LlmAgent:
    """``travel_agent`` with the weather tool, Lisbon's turn ending at the tool's result, and
    ``before_model_callback`` (the guardrail unless told otherwise) before each model call."""
    return LlmAgent(
        name="travel_agent",
        model=MODEL,
        instruction="You help travellers with the weather.",
        tools=[get_weather],
        before_model_callback=before_model_callback,
        after_tool_callback=end_turn_in_lisbon,
    )


root_agent = travel_agent()
