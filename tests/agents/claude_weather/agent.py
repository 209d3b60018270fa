"""A weather assistant on ``LiteLlm("anthropic/claude-3-5-haiku-20241022")``: Anthropic's wire.

LiteLLM sends Anthropic messages to ``ANTHROPIC_API_BASE`` / ``ANTHROPIC_BASE_URL`` plus
``/v1/messages`` (tests point it at the stand-in) with ``ANTHROPIC_API_KEY`` as ``x-api-key``.
"""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm

from tests.agents.travel.agent import get_weather  # the travel agent's own tool

root_agent = LlmAgent(
    name="weather_agent",
    model=LiteLlm("anthropic/claude-3-5-haiku-20241022"),
    instruction="You are a friendly weather assistant. Use get_weather for forecasts.",
    tools=[get_weather],
)
