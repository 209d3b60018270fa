"""A session recorded from `adk api_server` with streaming on replays in streaming mode, green.

``rec start -- adk api_server`` records a session driven through ``/run_sse`` with
``"streaming": true`` (what ``adk web``'s streaming toggle sends), so every model call is
``:streamGenerateContent?alt=sse``. ``rec replay`` reads that from the recording and runs
the agent with ``StreamingMode.SSE``; ``adk eval`` (which never streams) passes the same
EvalSet against the stand-in model.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import load_cassette
from rec.standin.replies import FAKE_API_KEY
from tests.agents.travel_brain import travel_brain
from tests.factories import cli_replay as _replay
from tests.rec_process import adk_eval_passes, copy_travel_agent, recording_api_server

REPO = Path(__file__).resolve().parents[2]
ADK = Path(sys.executable).parent / "adk"
TURNS = ("What's the weather in Rome?", "And the weather in Tokyo?")

pytestmark = pytest.mark.skipif(not ADK.exists(), reason="the adk command is not installed")


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the agents folder, the recordings folder) of a streamed adk api_server session."""
    from rec.standin.server import StandinGemini
    from tests.agents.rates_api import STANDIN_ROUTES

    tmp = tmp_path_factory.mktemp("streamed")
    agents = copy_travel_agent(tmp / "agents")
    out = tmp / "recordings"
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api:
        env = {"GOOGLE_API_KEY": FAKE_API_KEY, "TRAVEL_RATES_URL": f"{api.url}/rates"}
        with recording_api_server(out, api.url, agents, **env) as server:
            state = {"user_name": "Ada", "home_city": "Paris"}
            session = server.client.post("/apps/travel/users/ada/sessions", json={"state": state})
            for text in TURNS:
                body = {
                    "app_name": "travel",
                    "user_id": "ada",
                    "session_id": session.json()["id"],
                    "new_message": {"role": "user", "parts": [{"text": text}]},
                    "streaming": True,
                }
                with server.client.stream("POST", "/run_sse", json=body) as reply:
                    assert reply.status_code == 200
                    events = [line for line in reply.iter_lines() if line.startswith("data:")]
                assert any('"partial":true' in e.replace(" ", "") for e in events), events
        assert server.stop is not None and server.stop.returncode == 0, server.stop
    return agents, out


def test_the_recording_streamed(streamed: tuple[Path, Path]) -> None:
    _, out = streamed
    urls = [e.request.url for e in load_cassette(out / "web.cassette.json").exchanges]
    assert urls and all(":streamGenerateContent?alt=sse" in url for url in urls), urls


def test_replay_runs_the_recorded_streaming_mode(
    streamed: tuple[Path, Path], loopback_only: Any
) -> None:
    agents, out = streamed
    code, output = _replay(str(agents / "travel"), str(out / "web.evalset.json"))
    assert code == 0, output
    assert "1 passed, 0 failed" in output


def test_streamed_chunks_are_not_responses_of_their_own(
    streamed: tuple[Path, Path], loopback_only: Any
) -> None:
    from replayer._replay_run import replay_evalsets

    agents, out = streamed
    [replayed] = replay_evalsets(str(agents / "travel"), [out / "web.evalset.json"])
    [case] = replayed.result.eval_case_results
    for turn in case.eval_metric_result_per_invocation:
        assert turn.expected_invocation is not None
        actual, expected = turn.actual_invocation, turn.expected_invocation
        assert actual.final_response == expected.final_response
        # A partial event kept would add a text event per chunk before the final one.
        shapes = [
            [e.author for e in inv.intermediate_data.invocation_events]  # type: ignore[union-attr]
            for inv in (actual, expected)
        ]
        assert shapes[0] == shapes[1]


def test_streaming_none_overrides_and_misses(
    streamed: tuple[Path, Path], loopback_only: Any
) -> None:
    agents, out = streamed
    code, output = _replay(
        str(agents / "travel"), str(out / "web.evalset.json"), "--streaming", "none"
    )
    assert code == 1, output
    assert "streamGenerateContent" in output and "generateContent" in output


def test_adk_eval_passes_the_streamed_evalset(streamed: tuple[Path, Path], tmp_path: Path) -> None:
    from rec.standin.server import StandinGemini
    from tests.agents.rates_api import STANDIN_ROUTES

    agents, out = streamed
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api:
        adk_eval_passes(agents / "travel", out / "web.evalset.json", api, tmp_path)
