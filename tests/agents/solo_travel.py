"""One LlmAgent with the travel tools and an instruction that reads session state."""

from __future__ import annotations

from typing import Any

STATE = {"user_name": "Ada", "home_city": "Paris"}
"""The session state the agent's instruction reads."""


def single_agent() -> Any:
    from google.adk.agents import LlmAgent

    from tests.agents.travel.agent import MODEL, find_flights, get_weather

    return LlmAgent(
        name="solo_agent",
        model=MODEL,
        instruction="You help {user_name} with weather and flights.",
        tools=[get_weather, find_flights],
    )
