"""An agent with an AgentTool: ``planner`` asks ``researcher`` (its own Runner) for facts."""

from __future__ import annotations

from google.adk.tools.agent_tool import AgentTool

from tests.agents.shapes.toolbox import get_weather, llm_agent, lookup_fact

researcher = llm_agent(
    name="researcher",
    description="Researches a topic and reports one fact.",
    instruction="Research the topic you are given with lookup_fact and report the fact.",
    tools=[lookup_fact],
)

root_agent = llm_agent(
    name="planner",
    description="Plans trips.",
    instruction="Plan trips. Ask the researcher tool for facts and use get_weather.",
    tools=[AgentTool(researcher), get_weather],
)
