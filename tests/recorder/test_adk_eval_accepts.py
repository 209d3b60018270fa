"""ADK's own `adk eval` accepts the EvalSet rec wrote from a recording, and passes it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.travel_brain import travel_brain
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel

ADK = Path(sys.executable).parent / "adk"


@pytest.mark.skipif(not ADK.exists(), reason="the adk command is not installed")
def test_adk_eval_passes_the_recorded_evalset(tmp_path: Path) -> None:
    evalset = record_travel(
        tmp_path / "rec",
        [("What's the weather in Rome?", "Find flights from Paris to Rome on 2026-12-01")],
    )
    agent = tmp_path / "travel"  # a copy: adk eval writes its history beside the agent
    shutil.copytree(TRAVEL_AGENT, agent, ignore=shutil.ignore_patterns("__pycache__"))
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
        env.update(
            GOOGLE_API_KEY=FAKE_API_KEY,
            GOOGLE_GEMINI_BASE_URL=api.url,
            TRAVEL_RATES_URL=f"{api.url}/rates",
        )
        done = subprocess.run(
            [
                str(ADK),
                "eval",
                str(agent),
                str(evalset),
                "--config_file_path",
                str(evalset.parent / "test_config.json"),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Tests passed: 1" in done.stdout and "Tests failed: 0" in done.stdout, done.stdout
