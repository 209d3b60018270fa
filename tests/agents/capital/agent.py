"""``capital_agent``: one model call per turn and no tools (takes, usage and budgets)."""

from __future__ import annotations

from google.adk.agents import LlmAgent

MODEL = "gemini-2.0-flash"

root_agent = LlmAgent(
    name="capital_agent",
    model=MODEL,
    instruction="You are capital_agent. Name the capital of the country asked about.",
)
