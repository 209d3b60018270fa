"""Callbacks that answer without a model call: a ``before_model_callback`` guardrail and a
``before_agent_callback`` that answers account questions itself."""

from __future__ import annotations

from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LlmRequest, LlmResponse
from google.genai import types

from tests.agents.shapes.toolbox import get_weather, llm_agent

REFUSAL = "I cannot share passwords."
CLOSED = "The help desk is closed today."


def _text(content: types.Content | None) -> str:
    return " ".join(p.text or "" for p in (content.parts or [])) if content else ""


def block_passwords(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> LlmResponse | None:
    """Answer requests about passwords without calling the model."""
    last = llm_request.contents[-1] if llm_request.contents else None
    if "password" in _text(last).lower():
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=REFUSAL)]))
    return None


def account_desk(callback_context: CallbackContext) -> types.Content | None:
    """Account questions get a fixed answer before the agent (or its model) runs."""
    if "account" in _text(callback_context.user_content).lower():
        return types.Content(role="model", parts=[types.Part(text=CLOSED)])
    return None


root_agent = llm_agent(
    name="guarded",
    description="A weather assistant that never shares passwords.",
    instruction="Answer weather questions with get_weather.",
    tools=[get_weather],
    before_agent_callback=account_desk,
    before_model_callback=block_passwords,
)
