"""Never a silent pass: every run counts every case its files hold, and no case is not a pass.

Driven as a user drives rec: ``rec replay`` and ``rec check`` through the CLI, and pytest in
a subprocess, over a copy of the home assistant example (two eval sets of one case each, in
one folder) and its committed recordings.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest

from rec.cli import main
from replayer._sharding import Shard

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LEAVING = "i_m_leaving_for_the_weekend_lock_the"
EVENING = "good_evening_what_devices_do_i_have"


@pytest.fixture
def home(tmp_path: Path, loopback_only: object) -> Path:
    """A copy of the home assistant agent; its eval sets are in ``recordings/``."""
    ignore = shutil.ignore_patterns("__pycache__", ".rec")
    shutil.copytree(EXAMPLES / "home_assistant", tmp_path / "home_assistant", ignore=ignore)
    return tmp_path / "home_assistant"


def _replay(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["replay", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _ran(results: Path) -> list[tuple[str, str]]:
    """(eval set id, eval id) of every case in the EvalSetResults ``--results`` wrote."""
    found = []
    for path in results.glob("*.evalset_result.json"):
        data = json.loads(path.read_text())
        found += [(data["eval_set_id"], c["eval_id"]) for c in data["eval_case_results"]]
    return sorted(found)


def test_case_finds_its_eval_set_among_several_in_the_folder(
    home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _replay(
        capsys, home, home / "recordings", "--case", LEAVING, "--workers", "1",
        "--results", tmp_path / "r",
    )  # fmt: skip
    assert code == 0, out + err
    assert _ran(tmp_path / "r") == [("leaving_home", LEAVING)]
    code, out, err = _replay(capsys, home, home / "recordings", "--case", "nope")
    assert code == 2 and "no case 'nope'" in err and LEAVING in err, err


def test_adks_file_selector_runs_the_named_cases(
    home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    leaving = home / "recordings" / "leaving_home.evalset.json"
    evening = home / "recordings" / "evening_routine.evalset.json"
    code, out, err = _replay(
        capsys, home, f"{leaving}:{LEAVING}", evening, "--workers", "1",
        "--results", tmp_path / "r",
    )  # fmt: skip
    assert code == 0, out + err
    assert _ran(tmp_path / "r") == [("evening_routine", EVENING), ("leaving_home", LEAVING)]
    code, out, err = _replay(capsys, home, f"{leaving}:{LEAVING},nope")
    assert code == 2, out + err
    assert f"{leaving}:{LEAVING}:nope: no case 'nope'" in err, err


def test_an_eval_set_without_cases_fails_unless_allowed(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = home / "recordings" / "empty.evalset.json"
    empty.write_text(json.dumps({"eval_set_id": "empty", "eval_cases": []}))
    shutil.copy(
        home / "recordings" / "leaving_home.cassette.json",
        home / "recordings" / "empty.cassette.json",
    )
    code, out, err = _replay(capsys, home, empty)
    assert code == 2, out + err
    [line] = err.strip().splitlines()
    assert f"{empty}:eval_cases: this eval set holds no eval cases" in line
    assert "--allow-empty" in line
    code, out, err = _replay(capsys, home, home / "recordings", "--workers", "1")
    assert code == 2 and "empty.evalset.json:eval_cases" in err, out + err
    code, out, err = _replay(capsys, home, empty, "--allow-empty")
    assert code == 0, out + err
    assert "no case of the 1 eval set ran" in err and "not a failure" in err, err


def _empty_shard(ids: list[tuple[str, str]]) -> Shard:
    """A shard of the fewest shards that none of ``ids`` hashes into."""
    for total in range(2, 20):
        for index in range(1, total + 1):
            shard = Shard(index, total)
            if not any(shard.contains(*case) for case in ids):
                return shard
    raise AssertionError("every shard holds a case")


def test_a_shard_no_case_hashed_into_fails_in_one_line_unless_allowed(
    home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shard = _empty_shard([("leaving_home", LEAVING), ("evening_routine", EVENING)])
    code, out, err = _replay(capsys, home, home / "recordings", "--shard", shard)
    assert code == 1, out + err
    [line] = err.strip().splitlines()
    assert f"shard {shard} holds none of the cases of the 2 eval sets" in line, line
    assert "--allow-empty" in line
    results = tmp_path / "results"
    code, out, err = _replay(
        capsys, home, home / "recordings", "--shard", shard, "--allow-empty", "--results", results
    )
    assert code == 0, out + err
    assert f"shard {shard} holds none" in err and "not a failure" in err, err
    # The matrix's last job sees every shard's results: none held a case.
    assert main(["merge", str(results)]) == 1
    assert "the results hold no case" in capsys.readouterr().err
    assert main(["merge", str(results), "--allow-empty"]) == 0


def _every_case(folder: Path) -> list[tuple[str, str]]:
    """(eval set id, eval id) of every case of every eval set under ``folder``."""
    return sorted(
        (data["eval_set_id"], case["eval_id"])
        for path in folder.rglob("*.evalset.json")
        for data in [json.loads(path.read_text())]
        for case in data["eval_cases"]
    )


@pytest.mark.parametrize("workers", ["1", "2"])
def test_every_run_reports_every_case_its_files_hold(
    home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, workers: str
) -> None:
    """One run, and the shards of a run together, report each case of the folder once (the
    user simulator's scenario case in ``simulated/`` too)."""
    every = _every_case(home)
    assert len(every) == 3
    code, out, err = _replay(
        capsys, home, home, "--workers", workers, "--results", tmp_path / "all"
    )
    assert code == 0, out + err
    assert _ran(tmp_path / "all") == every
    for total in (2, 3):
        for index in range(1, total + 1):
            code, out, err = _replay(
                capsys, home, home, "--workers", workers, "--allow-empty",
                "--shard", f"{index}/{total}", "--results", tmp_path / f"of{total}" / str(index),
            )  # fmt: skip
            assert code == 0, out + err
        found = [c for i in range(1, total + 1) for c in _ran(tmp_path / f"of{total}" / str(i))]
        assert sorted(found) == every, total


def test_agent_evaluator_reports_every_case_its_files_hold(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from replayer._agent_evaluator import AgentEvaluator

    printed = []
    for file in sorted(home.rglob("*.evalset.json")):
        asyncio.run(AgentEvaluator.evaluate(str(home), str(file), num_runs=1))
        out = capsys.readouterr().out
        printed += re.findall(r"^PASSED  (\S+)", out, re.M)
    assert sorted(printed) == sorted(eval_id for _, eval_id in _every_case(home))


def _pytest_project(pytester: pytest.Pytester, home: Path) -> Path:
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\nrec_agent = home_assistant\n"
    )
    return Path(shutil.copytree(home, pytester.path / "home_assistant"))


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_pytest_runs_every_case_its_files_hold(
    home: Path, pytester: pytest.Pytester, xdist: tuple[str, ...]
) -> None:
    """A user simulator's case (``conversation_scenario``) is an item like any other."""
    every = _every_case(_pytest_project(pytester, home))
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-rA", *xdist, "home_assistant")
    result.assert_outcomes(passed=len(every))
    passed = re.findall(r"^PASSED \S+\.evalset\.json::(\S+)$", result.stdout.str(), re.M)
    assert sorted(passed) == sorted(eval_id for _, eval_id in every)


def test_pytest_collects_a_folder_of_user_simulator_eval_sets(
    home: Path, pytester: pytest.Pytester
) -> None:
    _pytest_project(pytester, home)
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-v", "home_assistant/simulated")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*simulated_evening.evalset.json::simulated_evening PASSED*"])


# -- rec check ---------------------------------------------------------------------------------


def _case(eval_id: str) -> dict[str, object]:
    text = {"role": "user", "parts": [{"text": "hi"}]}
    return {"eval_id": eval_id, "conversation": [{"invocation_id": "i", "user_content": text}]}


def _evalset(path: Path, set_id: str, *eval_ids: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    cases = [_case(eval_id) for eval_id in eval_ids]
    path.write_text(json.dumps({"eval_set_id": set_id, "eval_cases": cases}))
    return path


def _check(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    code = main(["check", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_check_fails_an_eval_set_without_cases_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = _evalset(tmp_path / "empty.evalset.json", "empty")
    code, out = _check(capsys, empty)
    assert code == 1, out
    assert f"{empty}:eval_cases: this eval set holds no eval cases" in out, out
    code, out = _check(capsys, empty, "--allow-empty")
    assert code == 0, out
    assert "note: this eval set holds no eval cases" in out, out


def test_check_passes_a_repository_of_templates_sharing_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """agent-starter-pack's layout: each template's eval set is `basic_eval` with a case
    `greeting`; different agents replay them, never one run."""
    for template in ("adk_base", "agentic_rag"):
        evals = tmp_path / "agents" / template / "tests" / "eval" / "evalsets"
        _evalset(evals / "basic.evalset.json", "basic_eval", "greeting")
    code, out = _check(capsys, tmp_path)
    assert code == 0, out
    assert "rec check: 2 file(s), 0 problems" in out
    assert "note:" in out and "adk_base" in out, out  # said, not failed
    # In one folder (one `rec replay DIR` run) the two would be taken for one case.
    _evalset(
        tmp_path / "agents" / "adk_base" / "tests" / "eval" / "evalsets" / "more.evalset.json",
        "basic_eval",
        "greeting",
    )
    code, out = _check(capsys, tmp_path)
    assert code == 1, out
    assert re.search(r"more\.evalset\.json:eval_cases\[0\]\.eval_id: eval set 'basic_eval'", out), (
        out
    )


# -- pytest ------------------------------------------------------------------------------------


def test_pytest_fails_an_eval_set_without_cases_unless_allowed(
    home: Path, pytester: pytest.Pytester
) -> None:
    _evalset(_pytest_project(pytester, home) / "recordings" / "empty.evalset.json", "empty")
    result = pytester.runpytest_subprocess("-p", "no:randomly", "home_assistant/recordings")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # as any file pytest cannot collect
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*empty.evalset.json:eval_cases: this eval set holds no eval cases*--rec-allow-empty*"]
    )
    allowed = pytester.runpytest_subprocess(
        "-p", "no:randomly", "home_assistant/recordings", "--rec-allow-empty"
    )
    allowed.assert_outcomes(passed=2)
    assert allowed.ret == 0
