"""Record the LiteLLM weather agents against the stand-in's OpenAI or Anthropic endpoint."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pytest

import rec
from rec.standin.brain import RuleBrain, call
from rec.standin.server import StandinGemini
from tests.agents.adk_recording import drive_adk

__all__ = [
    "AGENTS",
    "CLAUDE_AGENT",
    "FAKE_ANTHROPIC_KEY",
    "FAKE_OPENAI_KEY",
    "LITELLM_AGENT",
    "record_litellm",
    "weather_brain",
]

LITELLM_AGENT = Path(__file__).resolve().parent / "litellm_weather"
CLAUDE_AGENT = Path(__file__).resolve().parent / "claude_weather"
AGENTS = {"openai": LITELLM_AGENT, "anthropic": CLAUDE_AGENT}
"""The weather agent on each wire: ``LiteLlm("openai/…")`` and ``LiteLlm("anthropic/…")``."""
FAKE_OPENAI_KEY = "sk-proj-FAKE" + "rec0test0key0" * 3
"""Shaped like an OpenAI project key, so a test can look for it (and its shape) on disk."""
FAKE_ANTHROPIC_KEY = "sk-ant-api03-FAKE" + "rec0test0key0" * 3
"""Shaped like an Anthropic key."""


def weather_brain() -> RuleBrain:
    """Calls get_weather for the city the user names; then sums up the tool's answer."""
    return RuleBrain([call("get_weather", lambda t: {"city": t.match(r"in (\w+)", "Paris")})])


def record_litellm(
    folder: Path,
    conversations: Sequence[Sequence[str]],
    *,
    wire: Literal["openai", "anthropic"] = "openai",
    name: str = "weather",
    run_config: Any = None,
    capture: bool = True,
) -> StandinGemini:
    """Record the agent of ``wire`` (its base URL at a fresh stand-in, a fake key of its
    provider's shape); return the stopped stand-in, whose ``requests`` the run made.

    With ``capture`` rec's ADK capture plugin rides along (the EvalSet is ADK's sessions);
    without it the EvalSet is read from the traffic.
    """
    from cassettes._evalset_writer import adk_capture_path

    with StandinGemini(weather_brain()) as api, pytest.MonkeyPatch.context() as env:
        if wire == "openai":
            env.setenv("OPENAI_BASE_URL", f"{api.url}/v1")
            env.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
        else:
            env.setenv("ANTHROPIC_BASE_URL", api.url)
            env.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
        app = AGENTS[wire].name
        with rec.record(folder, name=name, app_name=app):
            agent = importlib.import_module(f"tests.agents.{app}.agent")
            path = adk_capture_path(folder, name) if capture else None
            asyncio.run(drive_adk(agent.root_agent, app, conversations, run_config, path))
    return api
