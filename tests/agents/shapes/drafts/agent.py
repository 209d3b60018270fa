"""A LoopAgent: ``writer`` drafts, ``critic`` reviews, until the critic calls exit_loop."""

from __future__ import annotations

import warnings
from typing import Any

from google.adk.agents import LoopAgent
from google.adk.tools import exit_loop

from tests.agents.shapes.toolbox import llm_agent


def count_words(text: str) -> dict[str, Any]:
    """Count the words of a draft.

    Args:
        text: The draft.
    """
    return {"words": len(text.split())}


writer = llm_agent(
    name="writer",
    description="Writes a draft.",
    instruction="Write or improve a short draft for the user's request; use count_words.",
    tools=[count_words],
)

critic = llm_agent(
    name="critic",
    description="Reviews the draft.",
    instruction="Review the latest draft. When it has been revised once, call exit_loop.",
    tools=[exit_loop],
)

# ADK 2 deprecates the workflow agents in favour of Workflow; real agents still use them.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    root_agent = LoopAgent(name="drafts", sub_agents=[writer, critic], max_iterations=3)
