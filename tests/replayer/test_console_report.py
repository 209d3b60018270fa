"""The console report of `rec replay` / `rec score`: order, misses once, wrapping, one line a case.

The replays are real: the bundled examples' ADK agents, run by `rec replay` through click
against their committed cassettes, at a fixed terminal width of 80 columns.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cassettes._eval_result import EvalStatus
from cassettes._genai_types import FunctionCall
from rec.cli import cli
from replayer._reports.layout import call_text, fit_line, wrap_call, wrap_words

ROOT = Path(__file__).resolve().parents[2]
BEFORE_FIX = "examples/production_bug/before_fix/climate_agent"
AFTER_FIX = "examples/production_bug/after_fix/climate_agent"
BUG_EVALS = "examples/production_bug/evals"


def _replay(*args: str, columns: int | None = 80) -> Result:
    """``rec replay`` at a terminal ``columns`` wide (None: a pipe, no terminal)."""
    return CliRunner().invoke(
        cli,
        ["replay", *args],
        env={"COLUMNS": None if columns is None else str(columns)},
        catch_exceptions=False,
    )


@pytest.fixture(autouse=True)
def _at_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module")
def before_fix() -> Result:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        return _replay(BEFORE_FIX, BUG_EVALS)


def test_header_comes_before_its_cases_and_their_details(before_fix: Result) -> None:
    assert before_fix.exit_code == 1, before_fix.output
    lines = before_fix.output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Eval set thermostat_bug"))
    case = next(i for i, line in enumerate(lines) if line.startswith("FAILED  7f3c2a9e_prod"))
    detail = next(i for i, line in enumerate(lines) if "below the threshold" in line)
    table = next(i for i, line in enumerate(lines) if "celsius=71.6" in line)
    counts = next(i for i, line in enumerate(lines) if line.startswith("0 passed, 1 failed"))
    assert header < case < detail < table < counts


def test_nothing_wraps_inside_a_word_at_80_columns(before_fix: Result) -> None:
    lines = before_fix.output.splitlines()
    # Every tool-call argument, identifier and path is whole on one line.
    for token in (
        "get_room_temperature(",
        "room='living_room'",
        "set_thermostat(",
        "celsius=71.6)",
        "celsius=22)",
        "7f3c2a9e_prod",
        "tool_trajectory_avg_score",
        "examples/production_bug/evals/thermostat_bug.cassette.json",
    ):
        assert any(token in line for line in lines), f"{token!r} is split across lines"
    # A line longer than 80 columns may only be one unbreakable word.
    for line in lines:
        assert len(line) <= 80 or " " not in line.strip(), line
    # No line ends in the middle of an identifier continued on the next one.
    for first, second in zip(lines, lines[1:], strict=False):
        cells_a = [c.strip() for c in first.split("|")]
        cells_b = [c.strip() for c in second.split("|")]
        for a, b in zip(cells_a, cells_b, strict=False):
            if a and b:
                assert not (re.search(r"[A-Za-z0-9_]$", a) and re.match(r"[a-z0-9_]+[=(']", b)), (
                    first,
                    second,
                )


def test_a_miss_is_printed_once_with_its_place() -> None:
    result = CliRunner().invoke(
        cli,
        ["replay", AFTER_FIX, "examples/home_assistant/recordings/evening_routine.evalset.json"],
        env={"COLUMNS": "80"},
    )
    assert result.exit_code == 1
    everything = result.output  # stdout and stderr, as a terminal shows them
    assert everything.count("systemInstruction changed") == 1, everything
    assert everything.count("no recording matches") == 1
    said = " ".join(result.output.split())
    # The eval set is home_assistant's, replayed against the climate agent: that is named
    # first, then the place the run stopped.
    assert "the case was recorded for app 'home_assistant'" in said
    assert said.count("failed at turn 1, model call 1:") == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("Eval set evening_routine")
    assert lines[2].startswith("FAILED  good_evening_what_devices_do_i_have could not run")
    # The diff under the reason: one line per difference, each starting its own line.
    assert sum(line.lstrip().startswith("tools[0].functionDeclarations") for line in lines) == 5
    # A stopped case leaves the rest of its recording unplayed: that is not worth a note.
    assert "never replayed" not in everything


def test_unused_recording_note_names_the_cassette_once(before_fix: Result) -> None:
    note = "examples/production_bug/evals/thermostat_bug.cassette.json: 5 recorded model"
    assert before_fix.output.count("never replayed") == 1
    assert note in " ".join(before_fix.output.split())
    assert "took another path" in before_fix.output


def test_passing_run_says_nothing_about_unused_recordings() -> None:
    result = _replay(AFTER_FIX, BUG_EVALS)
    assert result.exit_code == 0, result.output
    assert "never replayed" not in result.output
    assert "not used" not in result.output


def test_quickstart_prints_one_line_per_case_at_80_columns() -> None:
    result = _replay("examples/home_assistant", "examples/home_assistant/recordings")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    case_lines = [i for i, line in enumerate(lines) if line.startswith("PASSED  ")]
    assert len(case_lines) == 2
    for index in case_lines:
        assert len(lines[index]) <= 80
        # the next line heads the case's recorded figures: nothing of the case spilled over
        assert lines[index + 1].split() == [
            "turn", "calls", "tools", "prompt", "cand", "thought", "cached", "1st", "chunk",
            "latency", "cost",
        ], lines[index + 1]  # fmt: skip
        end = next(i for i in range(index, len(lines)) if "passed," in lines[i])
        table = lines[index + 1 : end]
        assert table[-1].split()[0] == "all" and all(len(line) <= 80 for line in table)
    assert lines[case_lines[0]].startswith(
        "PASSED  good_evening_what_devices_do_i_have tool_trajectory_avg_score=1.000"
    )


@pytest.mark.parametrize("columns", [200, None], ids=["wide-terminal", "pipe"])
def test_every_score_shows_where_there_is_room(columns: int | None) -> None:
    result = _replay(
        "examples/home_assistant", "examples/home_assistant/recordings", columns=columns
    )
    line = next(x for x in result.output.splitlines() if "good_evening" in x)
    judged = (
        "tool_trajectory_avg_score=1.000, response_match_score=1.000, "
        "thermostat_in_comfort_range=1.000"
    )
    # Then ADK's informational efficiency metrics, last: what a narrow line cuts first.
    assert f"{judged}, tool_call_count_v1=" in line, line
    if columns is None:  # a pipe: nothing is cut
        assert line.endswith("invocation_duration_v1=-"), line


# -- the layout functions -------------------------------------------------------------------


def _call(name: str, **args: object) -> FunctionCall:
    return FunctionCall(name=name, args=args)


@pytest.mark.parametrize(
    ("call", "width", "expected"),
    [
        pytest.param(_call("f", a=1), 80, ["f(a=1)"], id="fits"),
        pytest.param(
            _call("set_thermostat", room="living_room", celsius=22),
            24,
            ["set_thermostat(", "  room='living_room',", "  celsius=22)"],
            id="between-arguments",
        ),
        pytest.param(
            _call("set_thermostat", room="living_room", celsius=22),
            36,
            ["set_thermostat(room='living_room',", "  celsius=22)"],
            id="packs-arguments",
        ),
        pytest.param(
            _call("say", text="a long sentence with many words in it"),
            20,
            ["say(", "  text='a long", "    sentence with", "    many words in", "    it')"],
            id="long-value-at-spaces",
        ),
        pytest.param(_call("no_args_at_all_here"), 5, ["no_args_at_all_here()"], id="no-args"),
    ],
)
def test_wrap_call(call: FunctionCall, width: int, expected: list[str]) -> None:
    assert wrap_call(call, width) == expected
    # Joined back, the lines are the call as written on one line.
    assert " ".join(line.strip() for line in expected).replace("( ", "(") == call_text(call)


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        pytest.param("a b c", 3, ["a b", "c"], id="words"),
        pytest.param(
            "see path/to/a_very_long_file.json now",
            10,
            ["see", "path/to/a_very_long_file.json", "now"],
            id="long-word-whole",
        ),
        pytest.param("x-y-z abc", 4, ["x-y-z", "abc"], id="no-hyphen-break"),
        pytest.param("one\ntwo", 80, ["one", "two"], id="paragraphs"),
    ],
)
def test_wrap_words(text: str, width: int, expected: list[str]) -> None:
    assert wrap_words(text, width) == expected


@pytest.mark.parametrize(
    ("items", "width", "expected"),
    [
        pytest.param(["a=1", "b=2"], 20, "X a=1, b=2", id="all-fit"),
        pytest.param(["a=1", "b=2", "c=3"], 12, "X a=1, ...", id="cut-at-item"),
        pytest.param(["long=1"], 4, "X ...", id="none-fit"),
    ],
)
def test_fit_line(items: list[str], width: int, expected: str) -> None:
    assert fit_line("X ", items, width) == expected
    assert len(expected) <= max(width, len("X ...")) or expected.endswith("...")


def test_status_words_cover_every_status() -> None:
    from replayer._reports.console import STATUS_WORDS

    assert set(STATUS_WORDS) == set(EvalStatus)


def test_replay_leaves_adk_logging_as_it_found_it() -> None:
    """`rec replay` keeps ADK's log lines off the terminal only while it runs, and never
    by raising the logger's level: judge metrics read ADK's warnings for their reasons."""
    import logging

    adk = logging.getLogger("google_adk")
    before = (adk.level, adk.propagate, list(adk.handlers))
    result = _replay("examples/home_assistant", "examples/home_assistant/recordings")
    assert result.exit_code == 0, result.output
    assert (adk.level, adk.propagate, list(adk.handlers)) == before
