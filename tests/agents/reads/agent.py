"""``reads_agent``: every model request depends on what the agent's own code read.

- its instruction (a callable) holds ``datetime.now().isoformat()``, to the microsecond, and
  the session's start time that a ``before_agent_callback`` put into state;
- a ``before_model_callback`` draws ``random.random()`` into state, which the next
  request's instruction shows;
- its tool ``open_ticket`` answers with ``str(uuid.uuid4())``, which the next request
  carries as the tool's response.

A replay matches only when each of these reads what the recording read.
"""

from __future__ import annotations

import datetime
import random
import uuid
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_request import LlmRequest

MODEL = "gemini-2.0-flash"


def instruction(context: ReadonlyContext) -> str:
    """The instruction: the time now, the session's start and the last draw."""
    return (
        f"You are reads_agent. It is {datetime.datetime.now().isoformat()} now; the "
        f"conversation began at {context.state.get('_began', 'an unknown time')}. "
        f"Lucky draw: {context.state.get('draw', 'none')}."
    )


def note_start(callback_context: CallbackContext) -> None:
    """Put the (aware, UTC) start time into state, once per session."""
    if "_began" not in callback_context.state:
        callback_context.state["_began"] = datetime.datetime.now(datetime.timezone.utc).isoformat()


def draw(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
    """Draw a random number into state before each model call."""
    callback_context.state["draw"] = random.random()


def open_ticket(subject: str) -> dict[str, Any]:
    """Open a support ticket.

    Args:
        subject: What the ticket is about, e.g. "printer".
    """
    return {
        "ticket": str(uuid.uuid4()),
        "subject": subject,
        "at": datetime.date.today().isoformat(),
    }


root_agent = LlmAgent(
    name="reads_agent",
    model=MODEL,
    instruction=instruction,
    before_agent_callback=note_start,
    before_model_callback=draw,
    tools=[open_ticket],
)
