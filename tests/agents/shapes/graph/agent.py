"""An ADK 2 workflow graph: ``root_agent`` is a ``Workflow`` running two LLM agents in turn
(a tool-calling ``scout``, then a ``reporter`` that writes the answer)."""

from __future__ import annotations

from google.adk.workflow import Workflow

from tests.agents.shapes.toolbox import get_weather, llm_agent

scout = llm_agent(
    name="scout",
    description="Checks the weather.",
    instruction="Check the weather in the city the user names with get_weather.",
    tools=[get_weather],
)

reporter = llm_agent(
    name="reporter",
    description="Reports.",
    instruction="Write a one-line weather report from what the scout found.",
)

root_agent = Workflow(name="graph", edges=[("START", scout, reporter)])
