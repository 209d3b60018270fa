"""An agent configured for Vertex AI the way Google's agent-starter-pack templates do it.

At import it asks ADC for the project and fills the environment with ``setdefault``; ADK then
builds its google-genai client from that environment (no project or location in code): the
shape google-genai puts into "API gateway" mode behind a base URL. Replay must have its
placeholder ADC and the recorded project in place before this module is imported.
"""

from __future__ import annotations

import os
from typing import Any

import google.auth
from google.adk.agents import Agent

_, project_id = google.auth.default()
os.environ.setdefault("GOOGLE_CLOUD_PROJECT", project_id or "")
os.environ.setdefault("GOOGLE_CLOUD_LOCATION", "global")
os.environ.setdefault("GOOGLE_GENAI_USE_VERTEXAI", "True")


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather forecast for a city.

    Args:
        city: The city name, e.g. "Paris".
    """
    return {"city": city, "sky": "cloudy" if city.lower() == "rome" else "sunny"}


root_agent = Agent(
    name="root_agent",
    model="gemini-2.5-flash",
    instruction="You are a helpful assistant for the weather.",
    tools=[get_weather],
)
