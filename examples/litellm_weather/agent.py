"""A weather assistant on ``LiteLlm("openai/gpt-4o-mini")``: an ADK agent that is not on Gemini.

LiteLLM sends OpenAI chat completions to ``OPENAI_BASE_URL`` (default
``https://api.openai.com/v1``; any OpenAI-compatible server: vLLM, Ollama's ``/v1``) with
``OPENAI_API_KEY``. ``rec start`` points it at itself and forwards to that base URL;
``rec replay`` needs neither the key nor the server.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm

_FORECASTS = {
    "lisbon": ("sunny", 23),
    "oslo": ("snow", -3),
    "paris": ("cloudy", 14),
}


def get_forecast(city: str) -> dict[str, Any]:
    """Get today's weather forecast for a city.

    Args:
        city: The city name, e.g. "Lisbon".
    """
    sky, temperature = _FORECASTS.get(city.lower(), ("clear", 18))
    return {"city": city, "sky": sky, "temperature_c": temperature}


def packing_tip(temperature_c: float) -> dict[str, str]:
    """Suggest what to pack for a temperature in degrees Celsius.

    Args:
        temperature_c: The expected temperature.
    """
    if temperature_c < 5:
        return {"tip": "a warm coat, gloves and a hat"}
    if temperature_c < 18:
        return {"tip": "a light jacket"}
    return {"tip": "sunglasses and sunscreen"}


root_agent = LlmAgent(
    name="weather_agent",
    model=LiteLlm("openai/gpt-4o-mini"),
    instruction=(
        "You help travellers with the weather. Use get_forecast for a city's forecast and "
        "packing_tip with its temperature when they ask what to pack."
    ),
    tools=[get_forecast, packing_tip],
)
