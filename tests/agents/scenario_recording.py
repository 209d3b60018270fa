"""Record ``adk eval`` of ``conversation_scenario`` cases through ``rec start`` (the stand-in).

The travel agent is evaluated by ADK's own ``adk eval`` with its user simulator
(``LlmBackedUserSimulator``); the stand-in plays both the agent's model (the travel rules)
and the simulated user (:mod:`rec.standin.simulated_user`), and judges the simulated user
for ``per_turn_user_simulator_quality_v1``. ``rec start -- adk eval ...`` records all of
it: the agent's, the simulator's and the judge's model calls.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.travel_brain import travel_brain
from tests.agents.travel_recording import STATE, TRAVEL_AGENT
from tests.rec_process import ADK, rec_start

__all__ = ["SCENARIOS", "ScenarioRecording", "record_scenarios"]

SCENARIOS = {
    "weather_tour": {
        "starting_prompt": "Hi! I'm planning a trip.",
        "conversation_plan": "What's the weather in Tokyo?\nAnd the weather in Rome?",
    },
    "flight_hunt": {
        "starting_prompt": "Hello, I need a flight.",
        "conversation_plan": "Find flights from Paris to Rome on 2025-05-01.",
    },
}
"""Eval id -> conversation_scenario (each plan line is one simulated user turn)."""

CONFIG = {
    "criteria": {"per_turn_user_simulator_quality_v1": {"threshold": 0.5}},
    "user_simulator_config": {"model": "gemini-2.5-flash", "max_allowed_invocations": 5},
}


@dataclass(frozen=True)
class ScenarioRecording:
    """What :func:`record_scenarios` leaves behind."""

    agent: Path
    """The travel agent's copy that ``adk eval`` ran (its eval history is beside it)."""
    evalset: Path
    """The scenario eval set ``adk eval`` was given."""
    config: Path
    """Its eval config (``user_simulator_config`` and the simulator metric)."""
    out: Path
    """The recording folder (``scenarios.cassette.json``, ``scenarios.evalset.json``)."""
    adk_stdout: str

    @property
    def cassette(self) -> Path:
        return self.out / "scenarios.cassette.json"

    def adk_results(self) -> dict[str, tuple[int, list[str]]]:
        """eval id -> (final_eval_status, the user texts) of ``adk eval``'s own result file."""
        [path] = (self.agent / ".adk" / "eval_history").glob("*.evalset_result.json")
        data = json.loads(path.read_text())
        data = json.loads(data) if isinstance(data, str) else data
        return {
            case["eval_id"]: (
                case["final_eval_status"],
                [
                    row["actual_invocation"]["user_content"]["parts"][0]["text"]
                    for row in case["eval_metric_result_per_invocation"]
                ],
            )
            for case in data["eval_case_results"]
        }


def record_scenarios(folder: Path) -> ScenarioRecording:
    """``rec start -- adk eval TRAVEL scenarios.evalset.json --config_file_path cfg.json``."""
    if not ADK.exists():
        pytest.skip("the adk command is not installed")
    agent = folder / "travel"
    shutil.copytree(TRAVEL_AGENT, agent, ignore=shutil.ignore_patterns("__pycache__"))
    session = {"app_name": "travel", "user_id": "ada", "state": dict(STATE)}
    evalset = folder / "scenarios.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "scenarios",
                "eval_cases": [
                    {
                        "eval_id": eval_id,
                        "conversation_scenario": scenario,
                        "session_input": session,
                    }
                    for eval_id, scenario in SCENARIOS.items()
                ],
            },
            indent=2,
        )
    )
    config = folder / "scenario_config.json"
    config.write_text(json.dumps(CONFIG, indent=2))
    out = folder / "recording"
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api:
        done = rec_start(
            out,
            "scenarios",
            api.url,
            str(ADK),
            "eval",
            str(agent),
            str(evalset),
            "--config_file_path",
            str(config),
            GOOGLE_API_KEY=FAKE_API_KEY,
            TRAVEL_RATES_URL=f"{api.url}/rates",
        )
    assert done.returncode == 0, done.stderr[-3000:]
    return ScenarioRecording(agent, evalset, config, out, done.stdout)
