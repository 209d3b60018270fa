"""A weather assistant on ``LiteLlm("anthropic/claude-3-5-haiku-20241022")``: Anthropic's wire.

LiteLLM sends Anthropic messages to ``ANTHROPIC_API_BASE`` / ``ANTHROPIC_BASE_URL`` plus
``/v1/messages`` (tests point it at the stand-in) with ``ANTHROPIC_API_KEY`` as ``x-api-key``.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm

_WEATHER = {"paris": ("sunny", 24), "rome": ("cloudy", 19), "tokyo": ("rain", 16)}


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather forecast for a city.

    Args:
        city: The city name, e.g. "Paris".
    """
    sky, temperature = _WEATHER.get(city.lower(), ("clear", 21))
    return {"city": city, "sky": sky, "temperature_c": temperature}


root_agent = LlmAgent(
    name="weather_agent",
    model=LiteLlm("anthropic/claude-3-5-haiku-20241022"),
    instruction="You are a friendly weather assistant. Use get_weather for forecasts.",
    tools=[get_weather],
)
