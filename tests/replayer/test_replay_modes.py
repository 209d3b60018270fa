"""Replay reproduces how the recording ran: tool callbacks once, streaming, the clock, order.

Each agent here is a real ADK agent recorded through the real proxy against the stand-in,
then replayed with the stand-in stopped, no API key and sockets refused beyond loopback.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cassettes._cassette import load_cassette
from rec.standin.brain import RuleBrain, call
from rec.standin.replies import Reply, StandinRequest
from replayer._replay_run import replay_evalsets
from replayer._replay_target import ReplayOptions
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


def test_each_case_replays_in_its_own_recorded_streaming_mode(
    tmp_path: Path, offline: None
) -> None:
    # One recording, two sessions: RunConfig(streaming_mode=SSE) for one, none for the other.
    from google.adk.agents.run_config import RunConfig, StreamingMode

    from tests.agents.travel_brain import travel_brain
    from tests.agents.wrapped_weather import agent

    evalset = record_adk(
        tmp_path,
        agent.root_agent,
        [("What's the weather in Paris?",), ("What's the weather in Rome?",)],
        responder=travel_brain(),
        app_name="wrapped_weather",
        run_config=[RunConfig(streaming_mode=StreamingMode.SSE), RunConfig()],
    )
    urls = [e.request.url for e in load_cassette(tmp_path / "recording.cassette.json").exchanges]
    assert [":streamGenerateContent" in url for url in urls] == [True, True, False, False]
    assert _statuses(AGENTS / "wrapped_weather", evalset) == ["PASSED", "PASSED"]
    forced = ReplayOptions(streaming="sse")
    assert _statuses(AGENTS / "wrapped_weather", evalset, forced) == ["PASSED", "FAILED"]


# -- the frozen clock ------------------------------------------------------------------------

RECORDED_AT = dt.datetime(2026, 1, 15, 9, 30, 20, tzinfo=dt.timezone.utc)
"""When the clock agent's sessions were "recorded": well before today."""
_MINUTE = re.compile(r"It is \w+ (\d{4}-\d\d-\d\d \d\d:\d\d) now")


def _instruction_minute(request: StandinRequest) -> dt.datetime:
    found = _MINUTE.search(request.system_instruction)
    assert found, request.system_instruction
    return dt.datetime.strptime(found.group(1), "%Y-%m-%d %H:%M")


class MinuteCrossingBrain:
    """The clock agent's model: calls get_weather, then answers; with ``cross_minute`` the
    tool call comes back only once the (travelled) clock is in the minute after the one the
    request's instruction names, so the next request's instruction names another minute."""

    def __init__(self, *, cross_minute: bool) -> None:
        self.brain = RuleBrain([call("get_weather", {"city": "Paris"}, when="weather")])
        self.cross_minute = cross_minute

    def __call__(self, request: StandinRequest) -> Reply | None:
        reply = self.brain(request)
        if (
            reply is None
            or not self.cross_minute
            or '"functionCall"' not in json.dumps(reply.chunks)
        ):
            return reply
        named = _instruction_minute(request)
        now = dt.datetime.now()
        wait = (named + dt.timedelta(minutes=1, seconds=0.3) - now).total_seconds()
        return reply.replace(first_delay_s=max(0.0, wait))


def _record_clock(
    folder: Path,
    *,
    cross_minute: bool = False,
    capture: bool = False,
    name: str = "recording",
    at: dt.datetime = RECORDED_AT,
) -> Path:
    """The clock agent recorded in ``folder`` as ``name``, its clock started at ``at``."""
    import time_machine

    from tests.agents.clock import agent

    return record_adk(
        folder,
        agent.root_agent,
        [("What's the weather in Paris?",)],
        responder=MinuteCrossingBrain(cross_minute=cross_minute),
        app_name="clock",
        name=name,
        capture=capture,
        # Crossing a minute: start near its end, so the tool call waits about 2 s.
        clock=lambda: time_machine.travel(at.replace(second=58) if cross_minute else at, tick=True),
    )


def _recorded_minutes(folder: Path) -> list[str]:
    found = []
    for exchange in load_cassette(folder / "recording.cassette.json").exchanges:
        body = exchange.request.body.value  # type: ignore[union-attr]
        text = body["systemInstruction"]["parts"][0]["text"]
        found.append(_MINUTE.search(text).group(1))  # type: ignore[union-attr]
    return found


@pytest.mark.parametrize(
    "capture", [pytest.param(False, id="from-traffic"), pytest.param(True, id="from-adk-sessions")]
)
def test_a_clock_dependent_instruction_replays_on_the_recording_s_clock(
    tmp_path: Path, offline: None, capture: bool
) -> None:
    # The turn's start comes from the first request (traffic) or ADK's user event (plugin).
    evalset = _record_clock(tmp_path, capture=capture)
    assert _recorded_minutes(tmp_path)[0].startswith("2026-01-15")
    assert _statuses(AGENTS / "clock", evalset) == ["PASSED"]


def test_without_the_frozen_clock_the_instruction_misses(tmp_path: Path, offline: None) -> None:
    from rec.cli import cli

    evalset = _record_clock(tmp_path)
    result = CliRunner().invoke(
        cli, ["replay", str(AGENTS / "clock"), str(evalset), "--no-freeze-time"]
    )
    assert result.exit_code == 1, result.output
    assert "systemInstruction changed" in result.output
    assert "2026-01-15" in result.output


def test_agent_evaluator_freezes_the_clock_unless_told_not_to(
    tmp_path: Path, offline: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from cassettes._evalset import load_evalset
    from replayer._agent_evaluator import AgentEvaluator

    evalset = load_evalset(_record_clock(tmp_path))

    def evaluate() -> None:
        asyncio.run(
            AgentEvaluator.evaluate_eval_set(
                str(AGENTS / "clock"),
                evalset,
                criteria={"tool_trajectory_avg_score": 1.0},
                num_runs=1,
                print_detailed_results=False,
                recording=str(tmp_path / "recording.cassette.json"),
            )
        )

    evaluate()
    monkeypatch.setenv("REC_FREEZE_TIME", "0")  # what the plugin's --rec-no-freeze-time sets
    with pytest.raises(AssertionError, match="systemInstruction changed"):
        evaluate()


def test_the_clock_advances_with_the_recording(tmp_path: Path, offline: None) -> None:
    # The recorded turn crossed a minute between its two model calls: ticking from the
    # turn's start alone would replay the second call a minute early.
    evalset = _record_clock(tmp_path, cross_minute=True)
    first, second = _recorded_minutes(tmp_path)
    assert first != second
    assert _statuses(AGENTS / "clock", evalset) == ["PASSED"]


def test_cases_recorded_weeks_apart_replay_in_parallel_each_on_its_own_clock(
    tmp_path: Path, offline: None
) -> None:
    # Each recording's instruction names its own day and minute; replayed together with
    # --parallel 2, each case must read its own recording's time, and an answer to one
    # case must not move the other's clock.
    from cassettes._evalset import load_evalset, save_evalset

    recordings = tmp_path / "recordings"
    cases = []
    for name, at in (("early", RECORDED_AT), ("late", RECORDED_AT + dt.timedelta(days=40))):
        path = _record_clock(recordings, name=name, at=at)
        [case] = load_evalset(path).eval_cases
        cases.append(case.model_copy(update={"eval_id": name}))
    both = load_evalset(recordings / "early.evalset.json").model_copy(update={"eval_cases": cases})
    evalset = save_evalset(both, tmp_path / "both.evalset.json")
    options = ReplayOptions(recording=recordings, parallel=2)
    assert _statuses(AGENTS / "clock", evalset, options) == ["PASSED", "PASSED"]


CLOCK_PROGRAM = """
import datetime

from google import genai
from google.genai import types


async def chat(text, session):
    now = datetime.datetime.now()
    client = genai.Client()  # kept referenced while the call runs
    reply = await client.aio.models.generate_content(
        model="gemini-2.0-flash",
        contents=text,
        config=types.GenerateContentConfig(system_instruction=f"It is {now:%Y-%m-%d %H:%M}."),
    )
    return reply.text
"""


def test_a_clock_dependent_program_replays_on_the_recording_s_clock(
    tmp_path: Path, offline: None
) -> None:
    import asyncio

    import time_machine

    import rec
    from rec.standin.replies import FAKE_API_KEY
    from rec.standin.server import StandinGemini
    from replayer._agent_loading import ProgramSession, load_agent

    program = tmp_path / "clock_program.py"
    program.write_text(CLOCK_PROGRAM)
    loaded = load_agent(f"{program}:chat")
    assert loaded.program is not None
    session = ProgramSession("clock_program", "user", "s1")
    with StandinGemini(RuleBrain()) as api, pytest.MonkeyPatch.context() as env:
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        with rec.record(tmp_path, name="clock", upstream=api.url):
            with time_machine.travel(RECORDED_AT, tick=True):
                asyncio.run(loaded.program("What day is it?", session))  # type: ignore[misc]
    evalset = tmp_path / "clock.evalset.json"
    [replayed] = replay_evalsets(f"{program}:chat", [evalset])
    assert replayed.result.passed, replayed.failures
    [unfrozen] = replay_evalsets(f"{program}:chat", [evalset], ReplayOptions(freeze_time=False))
    assert "systemInstruction changed" in unfrozen.failures[0].reason


def test_the_replayed_process_s_monotonic_clock_is_not_frozen() -> None:
    from replayer._recorded_clock import ClockPlan, frozen_clock

    plan = ClockPlan(turns=(RECORDED_AT.timestamp(),))
    before = time.monotonic()
    with frozen_clock(plan) as clock:
        assert clock is not None
        assert abs(time.time() - RECORDED_AT.timestamp()) < 3600
        assert time.monotonic() >= before
        assert time.monotonic() - before < 3600  # not moved back to January
    assert time.time() > RECORDED_AT.timestamp() + 86400


# -- ParallelAgent: the recorded completion order --------------------------------------------


class SlowFirstBranch:
    """The report agent's model: each agent says who it is; ``weather_branch`` (declared
    first) answers late, so ``news_branch`` finishes first in the recording."""

    def __init__(self, delay_s: float = 1.0) -> None:
        self.brain = RuleBrain()
        self.delay_s = delay_s

    def __call__(self, request: StandinRequest) -> Reply | None:
        reply = self.brain(request)
        if reply is not None and 'internal name is "weather_branch"' in request.system_instruction:
            return reply.replace(first_delay_s=self.delay_s)
        return reply


def _merger_context(folder: Path) -> list[str]:
    """The branch outputs in the merger's recorded request, in order."""
    for exchange in load_cassette(folder / "recording.cassette.json").exchanges:
        body = exchange.request.body.value  # type: ignore[union-attr]
        if 'internal name is "merger"' in body["systemInstruction"]["parts"][0]["text"]:
            return [
                part["text"]
                for content in body["contents"]
                for part in content.get("parts", [])
                if "] said:" in part.get("text", "")
            ]
    raise AssertionError("the merger made no request")


def test_parallel_branches_finish_in_the_recorded_order(tmp_path: Path, offline: None) -> None:
    from tests.agents.parallel_report import agent

    evalset = record_adk(
        tmp_path,
        agent.root_agent,
        [("Morning report please",)],
        responder=SlowFirstBranch(),
        app_name="parallel_report",
        capture=True,  # traffic alone threads the branches as conversations of their own
    )
    context = _merger_context(tmp_path)
    assert "[news_branch" in context[0] and "[weather_branch" in context[-1], context
    # Twice: the second run replays the same exchanges, in the same order again.
    options = ReplayOptions(num_runs=2)
    assert _statuses(AGENTS / "parallel_report", evalset, options) == ["PASSED"]
