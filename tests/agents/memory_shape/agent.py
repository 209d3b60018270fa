"""``memory_agent``, shaped as adk-python's ``contributing/samples/memory`` agent: a
``before_agent_callback`` stores ``datetime.now().isoformat()`` (naive local time, to the
microsecond) in state as ``_time``, and the instruction names it as ``{_time}``."""

from __future__ import annotations

from datetime import datetime

from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext


def update_current_time(callback_context: CallbackContext) -> None:
    """Store the current local time in state, as the sample does."""
    callback_context.state["_time"] = datetime.now().isoformat()


root_agent = Agent(
    model="gemini-2.0-flash",
    name="memory_agent",
    description="agent that has access to memory tools.",
    before_agent_callback=update_current_time,
    instruction=("You are an agent that helps users answer questions.\nCurrent time: {_time}\n"),
)
