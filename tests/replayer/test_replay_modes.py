"""Replay reproduces how the recording ran: tool callbacks once, streaming, the clock, order.

Each agent here is a real ADK agent recorded through the real proxy against the stand-in,
then replayed with the stand-in stopped, no API key and sockets refused beyond loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cassettes import load_cassette
from replayer import ReplayOptions, replay_evalsets
from standin import RuleBrain, call
from tests.agents.adk_recording import record_adk

AGENTS = Path(__file__).resolve().parents[1] / "agents"


@pytest.fixture
def offline(loopback_only: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, no stand-in, nothing beyond loopback."""
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


def _statuses(agent: Path, evalset: Path, options: ReplayOptions | None = None) -> list[str]:
    [replayed] = replay_evalsets(str(agent), [evalset], options or ReplayOptions())
    return [r.final_eval_status.name for r in replayed.result.eval_case_results]


def _function_responses(cassette: Path) -> list[object]:
    found = []
    for exchange in load_cassette(cassette).exchanges:
        for content in exchange.request.body.value.get("contents", []):  # type: ignore[union-attr]
            for part in content.get("parts", []):
                if "functionResponse" in part:
                    found.append(part["functionResponse"]["response"])
    return found


def test_a_mocked_tool_answer_is_final_the_after_tool_callback_runs_once(
    tmp_path: Path, offline: None
) -> None:
    from tests.agents.wrapped_weather import agent

    brain = RuleBrain([call("get_weather", {"city": "Paris"}, when="weather")])
    evalset = record_adk(
        tmp_path,
        agent.root_agent,
        [("What's the weather in Paris?",)],
        responder=brain,
        app_name="wrapped_weather",
    )
    # The recording holds the response after the callback ran (wrapped once) ...
    recorded = {"data": {"city": "Paris", "sky": "sunny"}}
    assert _function_responses(tmp_path / "recording.cassette.json") == [recorded]
    first = json.loads(evalset.read_text())["eval_cases"][0]["conversation"][0]
    events = first["intermediate_data"]["invocation_events"]
    assert events[1]["content"]["parts"][0]["function_response"]["response"] == recorded
    # ... and the mock returns it as final: wrapped again, the model's next request would
    # hold {"data": {"data": ...}} and miss.
    assert _statuses(AGENTS / "wrapped_weather", evalset) == ["PASSED"]
