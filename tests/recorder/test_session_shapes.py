"""One eval case per session, in ADK's shape, for the agent shapes real ADK users build.

Each agent in ``tests/agents/shapes`` (an AgentTool, a LoopAgent, a ParallelAgent inside a
SequentialAgent, a ``before_model_callback`` guardrail with a ``before_agent_callback``,
an ``include_contents='none'`` sub-agent, a long-running tool, an ADK 2 ``Workflow``
graph) runs two sessions under
ADK's Runner against the stand-in model, recorded through the real proxy: traffic only,
and with rec's capture plugin attached to the App. The EvalSet must hold one case per
session, equal ADK's own conversion of the session (``convert_events_to_eval_invocations``),
load in ADK, pass ``rec replay`` offline and pass ``adk eval`` against the stand-in.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cassettes._evalset import load_evalset
from rec.cli import cli
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.shapes_brain import CONVERSATIONS, shapes_brain
from tests.agents.shapes_recording import record_shape, shape_folder
from tests.factories import parts_summary
from tests.rec_process import REPO, rec_argv, rec_environment

ADK = Path(sys.executable).parent / "adk"
SESSIONS = 2
INVOCATIONS = {
    "researcher": 2,
    "drafts": 1,
    "fanout": 2,
    "guarded": 4,
    "digest": 2,
    "approvals": 1,  # the resume turn is left out: ADK's eval cannot send it
    "graph": 2,
}
VARIANTS = [
    pytest.param(name, plugin, id=f"{name}-{'plugin' if plugin else 'traffic'}")
    for name in INVOCATIONS
    for plugin in (False, True)
]


@dataclass
class Recorded:
    folder: Path
    evalset: Path
    sessions: list[Any]


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, bool], Recorded]:
    """Record a shape on first use (two sessions), then hand out the same recording."""
    made: dict[tuple[str, bool], Recorded] = {}

    def get(name: str, plugin: bool) -> Recorded:
        if (name, plugin) not in made:
            folder = tmp_path_factory.mktemp(f"{name}-{'plugin' if plugin else 'traffic'}")
            path, sessions = record_shape(folder, name, plugin=plugin, sessions=SESSIONS)
            made[name, plugin] = Recorded(folder, path, sessions)
        return made[name, plugin]

    return get


def _expected_cases(name: str, plugin: bool) -> list[int]:
    """Invocations per case. A workflow's nodes send no history, so from traffic alone each
    user turn is a case of its own (its nodes' model calls stay together)."""
    if name == "graph" and not plugin:
        return [1] * (INVOCATIONS[name] * SESSIONS)
    return [INVOCATIONS[name]] * SESSIONS


def _text(content: Any) -> str:
    return "".join(p.text or "" for p in (content.parts or [])) if content else ""


def _comparable(invocation: Any) -> dict[str, Any]:
    return {
        "user": _text(invocation.user_content),
        "final": _text(invocation.final_response),
        "events": [
            (
                e.author,
                parts_summary(e.content),
                e.model_version,
            )
            for e in invocation.intermediate_data.invocation_events
        ],
    }


def _adk_conversion(session: Any) -> list[dict[str, Any]]:
    """ADK's own conversion of the session, up to a long-running tool's resume."""
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    events = list(session.events)
    resume = next(
        (
            i
            for i, event in enumerate(events)
            if event.author == "user" and event.content and event.get_function_responses()
        ),
        len(events),
    )
    converted = EvaluationGenerator.convert_events_to_eval_invocations(events[:resume])
    return [_comparable(i) for i in converted]


@pytest.mark.parametrize(("name", "plugin"), VARIANTS)
def test_one_case_per_session_that_loads_in_adk(
    recordings: Callable[[str, bool], Recorded], name: str, plugin: bool
) -> None:
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    recorded = recordings(name, plugin)
    cases = load_evalset(recorded.evalset).eval_cases
    assert [len(c.conversation or []) for c in cases] == _expected_cases(name, plugin)
    turns = list(CONVERSATIONS[name])[: INVOCATIONS[name]]
    said = [_text(i.user_content) for c in cases for i in c.conversation or []]
    assert said == turns * SESSIONS
    adk = AdkEvalSet.model_validate_json(recorded.evalset.read_text(encoding="utf-8"))
    assert len(adk.eval_cases) == len(cases)


@pytest.mark.parametrize(("name", "plugin"), VARIANTS)
def test_cases_have_the_shape_adks_own_conversion_gives(
    recordings: Callable[[str, bool], Recorded], name: str, plugin: bool
) -> None:
    recorded = recordings(name, plugin)
    cases = load_evalset(recorded.evalset).eval_cases
    ours = [_comparable(i) for c in cases for i in c.conversation or []]
    expected = [i for session in recorded.sessions for i in _adk_conversion(session)]
    if name == "drafts" and not plugin:
        # exit_loop skips summarization: its response never reaches the model, so traffic
        # cannot show that last event.
        for invocation in expected:
            *kept, last = invocation["events"]
            assert last == ("critic", [("response", "exit_loop", {"result": None})], None)
            invocation["events"] = kept
    if name == "graph" and not plugin:
        # a workflow's nodes carry no agent name in their requests: the app name stands in
        for invocation in ours + expected:
            invocation["events"] = [(None, *rest) for _, *rest in invocation["events"]]
    assert ours == expected


def test_parallel_branches_finishing_out_of_declaration_order_keep_adks_order(
    tmp_path: Path,
) -> None:
    """The first-declared branch answers last: events follow the order ADK appended them."""
    path, sessions = record_shape(tmp_path, "fanout", sessions=1, slow=("weather_agent",))
    [case] = load_evalset(path).eval_cases
    ours = [_comparable(i) for i in case.conversation or []]
    assert ours == _adk_conversion(sessions[0])
    authors = [author for author, *_ in ours[0]["events"]]
    assert authors.index("flights_agent") < authors.index("weather_agent")


def test_a_slow_tool_lets_the_other_parallel_branch_in_before_its_response(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADK appends a tool's response when the tool returns, so the other branch's call and
    reply land between a slow tool's call and its response: the case keeps that order."""
    from tests.agents.shapes.fanout import agent

    # flights_agent's replies come 0.4 s late, get_weather's answer 2 s late: the branches'
    # events are far apart in time, weather's call first and its response last.
    monkeypatch.setattr(agent, "WEATHER_DELAY_S", 2.0)
    path, sessions = record_shape(tmp_path, "fanout", sessions=1)
    [case] = load_evalset(path).eval_cases
    ours = [_comparable(i) for i in case.conversation or []]
    assert ours == _adk_conversion(sessions[0])
    events = [(author, parts[0][0]) for author, parts, _ in ours[0]["events"] if parts]
    called = events.index(("weather_agent", "get_weather"))
    answered = events.index(("weather_agent", "response"))
    assert ("flights_agent", "find_flights") in events[called:answered]


@pytest.mark.usefixtures("loopback_only")
def test_a_branch_that_ran_whole_before_the_other_replays_in_the_recorded_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded on a machine that let the flights branch run whole before the weather
    branch's first call (no call of one overlapped a call of the other), the replay, where
    both branches start at once and every answer is instant, keeps that order."""
    from tests.agents.shapes.fanout import agent

    monkeypatch.setattr(agent, "WEATHER_START_DELAY_S", 1.0)
    path, _ = record_shape(tmp_path, "fanout", sessions=1, slow=())
    [case] = load_evalset(path).eval_cases
    events = [author for author, *_ in _comparable((case.conversation or [])[0])["events"]]
    assert events.index("weather_agent") > max(
        i for i, author in enumerate(events) if author == "flights_agent"
    )
    monkeypatch.setattr(agent, "WEATHER_START_DELAY_S", 0.0)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    result = CliRunner().invoke(
        cli, ["replay", str(shape_folder("fanout")), str(path)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed" in result.output


def test_an_agent_tools_inner_conversation_is_not_a_case(
    recordings: Callable[[str, bool], Recorded],
) -> None:
    """With the plugin, the inner Runner's session is not captured; without it, the inner
    traffic is folded into the parent conversation (and kept for replay's tools)."""
    from cassettes._cassette import load_cassette
    from cassettes._evalset_writer import adk_capture_path
    from cassettes._extraction import extract_conversations

    captured = recordings("researcher", True)
    lines = adk_capture_path(captured.folder, "researcher").read_text().splitlines()
    assert {json.loads(line)["id"] for line in lines} == {s.id for s in captured.sessions}
    traffic = recordings("researcher", False)
    cassette = load_cassette(traffic.folder / "researcher.cassette.json")
    conversations = extract_conversations(cassette.exchanges)
    assert len(conversations) == SESSIONS
    for conversation in conversations:
        [inner] = conversation.nested
        assert conversation.agents == ["planner"] and inner.agents == ["researcher"]
        assert _text(inner.invocations[0].user_content) == "Rome"


@pytest.mark.usefixtures("loopback_only")
@pytest.mark.parametrize(
    ("name", "plugin"),
    VARIANTS,
)
def test_rec_replay_passes_offline(
    recordings: Callable[[str, bool], Recorded],
    name: str,
    plugin: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorded = recordings(name, plugin)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    result = CliRunner().invoke(
        cli, ["replay", str(shape_folder(name)), str(recorded.evalset)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    cases = len(_expected_cases(name, plugin))
    assert f"{cases} passed, 0 failed" in result.output


def _adk_eval(agent: Path, evalset: Path, work: Path) -> subprocess.CompletedProcess[str]:
    copy = work / agent.name  # adk eval writes its history beside the agent
    shutil.copytree(agent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with StandinGemini(shapes_brain()) as api:
        # The shape agents import their tools from the repository (tests.agents.shapes).
        env = rec_environment(GOOGLE_API_KEY=FAKE_API_KEY, GOOGLE_GEMINI_BASE_URL=api.url)
        config = evalset.parent / "test_config.json"
        command = [str(ADK), "eval", str(copy), str(evalset), "--config_file_path", str(config)]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(not ADK.exists(), reason="the adk command is not installed")
@pytest.mark.parametrize(
    ("name", "plugin"),
    [p for p in VARIANTS if not p.values[1] or p.values[0] in ("researcher", "approvals", "graph")],
)
def test_adk_eval_passes_the_evalset(
    recordings: Callable[[str, bool], Recorded], name: str, plugin: bool, tmp_path: Path
) -> None:
    recorded = recordings(name, plugin)
    done = _adk_eval(shape_folder(name), recorded.evalset, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    cases = len(_expected_cases(name, plugin))
    assert f"Tests passed: {cases}" in done.stdout and "Tests failed: 0" in done.stdout, done.stdout


def test_rec_start_records_a_script_with_an_agent_tool(tmp_path: Path) -> None:
    """``rec start -- python script.py``: the program's own Runner, one case per session."""
    out = tmp_path / "rec"
    with StandinGemini(shapes_brain()) as api:
        done = subprocess.run(
            rec_argv(
                "start",
                "--out",
                str(out),
                "--name",
                "script",
                "--upstream",
                api.url,
                "--",
                sys.executable,
                "-m",
                "tests.agents.shapes_recording",
                "researcher",
                "--sessions",
                str(SESSIONS),
            ),
            env=rec_environment(GOOGLE_API_KEY=FAKE_API_KEY),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    cases = load_evalset(out / "script.evalset.json").eval_cases
    assert [len(c.conversation or []) for c in cases] == [2] * SESSIONS
    [first, second] = cases[0].conversation or []
    assert [c.name for c in _calls(first)] == ["researcher"]
    assert [c.name for c in _calls(second)] == ["get_weather"]


def _calls(invocation: Any) -> list[Any]:
    from cassettes._evalset import invocation_tool_calls

    return invocation_tool_calls(invocation)
