"""An ADK 2 workflow graph: ``root_agent`` is a ``Workflow`` running two LLM agents in turn
(a tool-calling ``scout``, then a ``reporter`` that writes the answer)."""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.workflow import Workflow

MODEL = "gemini-2.0-flash"


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather for a city.

    Args:
        city: The city name.
    """
    return {"city": city, "sky": "sunny" if len(city) % 2 else "cloudy"}


scout = LlmAgent(
    name="scout",
    model=MODEL,
    description="Checks the weather.",
    instruction="Check the weather in the city the user names with get_weather.",
    tools=[get_weather],
)

reporter = LlmAgent(
    name="reporter",
    model=MODEL,
    description="Reports.",
    instruction="Write a one-line weather report from what the scout found.",
)

root_agent = Workflow(name="graph", edges=[("START", scout, reporter)])
