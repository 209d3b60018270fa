"""A ParallelAgent inside a SequentialAgent: two branches, then a merger that reads both."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from google.adk.agents import ParallelAgent, SequentialAgent

from tests.agents.shapes.toolbox import llm_agent


def find_flights(destination: str) -> dict[str, Any]:
    """Find flights to a city.

    Args:
        destination: The arrival city.
    """
    return {"destination": destination, "flights": [f"{destination[:2].upper()}101"]}


WEATHER_DELAY_S = 0.0
"""How long get_weather takes (a test sets it to let the other branch in first)."""


async def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather for a city.

    Args:
        city: The city name.
    """
    await asyncio.sleep(WEATHER_DELAY_S)
    return {"city": city, "sky": "sunny" if len(city) % 2 else "cloudy"}


WEATHER_START_DELAY_S = 0.0
"""How long weather_agent waits before each model call (a test sets it to let the other
branch run whole before this one starts, as on a loaded machine)."""


async def _weather_waits(callback_context: Any, llm_request: Any) -> None:
    if WEATHER_START_DELAY_S:
        await asyncio.sleep(WEATHER_START_DELAY_S)


weather_agent = llm_agent(
    name="weather_agent",
    description="Checks the weather.",
    instruction="Check the weather in the city the user names with get_weather.",
    tools=[get_weather],
    before_model_callback=_weather_waits,
)

flights_agent = llm_agent(
    name="flights_agent",
    description="Finds flights.",
    instruction="Find flights to the city the user names with find_flights.",
    tools=[find_flights],
)

merger = llm_agent(
    name="merger",
    description="Merges the findings.",
    instruction="Merge the weather and flight findings into one short answer.",
)

# ADK 2 deprecates the workflow agents in favour of Workflow; real agents still use them.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    gather = ParallelAgent(name="gather", sub_agents=[weather_agent, flights_agent])
    root_agent = SequentialAgent(name="fanout", sub_agents=[gather, merger])
