"""A weather assistant on ``LiteLlm("openai/gpt-4o-mini")``: one tool, OpenAI's wire.

LiteLLM sends OpenAI chat completions to ``OPENAI_BASE_URL`` (tests point it at the
stand-in, whose ``/v1/chat/completions`` answers with the RuleBrain of
``tests/agents/litellm_recording.py``) with ``OPENAI_API_KEY``.
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
    model=LiteLlm("openai/gpt-4o-mini"),
    instruction="You are a friendly weather assistant. Use get_weather for forecasts.",
    tools=[get_weather],
)
