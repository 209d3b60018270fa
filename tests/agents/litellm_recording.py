"""Record the LiteLLM weather agent against the stand-in's OpenAI endpoint, through rec."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import rec
from rec.standin.brain import RuleBrain, call
from rec.standin.server import StandinGemini
from tests.agents.adk_recording import drive_adk

__all__ = ["FAKE_OPENAI_KEY", "LITELLM_AGENT", "record_litellm", "weather_brain"]

LITELLM_AGENT = Path(__file__).resolve().parent / "litellm_weather"
FAKE_OPENAI_KEY = "sk-proj-FAKE" + "rec0test0key0" * 3
"""Shaped like an OpenAI project key, so a test can look for it (and its shape) on disk."""


def weather_brain() -> RuleBrain:
    """Calls get_weather for the city the user names; then sums up the tool's answer."""
    return RuleBrain([call("get_weather", lambda t: {"city": t.match(r"in (\w+)", "Paris")})])


def record_litellm(
    folder: Path,
    conversations: Sequence[Sequence[str]],
    *,
    name: str = "weather",
    run_config: Any = None,
    capture: bool = True,
) -> StandinGemini:
    """Record the agent (``OPENAI_BASE_URL`` at a fresh stand-in's ``/v1``, a fake
    ``sk-proj-`` key); return the stopped stand-in, whose ``requests`` the run made.

    With ``capture`` rec's ADK capture plugin rides along (the EvalSet is ADK's sessions);
    without it the EvalSet is read from the traffic.
    """
    from cassettes._evalset_writer import adk_capture_path

    with StandinGemini(weather_brain()) as api, pytest.MonkeyPatch.context() as env:
        env.setenv("OPENAI_BASE_URL", f"{api.url}/v1")
        env.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
        with rec.record(folder, name=name, app_name="litellm_weather"):
            from tests.agents.litellm_weather import agent

            path = adk_capture_path(folder, name) if capture else None
            asyncio.run(
                drive_adk(agent.root_agent, "litellm_weather", conversations, run_config, path)
            )
    return api
