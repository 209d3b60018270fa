"""rec's pytest plugin via pytester: the ``rec`` fixture, marker, drop-in AgentEvaluator, xdist."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from cassettes._cassette import load_cassette
from rec.standin.server import StandinGemini
from tests.agents.travel_recording import CONVERSATIONS, TRAVEL_AGENT, record_travel
from tests.factories import UNRECORDED_CALL, add_stale_exchange, rec_fixture_test

pytest_plugins = ["pytester"]

CITIES = (
    "Paris Rome Tokyo Berlin Madrid Lisbon Vienna Prague Oslo Dublin "
    "Athens Zurich Warsaw Helsinki Brussels Amsterdam Budapest Seoul Lima Cairo"
).split()


@pytest.fixture(autouse=True)
def _asyncio_loop_scope(pytester: pytest.Pytester) -> None:
    """Every inner pytest run sets what the README tells users to set, so pytest-asyncio
    (installed for the README's example) does not warn at its start."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


@pytest.fixture(scope="module")
def travel_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("plugin-travel")
    record_travel(folder, CONVERSATIONS)
    return folder


@pytest.fixture(scope="module")
def twenty_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("plugin-twenty")
    record_travel(folder, [(f"What's the weather in {city}?",) for city in CITIES])
    return folder


def _project(pytester: pytest.Pytester, recording: Path, evals: str = "evals") -> Path:
    shutil.copytree(
        TRAVEL_AGENT, pytester.path / "travel", ignore=shutil.ignore_patterns("__pycache__")
    )
    target = pytester.path / evals
    target.mkdir()
    shutil.copy(recording / "travel.cassette.json", target / "travel.cassette.json")
    shutil.copy(recording / "travel.evalset.json", target / "travel.test.json")
    shutil.copy(recording / "test_config.json", target / "test_config.json")
    pytester.syspathinsert()
    return target


def test_agent_evaluator_passes_credential_free(
    pytester: pytest.Pytester, travel_recording: Path, loopback_only: object
) -> None:
    _project(pytester, travel_recording)
    pytester.makepyfile(
        test_travel="""
        import asyncio
        # from google.adk.evaluation.agent_evaluator import AgentEvaluator
        from rec import AgentEvaluator

        def test_travel():
            asyncio.run(AgentEvaluator.evaluate("travel", "evals", num_runs=2))
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1)


def test_agent_evaluator_failure_uses_adks_message(
    pytester: pytest.Pytester, travel_recording: Path
) -> None:
    result = _evaluate_edited_case(
        pytester,
        travel_recording,
        1,
        "final_response",
        "Completely different words entirely unrelated",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*Following are all the test failures.*",
            "*response_match_score for travel Failed. Expected 0.8, but got 0.*",
        ]
    )


def test_rec_html_reports_every_agent_evaluator_evaluation(
    pytester: pytest.Pytester, travel_recording: Path, loopback_only: object
) -> None:
    """The HTML report from the pytest plugin, through an option."""
    evals = _project(pytester, travel_recording)
    data = json.loads((evals / "travel.test.json").read_text())
    data["eval_cases"][1]["conversation"][0]["final_response"]["parts"] = [
        {"text": "Completely different words entirely unrelated"}
    ]
    (evals / "travel.test.json").write_text(json.dumps(data))
    pytester.makepyfile(
        test_travel="""
        import asyncio
        from rec import AgentEvaluator

        def test_travel():
            asyncio.run(AgentEvaluator.evaluate("travel", "evals/travel.test.json", num_runs=1))
        """
    )
    # Under xdist: the worker that ran the evaluation leaves its report, the controller renders.
    result = pytester.runpytest("-p", "no:randomly", "-n", "2", "--rec-html", "out/report.html")
    result.assert_outcomes(failed=1)
    page = (pytester.path / "out" / "report.html").read_text(encoding="utf-8")
    assert "1 passed, 1 failed, 2 case(s) in 1 eval set(s)" in page
    assert "unrelated" in page  # the expected reply, in the failed case's word diff
    assert sorted(p.name for p in (pytester.path / "out").iterdir()) == ["report.html"]


def test_rec_fixture_replay_fails_closed_without_recording(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_missing="""
        def test_weather(rec):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(errors=1)  # at setup, like pytest-recording
    result.stdout.fnmatch_lines(["*no recording for this test (replay mode fails closed)*"])


def test_rec_marker_lists_allowed_keys(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_marker="""
        import pytest

        @pytest.mark.rec(cassete="x")
        def test_weather(rec):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.stdout.fnmatch_lines(
        ["*unknown @pytest.mark.rec argument(s) cassete; allowed: mode, recording, upstream*"]
    )


def test_rec_config_lists_allowed_keys(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_config="""
        import pytest

        @pytest.fixture
        def rec_config():
            return {"upstrem": "http://127.0.0.1:1"}

        def test_weather(rec):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.stdout.fnmatch_lines(["*unknown rec_config key(s) upstrem; allowed: mode, upstream*"])


def test_rec_fixture_records_then_replays(
    pytester: pytest.Pytester,
    standin: object,
    fake_api_key: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytester.makepyfile(
        test_genai="""
        import os
        import pytest
        from google import genai

        @pytest.mark.rec(recording="hello", upstream=os.environ["STANDIN_URL"])
        def test_hello(rec):
            client = genai.Client()
            reply = client.models.generate_content(model="gemini-2.0-flash", contents="hello there")
            assert reply.text
        """
    )
    monkeypatch.setenv("STANDIN_URL", standin.url)  # type: ignore[attr-defined]
    recorded = pytester.runpytest("-p", "no:randomly", "--rec-mode", "record")
    recorded.assert_outcomes(passed=1)
    cassette = pytester.path / "recordings" / "test_genai" / "hello.cassette.json"
    assert cassette.is_file()
    monkeypatch.delenv("GOOGLE_API_KEY")
    replayed = pytester.runpytest("-p", "no:randomly")
    replayed.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("name", "flags", "value"),
    [
        pytest.param("REC_MODE", ("--rec-mode", "live"), "live", id="mode"),
        pytest.param(
            "REC_IGNORE",
            ("--rec-ignore", "systemInstruction", "--rec-ignore", "generationConfig.temperature"),
            "systemInstruction,generationConfig.temperature",
            id="ignore",
        ),
    ],
)
def test_flags_reach_agent_evaluator_for_each_test_only(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    flags: tuple[str, ...],
    value: str,
) -> None:
    monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(
        test_env=f"""
        import os

        def test_sees_the_flag():
            assert os.environ[{name!r}] == {value!r}
        """
    )
    result = pytester.runpytest("-p", "no:randomly", *flags)
    result.assert_outcomes(passed=1)
    assert name not in os.environ  # the plugin restored the process environment


def test_streaming_and_clock_options_reach_agent_evaluator_for_each_test_only(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("REC_STREAMING", "REC_FREEZE_TIME"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(
        test_env="""
        import os

        def test_sees_the_options():
            assert os.environ["REC_STREAMING"] == "sse"
            assert os.environ["REC_FREEZE_TIME"] == "0"
        """
    )
    result = pytester.runpytest(
        "-p", "no:randomly", "--rec-streaming", "sse", "--rec-no-freeze-time"
    )
    result.assert_outcomes(passed=1)
    assert "REC_STREAMING" not in os.environ and "REC_FREEZE_TIME" not in os.environ


def test_rec_mode_record_rewrites_the_recording_for_agent_evaluator(
    pytester: pytest.Pytester,
    travel_recording: Path,
    standin: StandinGemini,
    fake_api_key: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``record`` re-records: what was there is not kept (that is ``auto``)."""
    evals = _project(pytester, travel_recording)
    cassette = evals / "travel.cassette.json"
    add_stale_exchange(cassette)
    pytester.makepyfile(
        test_travel="""
        import asyncio
        from rec import AgentEvaluator

        def test_travel():
            asyncio.run(AgentEvaluator.evaluate("travel", "evals", num_runs=1))
        """
    )
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", standin.url)
    monkeypatch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
    # In a fresh interpreter: after another in-process AgentEvaluator run in the same
    # process (pytester restores sys.modules after each), ADK's results were serialised
    # against EvalStatus classes of another import: pydantic's "Expected `enum`" warnings,
    # errors under this project's filterwarnings, failed the test (on main 7c083e1 too).
    result = pytester.runpytest_subprocess("-p", "no:randomly", "--rec-mode", "record")
    result.assert_outcomes(passed=1)
    rewritten = load_cassette(cassette)
    assert rewritten.exchanges, "nothing was recorded"
    assert not any("gemini-stale" in e.request.url for e in rewritten.exchanges)


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*.json"))
    }


def test_xdist_over_twenty_recorded_cases_leaves_recordings_identical(
    pytester: pytest.Pytester, twenty_cases: Path
) -> None:
    evals = _project(pytester, twenty_cases)
    ids = [c["eval_id"] for c in json.loads((evals / "travel.test.json").read_text())["eval_cases"]]
    assert len(ids) == 20
    pytester.makepyfile(
        test_twenty=f"""
        import pytest
        from rec import ReplayOptions, replay_evalsets

        @pytest.mark.parametrize("case", {ids!r})
        def test_case(case):
            [run] = replay_evalsets("travel", ["evals/travel.test.json"],
                                    ReplayOptions(cases=(case,)))
            assert run.result.passed, run.result.eval_case_results[0].failure_reasons
        """
    )
    before = _digests(evals)
    result = pytester.runpytest_subprocess("-n", "4", "-p", "no:randomly")
    result.assert_outcomes(passed=20)
    assert _digests(evals) == before


def test_rec_fixture_shows_misses_as_they_happen(pytester: pytest.Pytester) -> None:
    rec_fixture_test(
        pytester,
        "test_live_misses",
        "test_miss_is_visible",
        """
            with pytest.raises(Exception):
                client.models.generate_content(model="gemini-2.0-flash", contents="unrecorded")
            assert len(rec.misses) == 1
            assert "no recording matches" in str(rec.misses[0])
        """,
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, errors=1)  # the test saw it; teardown fails with it
    result.stdout.fnmatch_lines(["*no recording matches*"])


def test_readme_agent_evaluator_example_runs_as_written(
    pytester: pytest.Pytester, travel_recording: Path, loopback_only: object
) -> None:
    """The docs' AgentEvaluator test needs pytest-asyncio (the adk extra's)."""
    pytest.importorskip("pytest_asyncio", reason="pytest-asyncio missing: pip install -e '.[test]'")
    page = Path(__file__).resolve().parents[2] / "docs" / "pytest.md"
    section = page.read_text(encoding="utf-8")
    section = section[section.index("## pytest: drop-in `AgentEvaluator`") :]
    start = section.index("```python\n") + len("```python\n")
    example = section[start : section.index("```", start)]
    assert "home_assistant" in example and "tests/evals/evening_routine.evalset.json" in example
    (pytester.path / "tests").mkdir()
    _project(pytester, travel_recording, evals="tests/evals")
    pytester.makepyfile(
        test_example=example.replace('"home_assistant"', '"travel"').replace(
            "tests/evals/evening_routine.evalset.json", "tests/evals/travel.test.json"
        )
    )
    pytester.makeini(  # what the README says to set
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "filterwarnings = error::pytest.PytestDeprecationWarning\n"
    )
    # In a fresh interpreter, as the AgentEvaluator test above (the same enum classes).
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1)


def test_a_miss_the_test_dies_of_is_one_failure_saying_rec_mode(pytester: pytest.Pytester) -> None:
    """One failing test is "1 failed", not "1 failed, 1 error", its hint naming pytest's flags."""
    rec_fixture_test(pytester, "test_dies", "test_miss", UNRECORDED_CALL)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1, errors=0)
    output = result.stdout.str()
    assert "Re-record with `pytest --rec-mode=record`, or run pytest with --rec-mode=auto" in output
    assert "--record-missing" not in output


def test_agent_evaluator_miss_says_rec_mode(
    pytester: pytest.Pytester, travel_recording: Path
) -> None:
    result = _evaluate_edited_case(
        pytester, travel_recording, 0, "user_content", "A question that was never recorded"
    )
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "no recording matches" in output
    assert "run pytest with --rec-mode=auto" in output and "--record-missing" not in output


def test_an_unknown_rec_mode_is_a_usage_error_with_a_suggestion(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "no:randomly", "--rec-mode", "recrod")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--rec-mode: unknown mode 'recrod'. Did you mean \"record\"? Use one of: replay, "
            "record, auto, live*"
        ]
    )


def test_the_plugin_imports_none_of_rec_at_start_up() -> None:
    """Every pytest run where rec is installed loads the plugin: it must stay light."""
    import subprocess
    import sys

    code = (
        "import sys, rec.pytest_plugin\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('cassettes', 'recorder', 'replayer', 'pydantic')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def _evaluate_edited_case(
    pytester: pytest.Pytester, travel_recording: Path, case: int, field: str, text: str
) -> pytest.RunResult:
    """Run AgentEvaluator in a pytester project whose eval case ``case`` has ``text`` as the
    first invocation's ``field`` (a changed expectation, or a turn never recorded)."""
    evals = _project(pytester, travel_recording)
    data = json.loads((evals / "travel.test.json").read_text())
    data["eval_cases"][case]["conversation"][0][field]["parts"] = [{"text": text}]
    (evals / "travel.test.json").write_text(json.dumps(data))
    pytester.makepyfile(
        test_travel="""
        import asyncio
        from rec import AgentEvaluator

        def test_travel():
            asyncio.run(AgentEvaluator.evaluate("travel", "evals/travel.test.json", num_runs=1))
        """
    )
    # In a subprocess: an in-process run would see the rec modules an earlier in-process run
    # left (``rec.AgentEvaluator`` is cached on the package), beside fresh copies of the ones
    # pytester unloaded after it, two classes for one name.
    return pytester.runpytest_subprocess("-p", "no:randomly")


def _failure_section(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "= FAILURES =" in line)
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("====="))
    return lines[start + 1 : end]


def test_agent_evaluator_failure_is_short_with_the_reason_first(
    pytester: pytest.Pytester, travel_recording: Path
) -> None:
    """A failing AgentEvaluator test shows its reason first, in a few lines, not under ADK's
    captured tracebacks of the 404; its hint names the ignore option pytest has."""
    result = _evaluate_edited_case(
        pytester, travel_recording, 0, "user_content", "A question that was never recorded"
    )
    result.assert_outcomes(failed=1)
    section = _failure_section(result)
    assert len(section) < 40, "\n".join(section)
    assert "Following are all the test failures." in section[1]
    text = " ".join(" ".join(section).split())
    assert text.index("could not run") < text.index("contents[")  # the reason, then the diff
    assert "loosen matching with REC_IGNORE=PATH (pytest --rec-ignore PATH)" in text
    assert "Traceback" not in result.stdout.str()
