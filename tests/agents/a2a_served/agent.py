"""An ADK agent that is served over A2A (``python -m tests.agents.a2a_served PORT``).

Its model is the default Gemini client, so ``rec start`` points it at its proxy like any
ADK agent's; ``rec replay`` loads this ``root_agent`` to replay what its A2A callers asked.
"""

from __future__ import annotations

import datetime

from google.adk.agents import LlmAgent


def opening_hours(museum: str) -> dict[str, str]:
    """The opening hours of a museum.

    Args:
        museum: The museum, e.g. "Louvre".
    """
    return {"museum": museum, "hours": "9:00-18:00", "checked": datetime.date.today().isoformat()}


root_agent = LlmAgent(
    name="museum_helper",
    model="gemini-2.0-flash",
    instruction="Tell museum opening hours.",
    description="Knows the opening hours of every museum.",
    tools=[opening_hours],
)
