"""A SequentialAgent whose second agent has ``include_contents='none'``: it sees only ADK's
"For context:" transcript of the first agent's turn, and the state it wrote."""

from __future__ import annotations

import warnings
from typing import Any

from google.adk.agents import LlmAgent, SequentialAgent

MODEL = "gemini-2.0-flash"


def lookup_fact(topic: str) -> dict[str, Any]:
    """Look up one fact about a topic.

    Args:
        topic: What to look up, e.g. "Rome".
    """
    return {"topic": topic, "fact": f"{topic} has {len(topic) * 100} years of history"}


gatherer = LlmAgent(
    name="gatherer",
    model=MODEL,
    description="Gathers a fact.",
    instruction="Look up the topic the user names with lookup_fact.",
    tools=[lookup_fact],
    output_key="gathered",
)

summarizer = LlmAgent(
    name="summarizer",
    model=MODEL,
    description="Summarises what was gathered.",
    instruction="Summarise in one line: {gathered}",
    include_contents="none",
)

# ADK 2 deprecates the workflow agents in favour of Workflow; real agents still use them.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    root_agent = SequentialAgent(name="digest", sub_agents=[gatherer, summarizer])
