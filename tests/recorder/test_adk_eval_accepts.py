"""ADK's own `adk eval` accepts the EvalSet rec wrote from a recording, and passes it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rec.standin.server import StandinGemini
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.travel_brain import travel_brain
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel
from tests.rec_process import adk_eval_passes

ADK = Path(sys.executable).parent / "adk"


@pytest.mark.skipif(not ADK.exists(), reason="the adk command is not installed")
def test_adk_eval_passes_the_recorded_evalset(tmp_path: Path) -> None:
    evalset = record_travel(
        tmp_path / "rec",
        [("What's the weather in Rome?", "Find flights from Paris to Rome on 2026-12-01")],
    )
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api:
        adk_eval_passes(TRAVEL_AGENT, evalset, api, tmp_path)
