"""An ADK 2 workflow graph as ``root_agent``: a drafter, then a reviewer of the draft."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.workflow import Workflow

drafter = LlmAgent(name="drafter", model="gemini-2.0-flash", instruction="Draft a reply.")
reviewer = LlmAgent(name="reviewer", model="gemini-2.0-flash", instruction="Review the draft.")

root_agent = Workflow(name="review_flow", edges=[("START", drafter, reviewer)])
