"""pytest collects eval sets as items, one per eval case, replayed with rec.

Real pytest subprocesses over copies of the bundled examples and their committed cassettes:
collection and node ids, ``-k``, ``--lf``, JUnit per case, ``-n 2``, pytest-split, the
``--rec-NAME`` twins of ``rec replay``'s options, hints that name them, short failures.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rec._replay_flags import REPLAY_FLAGS

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EVENING = "home_assistant/recordings/evening_routine.evalset.json"
LEAVING = "home_assistant/recordings/leaving_home.evalset.json"
SIMULATED = "home_assistant/simulated/simulated_evening.evalset.json"
EVENING_CASE = f"{EVENING}::good_evening_what_devices_do_i_have"
LEAVING_CASE = f"{LEAVING}::i_m_leaving_for_the_weekend_lock_the"
SIMULATED_CASE = f"{SIMULATED}::simulated_evening"
"""The user simulator's case (``conversation_scenario``): an item like the others."""
BUG_CASE = "production_bug/evals/thermostat_bug.evalset.json::7f3c2a9e_prod"


def _project(pytester: pytest.Pytester, *ini: str) -> Path:
    """The home assistant and the production bug (its buggy agent) with their recordings,
    and an ini file with ``ini`` lines; pytest-asyncio's start-up warning silenced as the
    README says."""
    ignore = shutil.ignore_patterns("__pycache__", ".rec")
    shutil.copytree(EXAMPLES / "home_assistant", pytester.path / "home_assistant", ignore=ignore)
    bug = pytester.path / "production_bug"
    shutil.copytree(EXAMPLES / "production_bug" / "evals", bug / "evals", ignore=ignore)
    shutil.copytree(EXAMPLES / "production_bug" / "before_fix", bug / "before_fix", ignore=ignore)
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n" + "\n".join(ini) + "\n"
    )
    return pytester.path


_AGENTS = (
    "rec_agents =\n"
    "    home_assistant = home_assistant\n"
    "    production_bug = production_bug/before_fix/climate_agent"
)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:randomly", *args)


def _passed(result: pytest.RunResult) -> set[str]:
    return set(re.findall(r"^(\S+::\S+) PASSED", result.stdout.str(), re.MULTILINE))


def _failed(result: pytest.RunResult) -> set[str]:
    """The cases the short test summary names as failed."""
    return set(re.findall(r"^FAILED (\S+::\S+)", result.stdout.str(), re.MULTILINE))


def test_eval_cases_are_items_only_where_an_agent_is_configured(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester)
    unconfigured = _run(pytester, "--collect-only", "-q")
    assert ".evalset.json" not in unconfigured.stdout.str()  # opt-in: nothing collected
    pytester.makeini(f"[pytest]\n{_AGENTS}\n")
    listed = _run(pytester, "--collect-only", "-q")
    assert {EVENING_CASE, LEAVING_CASE, SIMULATED_CASE, BUG_CASE} <= set(listed.stdout.lines)


def test_k_junit_and_lf_work_per_case(pytester: pytest.Pytester) -> None:
    _project(pytester, _AGENTS)
    first = _run(pytester, "--junitxml", "out/cases.xml", "-v")
    first.assert_outcomes(passed=3, failed=1)
    cases = ET.parse(pytester.path / "out" / "cases.xml").getroot().iter("testcase")
    by_name = {case.get("name"): case for case in cases}
    assert set(by_name) == {
        "good_evening_what_devices_do_i_have",
        "i_m_leaving_for_the_weekend_lock_the",
        "simulated_evening",
        "7f3c2a9e_prod",
    }
    assert all(float(case.get("time") or -1) > 0 for case in by_name.values())
    assert by_name["7f3c2a9e_prod"].find("failure") is not None
    again = _run(pytester, "--lf", "-v")  # only the case that failed
    again.assert_outcomes(failed=1)
    one = _run(pytester, "-k", "leaving", "-v")
    one.assert_outcomes(passed=1)
    assert _passed(one) == {LEAVING_CASE}


def test_xdist_and_pytest_split_cover_every_case(pytester: pytest.Pytester) -> None:
    _project(pytester, "rec_agent = home_assistant")
    parallel = _run(pytester, "-n", "2", "-v", "home_assistant")
    parallel.assert_outcomes(passed=3)
    groups = [
        _run(pytester, "--splits", "2", "--group", str(group), "-v", "home_assistant")
        for group in (1, 2)
    ]
    shares = [_passed(group) for group in groups]
    assert all(share for share in shares) and not shares[0] & shares[1], shares
    assert shares[0] | shares[1] == {EVENING_CASE, LEAVING_CASE, SIMULATED_CASE}


def _failure_section(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "= FAILURES =" in line)
    end = next(i for i, line in enumerate(lines) if i > start and re.match(r"^=+ .* =+$", line))
    return lines[start + 1 : end]


def test_a_failing_case_shows_its_reason_first_in_under_40_lines(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester, _AGENTS)
    result = _run(pytester, "production_bug")
    result.assert_outcomes(failed=1)
    section = _failure_section(result)
    assert len(section) < 40, "\n".join(section)
    assert section[1].startswith("FAILED  7f3c2a9e_prod tool_trajectory_avg_score=0.500")
    assert "celsius=71.6" in "\n".join(section)  # the diff: expected against actual
    assert "Traceback" not in result.stdout.str()


def test_a_miss_says_rec_ignore_and_rec_ignore_loosens_matching(
    pytester: pytest.Pytester,
) -> None:
    project = _project(pytester, "rec_agent = home_assistant")
    agent = project / "home_assistant" / "agent.py"
    agent.write_text(agent.read_text().replace("Answer briefly.", "Answer very briefly."))
    missed = _run(pytester, "-k", "leaving", "--rec-html", "out/miss.html", "home_assistant")
    missed.assert_outcomes(failed=1)
    section = _failure_section(missed)
    assert len(section) < 40, "\n".join(section)
    text = " ".join(" ".join(section).split())
    assert section[1].startswith("FAILED  i_m_leaving_for_the_weekend_lock_the could not run")
    assert "(here: --rec-ignore systemInstruction)" in text
    assert "run pytest with --rec-mode=auto" in text and "--record-missing" not in text
    assert "Traceback" not in missed.stdout.str()  # ADK's logged 404 is not repeated
    page = (project / "out" / "miss.html").read_text(encoding="utf-8")
    assert "<code>--rec-ignore systemInstruction</code>" in page  # the HTML says the same
    loosened = _run(pytester, "-k", "leaving", "--rec-ignore", "systemInstruction")
    loosened.assert_outcomes(passed=1)
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "rec_agent = home_assistant\nrec_ignore = systemInstruction\n"
    )
    _run(pytester, "-k", "leaving").assert_outcomes(passed=1)  # the ini twin


def test_rec_html_reports_the_collected_cases_under_xdist(pytester: pytest.Pytester) -> None:
    _project(pytester, _AGENTS)
    result = _run(pytester, "-n", "2", "--rec-html", "out/report.html")
    result.assert_outcomes(passed=3, failed=1)
    page = (pytester.path / "out" / "report.html").read_text(encoding="utf-8")
    assert "3 passed, 1 failed, 4 case(s) in 4 eval set(s)" in page
    assert sorted(p.name for p in (pytester.path / "out").iterdir()) == ["report.html"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--rec-streaming", "sometimes"],
            "--rec-streaming: unknown streaming mode 'sometimes'. Use one of: sse, none",
        ),
        (["--rec-ignore", "contents[x"], "--rec-ignore: malformed JSON path 'contents[x'"),
        (["--rec-num-runs", "0"], "--rec-num-runs: '0' is not a whole number of at least 1"),
        (
            ["--rec-in-process", "--rec-mode", "live"],
            "--rec-in-process: --rec-in-process replays from the recordings",
        ),
    ],
)
def test_a_bad_option_is_one_line_and_a_usage_error(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    _project(pytester, "rec_agent = home_assistant")
    result = _run(pytester, "--collect-only", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and message in errors[0], result.stderr.str()


def test_a_bad_rec_agents_line_names_the_file_and_the_fix(pytester: pytest.Pytester) -> None:
    _project(pytester, "rec_agents =\n    home_assistant")
    result = _run(pytester, "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*tox.ini: rec_agents: 'home_assistant' is not `PATH = AGENT`*"])


def test_every_twin_is_a_rec_replay_option_with_the_same_help() -> None:
    """The --rec-NAME options and rec replay's are built from one declaration."""
    from rec._replay import replay_command

    options = {p.opts[0]: p for p in replay_command.params if p.opts[0].startswith("--")}
    for spec in REPLAY_FLAGS:
        assert options[f"--{spec.name}"].help == spec.text("--"), spec.name


def test_the_collected_mode_record_is_refused_with_the_command_that_records(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester, "rec_agent = home_assistant")
    result = _run(pytester, "--rec-mode", "record", "-k", "leaving", "home_assistant")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*--rec-mode record writes an eval set's recording anew*"])
    cassette = json.loads(
        (pytester.path / "home_assistant/recordings/leaving_home.cassette.json").read_text()
    )
    assert cassette["exchanges"], "the recording was left as it was"


def test_the_spelt_out_choices_are_the_enums() -> None:
    from cassettes._record_mode import RecordMode
    from rec._replay_flags import MODES, STREAMING
    from replayer._streaming_mode import STREAMING_CHOICES

    assert MODES == tuple(mode.value for mode in RecordMode)
    assert STREAMING == tuple(STREAMING_CHOICES)


def test_rec_budget_and_baseline_gate_each_collected_case(pytester: pytest.Pytester) -> None:
    """--rec-budget holds each case to its limits (the user-simulated one too), growth
    measured from --rec-baseline; a case the baseline does not hold fails, never passes."""
    _project(pytester, "rec_agent = home_assistant")
    (pytester.path / "budget.json").write_text(json.dumps({"case": {"model_calls": 9}}))
    result = _run(pytester, "--rec-budget", "budget.json", "home_assistant")
    result.assert_outcomes(passed=1, failed=2)
    assert _failed(result) == {EVENING_CASE, SIMULATED_CASE}
    over = "budget: 10 model calls (budget 9 model calls)"
    # In each case's failure section (and again in the short summary, where it fits).
    assert result.stdout.str().count(over) >= 2

    (pytester.path / "growth.json").write_text(json.dumps({"case": {"model_calls": "+0"}}))
    result = _run(pytester, "--rec-budget", "growth.json", "home_assistant")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*a growth limit ('+N%') needs a baseline*"])

    recordings = str(pytester.path / "home_assistant" / "recordings")
    result = _run(
        pytester, "--rec-budget", "growth.json", "--rec-baseline", recordings, "home_assistant"
    )
    # The simulated case's recording is not in that baseline: nothing to measure growth from.
    result.assert_outcomes(passed=2, failed=1)
    assert _failed(result) == {SIMULATED_CASE}
    result.stdout.fnmatch_lines(
        ["*budget: model_calls: no baseline figure to compare (budget +0)*"]
    )
