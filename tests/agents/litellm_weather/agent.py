"""A weather assistant on ``LiteLlm("openai/gpt-4o-mini")``: one tool, OpenAI's wire.

LiteLLM sends OpenAI chat completions to ``OPENAI_BASE_URL`` (tests point it at the
stand-in, whose ``/v1/chat/completions`` answers with the RuleBrain of
``tests/agents/litellm_recording.py``) with ``OPENAI_API_KEY``.
"""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm

from tests.agents.travel.agent import get_weather  # the travel agent's own tool

root_agent = LlmAgent(
    name="weather_agent",
    model=LiteLlm("openai/gpt-4o-mini"),
    instruction="You are a friendly weather assistant. Use get_weather for forecasts.",
    tools=[get_weather],
)
