"""``weather_agent``: ``get_weather``, whose result an ``after_tool_callback`` wraps.

The session (and the model's next request) holds ``{"data": <tool result>}``: what the
recording keeps is the response *after* the callback ran.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

MODEL = "gemini-2.0-flash"


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather forecast for a city.

    Args:
        city: The city name, e.g. "Paris".
    """
    return {"city": city, "sky": "sunny"}


def wrap_result(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
) -> dict[str, Any]:
    """Wrap every tool result: ``{"data": result}``."""
    return {"data": tool_response}


root_agent = LlmAgent(
    name="weather_agent",
    model=MODEL,
    instruction="You are weather_agent. Answer weather questions with get_weather.",
    tools=[get_weather],
    after_tool_callback=wrap_result,
)
