"""``rec replay`` on a real ADK agent (tools, state, a sub-agent) recorded against the stand-in.

The recording is made once per module through the real recording proxy; every replay
then runs with the stand-in stopped, no API key and sockets refused beyond loopback.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest

from tests.agents.travel_recording import TRAVEL_AGENT
from tests.factories import cli_replay as _replay


@pytest.fixture
def offline(loopback_only: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, no stand-in, nothing beyond loopback."""
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("TRAVEL_RATES_URL", raising=False)


def _fails_saying(replayed: tuple[int, str], *said: str) -> None:
    """The replay (exit status, output) failed its cases (status 1), its output saying each
    of ``said``."""
    code, output = replayed
    assert code == 1, output
    for words in said:
        assert words in output, f"{words!r} not in:\n{output}"


def _edited_travel_agent(folder: Path, new: str) -> Path:
    """A copy of the travel agent in ``folder`` whose instruction says ``new`` where the
    original says "a friendly travel"."""
    shutil.copytree(TRAVEL_AGENT, folder, ignore=shutil.ignore_patterns("__pycache__"))
    source = (folder / "agent.py").read_text()
    assert "a friendly travel" in source
    (folder / "agent.py").write_text(source.replace("a friendly travel", new))
    return folder


def test_recording_has_every_case(recorded: Path) -> None:
    data = json.loads((recorded / "travel.evalset.json").read_text())
    assert [len(c["conversation"]) for c in data["eval_cases"]] == [4, 1]


@pytest.mark.usefixtures("offline")
def test_replay_passes_offline_without_credentials(recorded: Path) -> None:
    code, output = _replay(str(TRAVEL_AGENT), str(recorded / "travel.evalset.json"))
    assert code == 0, output
    assert "2 passed, 0 failed, 2 cases" in output


@pytest.mark.usefixtures("offline")
def test_mock_tools_keep_a_raising_tool_out_of_the_run(recorded: Path) -> None:
    # Without TRAVEL_RATES_URL convert_currency raises, as without its credentials.
    code, output = _replay(str(TRAVEL_AGENT), str(recorded), "--case", CASE_ID)
    assert code == 0, output


CASE_ID = "what_s_the_weather_in_rome"


@pytest.mark.usefixtures("offline")
def test_live_tools_fail_and_say_why(recorded: Path) -> None:
    replayed = _replay(str(TRAVEL_AGENT), str(recorded), "--live-tools", "--case", CASE_ID)
    _fails_saying(replayed, "turn 2", "convert_currency", "TRAVEL_RATES_URL is not set")


@pytest.mark.usefixtures("offline")
def test_edited_instruction_fails_naming_the_change(recorded: Path, tmp_path: Path) -> None:
    edited = _edited_travel_agent(tmp_path / "travel", "a terse travel")
    replayed = _replay(str(edited), str(recorded / "travel.evalset.json"))
    _fails_saying(replayed, "turn 1, model call 1", "systemInstruction changed", "terse")


@pytest.mark.usefixtures("offline")
def test_parallel_and_several_runs_pass(recorded: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    junit = tmp_path / "junit.xml"
    code, output = _replay(
        str(TRAVEL_AGENT),
        str(recorded),
        "--parallel",
        "2",
        "--num-runs",
        "2",
        "--results",
        str(results),
        "--junit",
        str(junit),
    )
    assert code == 0, output
    assert list(results.glob("*.evalset_result.json"))
    assert "testcase" in junit.read_text()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(["--case", "nope"], "no case 'nope'", id="unknown-case"),
        pytest.param(["--recording", "missing-dir"], "no such file", id="missing-recording"),
    ],
)
@pytest.mark.usefixtures("offline")
def test_input_errors_exit_2(
    recorded: Path, args: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from rec.cli import main

    code = main(["replay", str(TRAVEL_AGENT), str(recorded / "travel.evalset.json"), *args])
    assert code == 2
    err = capsys.readouterr().err
    assert expected in err, err


@pytest.mark.usefixtures("offline")
def test_missing_recording_is_an_input_error(tmp_path: Path, recorded: Path) -> None:
    from rec.cli import main

    shutil.copy(recorded / "travel.evalset.json", tmp_path / "other.evalset.json")
    assert main(["replay", str(TRAVEL_AGENT), str(tmp_path / "other.evalset.json")]) == 2


@pytest.mark.usefixtures("offline")
def test_a_dotted_evalset_name_expects_the_cassette_of_its_full_name(
    tmp_path: Path, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # rec looks for my.agent.cassette.json beside my.agent.evalset.json: the message names
    # that file, not the part of the name before its first dot.
    from rec.cli import main

    evalset = tmp_path / "my.agent.evalset.json"
    shutil.copy(recorded / "travel.evalset.json", evalset)
    assert main(["replay", str(TRAVEL_AGENT), str(evalset)]) == 2
    err = capsys.readouterr().err
    assert f"{evalset}: no recording beside this eval set" in err
    assert "Expected my.agent.cassette.json beside it" in err
    assert "my.cassette.json" not in err


@pytest.mark.usefixtures("offline")
def test_a_bare_root_agent_replays_under_deprecation_warnings_as_errors(recorded: Path) -> None:
    # A user's `filterwarnings = error` covers ADK's own modules too: rec must not call
    # ADK's deprecated Runner(plugins=...) (it builds an App with the plugins instead).
    import warnings

    from replayer._replay_run import replay_evalsets

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        # google-genai's own (it subclasses aiohttp's ClientSession per session), not rec's.
        warnings.filterwarnings(
            "ignore", "Inheritance class AiohttpClientSession", DeprecationWarning
        )
        [result] = replay_evalsets(str(TRAVEL_AGENT), [recorded / "travel.evalset.json"])
    assert [r.final_eval_status.name for r in result.result.eval_case_results] == [
        "PASSED",
        "PASSED",
    ]


@pytest.mark.usefixtures("offline")
def test_a_cassette_given_as_the_eval_set_is_named_as_such(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rec.cli import main

    cassette = recorded / "travel.cassette.json"
    assert main(["replay", str(TRAVEL_AGENT), str(cassette)]) == 2
    err = capsys.readouterr().err
    assert f"{cassette}: this is a cassette (the recording), not an eval set" in err
    assert "Pass travel.evalset.json or the folder" in err
    assert err.count("\n") == 1


@pytest.mark.usefixtures("offline")
def test_the_replay_is_served_on_the_runners_own_loop(recorded: Path) -> None:
    """An ADK agent with mock tools is replayed with no proxy thread: the server runs on the
    runner's event loop, so a model call never hops between threads."""
    import threading

    from replayer._replay_run import replay_evalsets
    from replayer._replay_target import ReplayOptions

    threads: set[str] = set()

    def seen(done: int, total: int) -> None:
        threads.update(t.name for t in threading.enumerate())

    [run] = replay_evalsets(
        str(TRAVEL_AGENT), [recorded / "travel.evalset.json"], ReplayOptions(), on_case=seen
    )
    assert run.result.passed
    assert threads and not any(name.startswith("rec-proxy") for name in threads), threads


@pytest.mark.usefixtures("offline")
def test_in_process_replay_passes_the_same_cases(recorded: Path) -> None:
    evalset = str(recorded / "travel.evalset.json")
    code, output = _replay(str(TRAVEL_AGENT), evalset, "--in-process", "--parallel", "2")
    assert code == 0, output
    assert "2 passed, 0 failed, 2 cases" in output


@pytest.mark.usefixtures("offline")
def test_in_process_replay_fails_closed_with_the_same_miss(recorded: Path, tmp_path: Path) -> None:
    edited = _edited_travel_agent(tmp_path / "travel", "a terse travel")
    evalset = str(recorded / "travel.evalset.json")
    proxied = _replay(str(edited), evalset)
    in_process = _replay(str(edited), evalset, "--in-process")
    for replayed in (proxied, in_process):
        _fails_saying(replayed, "turn 1, model call 1", "systemInstruction changed")


@pytest.mark.usefixtures("offline")
def test_in_process_calls_never_reach_the_proxy(recorded: Path) -> None:
    """Every model call of the agent is answered by the transport: the proxy beside it
    handles none, and the handler serves exactly what a proxied replay serves."""
    import asyncio

    from cassettes._evalset import load_evalset
    from replayer._adk_runner import run_adk_case
    from replayer._agent_loading import load_agent
    from replayer._in_process import models_in_process
    from replayer._mock_tools import ToolResponseBook, recorded_tool_calls
    from replayer._replay_api import replay_async

    cassette = recorded / "travel.cassette.json"
    evalset = load_evalset(recorded / "travel.evalset.json")
    agent = load_agent(str(TRAVEL_AGENT))

    async def run(in_process: bool) -> tuple[int, int, list[object]]:
        async with replay_async(cassette) as replaying:
            with (
                models_in_process(agent.root_agent, replaying.handler)
                if in_process
                else contextlib.nullcontext(0)
            ) as models:
                assert models == (2 if in_process else 0)
                outs = []
                for case in evalset.eval_cases:
                    calls = [recorded_tool_calls(i) for i in case.conversation or []]
                    out = await run_adk_case(agent, case, book=ToolResponseBook(calls))
                    assert isinstance(out, list), out
                    outs.append([i.final_response for i in out])
            return replaying.server.handled, replaying.served, outs

    handled, served, answers = asyncio.run(run(in_process=True))
    assert handled == 0 and served > 0
    proxied_handled, proxied_served, proxied_answers = asyncio.run(run(in_process=False))
    assert proxied_handled == proxied_served == served
    assert answers == proxied_answers


@pytest.mark.usefixtures("offline")
def test_item6_an_app_name_mismatch_is_named_as_the_cause(recorded: Path, tmp_path: Path) -> None:
    """The eval set is the travel app's; another agent asks for state it never had."""
    other = _edited_travel_agent(tmp_path / "concierge", "a {member_tier} travel")
    code, output = _replay(str(other), str(recorded / "travel.evalset.json"), "--case", CASE_ID)
    assert code == 1, output
    said = " ".join(output.split())  # the reason is wrapped at the terminal's width
    assert "the case was recorded for app 'travel', not for the agent being replayed " in said
    assert "('concierge'): replay it against 'travel'" in said
    assert "Context variable not found: `member_tier`" in said
    assert "Traceback" not in output


def test_two_agent_folders_of_one_name_each_load_their_own_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent folder whose parent is on sys.path behind another folder of the same name
    (an examples/ and a tests/ copy, both loaded in one process) is loaded from its own
    folder, not the one the name finds first."""
    import sys

    from replayer._agent_loading import load_agent

    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    folders = []
    for side in ("first", "second"):
        folder = tmp_path / side / "same_named_agent"
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("from . import agent\n")
        (folder / "agent.py").write_text(
            "from google.adk.agents import LlmAgent\n"
            f"root_agent = LlmAgent(name={side + '_agent'!r}, model='gemini-2.0-flash')\n"
        )
        folders.append(folder)
    sys.path.append(str(tmp_path / "second"))  # on the path, behind what the first puts first
    assert load_agent(str(folders[0])).root_agent.name == "first_agent"
    sys.modules.pop("same_named_agent", None)  # as a test's cleanup may leave it
    sys.modules.pop("same_named_agent.agent", None)
    assert load_agent(str(folders[1])).root_agent.name == "second_agent"
