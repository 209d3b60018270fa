"""`rec start -- adk api_server ...`: the capture plugin rides along without code changes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cassettes._evalset import load_evalset
from rec.standin.replies import FAKE_API_KEY
from tests.agents.travel_brain import travel_brain
from tests.rec_process import copy_travel_agent, recording_api_server

REPO = Path(__file__).resolve().parents[2]
ADK = Path(sys.executable).parent / "adk"
STATE = {"user_name": "Ada", "home_city": "Paris"}

pytestmark = pytest.mark.skipif(not ADK.exists(), reason="the adk command is not installed")


def test_rec_start_attaches_the_capture_plugin_to_adk_api_server(
    tmp_path: Path, standin_factory: Any
) -> None:
    api = standin_factory(travel_brain())
    agents = copy_travel_agent(tmp_path / "agents")
    out = tmp_path / "recordings"
    env = {"GOOGLE_API_KEY": FAKE_API_KEY, "TRAVEL_RATES_URL": f"{api.url}/rates"}
    with recording_api_server(out, api.url, agents, **env) as server:
        session = server.client.post("/apps/travel/users/ada/sessions", json={"state": STATE})
        for text in (
            "What's the weather in Rome?",
            "Find flights from Paris to Rome on 2026-12-01",
        ):
            reply = server.client.post(
                "/run",
                json={
                    "app_name": "travel",
                    "user_id": "ada",
                    "session_id": session.json()["id"],
                    "new_message": {"role": "user", "parts": [{"text": text}]},
                },
            )
            assert reply.status_code == 200, reply.text
    stop, stderr = server.stop, server.stderr
    assert stop is not None
    assert stop.returncode == 0, stop.stderr
    assert "attached rec's ADK capture plugin" in stderr, stderr
    assert "instrumenting Python in the command" in stderr  # the sitecustomize rides along too

    evalset = load_evalset(out / "web.evalset.json")
    [case] = evalset.eval_cases
    assert case.session_input is not None
    assert (case.session_input.app_name, case.session_input.user_id) == ("travel", "ada")
    assert case.session_input.state == STATE  # exact, which traffic alone cannot know
    assert case.final_session_state is not None
    assert [inv.user_content.parts[0].text for inv in case.conversation or []] == [
        "What's the weather in Rome?",
        "Find flights from Paris to Rome on 2026-12-01",
    ]
    capture = (out / ".rec" / "web.adk.jsonl").read_text()
    # One line per run: the Runner hook saw --extra_plugins' plugin and attached no second one.
    assert len(capture.splitlines()) == 2
    assert FAKE_API_KEY not in capture and FAKE_API_KEY not in json.dumps(
        evalset.model_dump(mode="json")
    )
