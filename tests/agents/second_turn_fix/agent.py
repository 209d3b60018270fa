"""``travel_agent`` as in ``guarded_travel``, fixed in a way only its later turns see.

A ``before_model_callback`` adds a line to the system instruction once the conversation
holds more than one user turn: the first turn's requests are byte for byte the ones
``guarded_travel`` sends, every request from the second turn on differs.
"""

from __future__ import annotations

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse

from tests.agents.guarded_travel.agent import guard, travel_agent

FIX = "Give temperatures in Celsius."


def fix_later_turns(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> LlmResponse | None:
    """From the second user turn on, tell the model the fix; then the guardrail."""
    user_turns = [
        c for c in llm_request.contents if c.role == "user" and any(p.text for p in c.parts or [])
    ]
    if len(user_turns) > 1:
        llm_request.append_instructions([FIX])
    return guard(callback_context, llm_request)


root_agent = travel_agent(before_model_callback=fix_later_turns)
