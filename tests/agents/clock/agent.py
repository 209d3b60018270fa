"""``clock_agent``: an instruction callable that puts ``datetime.now()`` into every request.

Its model requests depend on the clock, to the minute: a replay matches only when the
replayed process reads the recording's time.
"""

from __future__ import annotations

import datetime
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext

MODEL = "gemini-2.0-flash"


def instruction(context: ReadonlyContext) -> str:
    """The instruction, with the current local time to the minute."""
    now = datetime.datetime.now()
    return f"You are clock_agent. It is {now:%A %Y-%m-%d %H:%M} now. Answer briefly."


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather forecast for a city.

    Args:
        city: The city name, e.g. "Paris".
    """
    return {"city": city, "sky": "sunny"}


root_agent = LlmAgent(name="clock_agent", model=MODEL, instruction=instruction, tools=[get_weather])
