"""The tools and the model several shape agents share, and the LlmAgent they all build.

The agent folders import this module by its full name (``tests.agents.shapes.toolbox``):
``adk eval`` and ``rec replay`` load each folder as a top-level package, and the tests run
them with the repository on ``PYTHONPATH``, as the other agents under ``tests/agents`` do.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent

MODEL = "gemini-2.0-flash"


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather for a city.

    Args:
        city: The city name.
    """
    return {"city": city, "sky": "sunny" if len(city) % 2 else "cloudy"}


def lookup_fact(topic: str) -> dict[str, Any]:
    """Look up one fact about a topic.

    Args:
        topic: What to look up, e.g. "Rome".
    """
    return {"topic": topic, "fact": f"{topic} has {len(topic) * 100} years of history"}


def llm_agent(*, name: str, description: str, instruction: str, **options: Any) -> LlmAgent:
    """An ``LlmAgent`` on :data:`MODEL`; ``options`` are its other fields (tools, ...)."""
    return LlmAgent(
        name=name, model=MODEL, description=description, instruction=instruction, **options
    )
