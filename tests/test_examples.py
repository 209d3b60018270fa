"""The bundled examples work: their files load, and ``rec replay`` over each passes credential-free.

The production-bug example must fail before its fix and pass after it. Replays run the
installed ``rec`` in a subprocess, from the repository root, with no Google credentials
in the environment, exactly as examples/README.md tells a newcomer to run them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet
from google.adk.sessions import Session as AdkSession

from cassettes._cassette import load_cassette
from cassettes._eval_config import load_eval_config
from cassettes._evalset import load_evalset
from tests.script_loading import load_script

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
REC = Path(sys.executable).parent / "rec"

EVALSETS = sorted(EXAMPLES.rglob("*.evalset.json"))
CONFIGS = sorted(EXAMPLES.rglob("test_config.json"))

REPLAYS = [
    pytest.param(
        "examples/home_assistant",
        "examples/home_assistant/recordings/evening_routine.evalset.json",
        "thermostat_in_comfort_range=1.000",
        id="home_assistant-evening_routine",
    ),
    pytest.param(
        "examples/home_assistant",
        "examples/home_assistant/recordings/leaving_home.evalset.json",
        "tool_trajectory_avg_score=1.000",
        id="home_assistant-leaving_home",
    ),
    pytest.param(
        "examples/genai_afc/thermostat_helper.py:chat",
        "examples/genai_afc/recordings",
        "tool_trajectory_avg_score=1.000",
        id="genai_afc",
    ),
    pytest.param(
        "examples/home_assistant",
        "examples/home_assistant/simulated",
        "per_turn_user_simulator_quality_v1=1.000",
        id="home_assistant-simulated_user",
    ),
    pytest.param(
        "examples/bookshop",
        "examples/bookshop/recordings",
        "tool_trajectory_avg_score=1.000",
        id="bookshop",
    ),
    pytest.param(
        "examples/litellm_weather",
        "examples/litellm_weather/recordings",
        "tool_trajectory_avg_score=1.000",
        id="litellm_weather",
    ),
    pytest.param(
        "examples/production_bug/after_fix/climate_agent",
        "examples/production_bug/evals",
        "tool_trajectory_avg_score=1.000",
        id="production_bug-after_fix",
    ),
]


def _rec(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``rec`` as a user would: repository root, no credentials, no proxies."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "GEMINI_", "VERTEX", "ADK_", "BOOKSHOP_", "OPENAI_"))
        and "PROXY" not in k.upper()
        # xdist workers set COLUMNS=80; a pipe has no width, so the report cuts no line.
        and k != "COLUMNS"
    }
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return subprocess.run(
        [str(REC), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def _record_script() -> ModuleType:
    return load_script(EXAMPLES / "record.py", "examples_record")


# -- the files ---------------------------------------------------------------------------


def test_every_example_has_its_recordings() -> None:
    names = {p.relative_to(EXAMPLES).as_posix() for p in EVALSETS}
    assert names == {
        "bookshop/recordings/orders.evalset.json",
        "genai_afc/recordings/fahrenheit.evalset.json",
        "home_assistant/recordings/evening_routine.evalset.json",
        "home_assistant/recordings/leaving_home.evalset.json",
        "litellm_weather/recordings/trip.evalset.json",
        "home_assistant/simulated/simulated_evening.evalset.json",
        "production_bug/evals/thermostat_bug.evalset.json",
    }
    for evalset in EVALSETS:
        cassette = evalset.with_name(evalset.name.replace(".evalset.json", ".cassette.json"))
        assert cassette.is_file(), f"{evalset} has no recording beside it"
        assert (evalset.parent / "test_config.json").is_file()


@pytest.mark.parametrize("path", EVALSETS, ids=lambda p: p.stem)
def test_evalsets_load_in_rec_and_in_adk(path: Path) -> None:
    ours = load_evalset(path)
    adk = AdkEvalSet.model_validate_json(path.read_text())
    assert [c.eval_id for c in adk.eval_cases] == [c.eval_id for c in ours.eval_cases]
    for case in adk.eval_cases:
        # Multi-turn sessions, or a scenario ADK's user simulator plays for several turns.
        assert case.conversation_scenario or (case.conversation and len(case.conversation) >= 2)
        assert case.session_input is not None


@pytest.mark.parametrize("path", sorted(EXAMPLES.rglob("*.cassette.json")), ids=lambda p: p.stem)
def test_cassettes_load_and_hold_no_key(path: Path) -> None:
    cassette = load_cassette(path)
    assert cassette.exchanges or cassette.live is not None
    assert "AIza" not in path.read_text()


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.parent.parent.name)
def test_eval_configs_load(path: Path) -> None:
    load_eval_config(path)


def test_home_assistant_config_shows_in_order_and_a_custom_metric() -> None:
    raw = json.loads((EXAMPLES / "home_assistant/recordings/test_config.json").read_text())
    assert raw["criteria"]["tool_trajectory_avg_score"]["match_type"] == "IN_ORDER"
    path = raw["custom_metrics"]["thermostat_in_comfort_range"]["code_config"]["name"]
    assert path == "home_assistant.metrics.thermostat_in_comfort_range"


def test_home_assistant_sessions_exercise_tools_state_transfer_and_http() -> None:
    calls = set()
    for evalset in (EXAMPLES / "home_assistant/recordings").glob("*.evalset.json"):
        for case in load_evalset(evalset).eval_cases:
            assert case.session_input is not None
            assert case.session_input.state["home_name"] == "Maple House"
            for invocation in case.conversation or []:
                for event in invocation.intermediate_data.invocation_events:  # type: ignore[union-attr]
                    for part in event.content.parts or [] if event.content else []:
                        if part.function_call:
                            calls.add(part.function_call.name)
    assert {"transfer_to_agent", "get_outdoor_weather", "set_thermostat", "lock_door"} <= calls


def test_production_session_is_an_adk_session_export() -> None:
    raw = json.loads((EXAMPLES / "production_bug/production_session.json").read_text())
    session = AdkSession.model_validate(raw)
    assert session.app_name == "climate_agent"
    calls = [
        p.function_call
        for e in session.events
        for p in (e.content.parts or [] if e.content else [])
        if p.function_call
    ]
    bad = [c for c in calls if c.name == "set_thermostat"]
    assert bad and bad[0].args["celsius"] == 71.6, "the export shows the production bug"


def test_production_evalset_is_the_import_plus_the_documented_correction(tmp_path: Path) -> None:
    result = _rec(
        "import",
        "examples/production_bug/production_session.json",
        "--out",
        str(tmp_path),
        "--name",
        "thermostat_bug",
    )
    assert result.returncode == 0, result.stderr
    imported = tmp_path / "thermostat_bug.evalset.json"
    _record_script().correct_expectation(imported)
    committed = EXAMPLES / "production_bug/evals/thermostat_bug.evalset.json"
    assert json.loads(imported.read_text()) == json.loads(committed.read_text())


# -- replay --------------------------------------------------------------------------------


@pytest.mark.parametrize(("agent", "evalsets", "score"), REPLAYS)
def test_rec_replay_passes_without_credentials(agent: str, evalsets: str, score: str) -> None:
    result = _rec("replay", agent, evalsets)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failed" in result.stdout
    assert "FAILED" not in result.stdout
    assert score in result.stdout


def test_production_bug_fails_before_the_fix() -> None:
    result = _rec(
        "replay",
        "examples/production_bug/before_fix/climate_agent",
        "examples/production_bug/evals",
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "tool_trajectory_avg_score=0.500" in result.stdout
    assert "71.6" in result.stdout  # the report shows the wrong argument


def test_bookshop_replays_with_its_mcp_server_unusable(tmp_path: Path) -> None:
    """The MCP server is never started: replaced by one that cannot run, it is not missed."""
    agent = tmp_path / "bookshop"
    shutil.copytree(EXAMPLES / "bookshop", agent, ignore=shutil.ignore_patterns("__pycache__"))
    marker = tmp_path / "server-started"
    (agent / "bookshop_server.py").write_text(
        f"open({str(marker)!r}, 'w').write('started')\nraise SystemExit(1)\n"
    )
    result = _rec("replay", str(agent), "examples/bookshop/recordings")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed, 0 failed" in result.stdout
    assert not marker.exists(), "rec replay started the MCP server"


def test_bookshop_recording_holds_its_mcp_session_without_the_credential() -> None:
    cassette = load_cassette(EXAMPLES / "bookshop/recordings/orders.cassette.json")
    assert cassette.mcp is not None
    [toolset] = cassette.mcp.toolsets
    assert toolset.toolset.tool_filter == ["check_stock", "place_order", "search_books"]
    server = toolset.toolset.server
    assert server.transport == "stdio" and server.env == {"BOOKSHOP_API_TOKEN": "<redacted>"}
    listing = next(c for s in toolset.sessions for c in s.calls if c.method == "tools/list")
    assert {t["name"] for t in listing.result["tools"]} >= {"search_books", "cancel_order"}
    for path in (EXAMPLES / "bookshop/recordings").iterdir():
        assert "bks-demo-credential" not in path.read_text()
