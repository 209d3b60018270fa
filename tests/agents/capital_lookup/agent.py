"""``capital_agent`` with a ``lookup_capital`` tool: a turn that uses it makes two model calls."""

from __future__ import annotations

from google.adk.agents import LlmAgent

MODEL = "gemini-2.0-flash"


def lookup_capital(country: str) -> dict[str, str]:
    """Look up the capital of a country.

    Args:
        country: The country, e.g. "Italy".
    """
    return {"country": country, "capital": {"Italy": "Rome"}.get(country, "unknown")}


root_agent = LlmAgent(
    name="capital_agent",
    model=MODEL,
    instruction="You are capital_agent. Name the capital of the country asked about.",
    tools=[lookup_capital],
)
