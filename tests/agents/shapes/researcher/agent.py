"""An agent with an AgentTool: ``planner`` asks ``researcher`` (its own Runner) for facts."""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

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


researcher = LlmAgent(
    name="researcher",
    model=MODEL,
    description="Researches a topic and reports one fact.",
    instruction="Research the topic you are given with lookup_fact and report the fact.",
    tools=[lookup_fact],
)

root_agent = LlmAgent(
    name="planner",
    model=MODEL,
    description="Plans trips.",
    instruction="Plan trips. Ask the researcher tool for facts and use get_weather.",
    tools=[AgentTool(researcher), get_weather],
)
