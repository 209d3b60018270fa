"""A SequentialAgent whose second agent has ``include_contents='none'``: it sees only ADK's
"For context:" transcript of the first agent's turn, and the state it wrote."""

from __future__ import annotations

import warnings

from google.adk.agents import SequentialAgent

from tests.agents.shapes.toolbox import llm_agent, lookup_fact

gatherer = llm_agent(
    name="gatherer",
    description="Gathers a fact.",
    instruction="Look up the topic the user names with lookup_fact.",
    tools=[lookup_fact],
    output_key="gathered",
)

summarizer = llm_agent(
    name="summarizer",
    description="Summarises what was gathered.",
    instruction="Summarise in one line: {gathered}",
    include_contents="none",
)

# ADK 2 deprecates the workflow agents in favour of Workflow; real agents still use them.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    root_agent = SequentialAgent(name="digest", sub_agents=[gatherer, summarizer])
