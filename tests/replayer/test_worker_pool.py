"""`rec replay --workers N`: cases run in worker processes, merged into a serial run's result.

The real travel agent (ADK, tools, a sub-agent) replays a four-case recording in
worker processes; what the workers send back must read exactly like the run in one process.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from cassettes._eval_result import EvalStatus
from rec.cli import main
from replayer._replay_run import replay_evalsets
from replayer._replay_target import ReplayOptions
from replayer._sharding import load_results
from replayer._worker_start import may_split
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel
from tests.rec_process import rec_argv, rec_environment

CITIES = ["Paris", "Rome", "Tokyo", "Berlin"]
CONVERSATIONS = [
    (f"What's the weather in {city}?", f"Find flights from {city} to Oslo on 2025-05-0{i + 1}")
    for i, city in enumerate(CITIES)
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("travel-workers")
    return record_travel(folder, CONVERSATIONS)


def _rec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _two_workers(
    capsys: pytest.CaptureFixture[str], agent: Path, evalset: Path, recorded: Path, *flags: str
) -> tuple[int, str]:
    """``rec replay AGENT EVALSET --recording CASSETTE --workers 2 FLAGS``, the cassette the
    one recorded beside ``recorded``; the exit status and what it printed."""
    cassette = recorded.parent / "travel.cassette.json"
    args = ["--recording", str(cassette), "--workers", "2", *flags]
    code, stdout, _ = _rec(capsys, "replay", str(agent), str(evalset), *args)
    return code, stdout


_RUN_SPECIFIC = re.compile(
    r"adk-[0-9a-f-]{36}|e-[0-9a-f-]{36}|\d{10}\.\d+|time=\"[^\"]*\"|timestamp=\"[^\"]*\""
    r'|(?<="duration_seconds": )[0-9.e-]+'
)
"""What differs between any two runs, serial or not: ADK's call and invocation ids, times
(the cases' wall times among them)."""


def _comparable(text: str) -> str:
    return _RUN_SPECIFIC.sub("0", text)


def _results(folder: Path) -> Any:
    [path] = folder.glob("*.evalset_result.json")
    return json.loads(_comparable(path.read_text()))


def test_workers_give_the_serial_report_junit_and_results(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out: dict[int, tuple[str, str, Any]] = {}
    for workers in (1, 2):
        junit, results = tmp_path / f"junit-{workers}.xml", tmp_path / f"results-{workers}"
        code, stdout, _ = _rec(
            capsys,
            "replay",
            str(TRAVEL_AGENT),
            str(recorded),
            "--workers",
            str(workers),
            "--num-runs",
            "2",
            "--junit",
            str(junit),
            "--results",
            str(results),
        )
        assert code == 0, stdout
        out[workers] = (stdout, _comparable(junit.read_text()), _results(results))
    assert out[2] == out[1]
    serial_report, _, serial_results = out[1]
    assert "4 passed, 0 failed" in serial_report
    ids = [case["eval_id"] for case in json.loads(recorded.read_text())["eval_cases"]]
    assert [c["eval_id"] for c in serial_results["eval_case_results"]] == ids
    # --num-runs 2: every run of a case went to one worker, which judged both takes.
    assert all(
        c["takes"]["takes"] == 2 and c["takes"]["passed"] == [1, 2]
        for c in serial_results["eval_case_results"]
    )


def test_workers_with_case_and_shard_run_exactly_the_chosen_cases(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [case["eval_id"] for case in json.loads(recorded.read_text())["eval_cases"]]
    picked = [ids[3], ids[0], ids[2]]
    args = ["replay", str(TRAVEL_AGENT), str(recorded), "--workers", "2"]
    code, stdout, _ = _rec(
        capsys, *args, *[f"--case={i}" for i in picked], "--results", str(tmp_path / "a")
    )
    assert code == 0, stdout
    [result] = load_results([tmp_path / "a"])
    assert [c.eval_id for c in result.eval_case_results] == [ids[0], ids[2], ids[3]]

    halves = []
    for index in (1, 2):
        out = tmp_path / f"shard-{index}"
        code, stdout, _ = _rec(capsys, *args, "--shard", f"{index}/2", "--results", str(out))
        assert code == 0, stdout
        halves.append([c.eval_id for c in load_results([out])[0].eval_case_results])
    assert sorted(halves[0] + halves[1]) == sorted(ids)
    assert not set(halves[0]) & set(halves[1])


def test_a_miss_in_a_worker_fails_its_case_with_the_diff(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evalset = json.loads(recorded.read_text())
    changed = evalset["eval_cases"][1]["conversation"][0]["user_content"]["parts"][0]
    changed["text"] = "What's the weather in Lima?"
    edited = tmp_path / "edited.evalset.json"
    edited.write_text(json.dumps(evalset))
    results = tmp_path / "r"
    code, stdout = _two_workers(capsys, TRAVEL_AGENT, edited, recorded, "--results", str(results))
    assert code == 1, stdout
    assert "3 passed, 1 failed" in stdout
    assert "Lima" in stdout  # the divergence names what the agent sent
    [result] = load_results([results])
    statuses = [c.final_eval_status for c in result.eval_case_results]
    assert statuses == [EvalStatus.PASSED, EvalStatus.FAILED, EvalStatus.PASSED, EvalStatus.PASSED]


def _crashing_agent(folder: Path) -> Path:
    """The travel agent, but the process dies (SIGKILL) when a case asks about Rome."""
    agent = folder / "crashy"
    agent.mkdir()
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text(
        textwrap.dedent(
            """
            import os
            import signal

            from tests.agents.travel import agent as travel


            def _die_on_rome(callback_context):
                parts = callback_context.user_content.parts or []
                if any("Rome" in (part.text or "") for part in parts):
                    os.kill(os.getpid(), signal.SIGKILL)
                return None


            travel.root_agent.before_agent_callback = _die_on_rome
            root_agent = travel.root_agent
            """
        )
    )
    return agent


def test_a_worker_that_dies_fails_its_cases_and_the_others_are_reported(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = _crashing_agent(tmp_path)
    junit = tmp_path / "junit.xml"
    code, stdout = _two_workers(capsys, agent, recorded, recorded, "--junit", str(junit))
    assert code == 1, stdout
    # Round-robin: worker 1 runs cases 1 and 3, worker 2 (killed on Rome) cases 2 and 4.
    assert "2 passed, 2 failed" in stdout, stdout
    failed = [line for line in stdout.splitlines() if line.startswith("FAILED")]
    assert [line.split()[1] for line in failed] == [
        "what_s_the_weather_in_rome",
        "what_s_the_weather_in_berlin",
    ], stdout
    # The reason, on the detail lines below each case line (a case line is cut to the
    # terminal's width where COLUMNS is set, the details wrap): compare words.
    words = " ".join(stdout.split())
    reason = "(worker 2 of 2) ended before reporting its cases: it was killed by SIGKILL"
    assert words.count(reason) >= 2, stdout
    junit = (tmp_path / "junit.xml").read_text()
    assert junit.count("<testcase") == 4 and junit.count("<failure") == 2


def test_an_agent_that_cannot_load_in_the_workers_is_the_same_one_line_error(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no_such_agent"
    errors = []
    for workers in ("1", "2"):
        code, stdout, stderr = _rec(
            capsys, "replay", str(missing), str(recorded), "--workers", workers
        )
        assert code == 2, stdout + stderr
        errors.append(stderr.strip())
    assert errors[0] == errors[1] and len(errors[0].splitlines()) == 1
    assert str(missing) in errors[0]


def test_record_missing_runs_in_one_process_and_says_so(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_api_key: str
) -> None:
    # One writer for the recording. Everything is recorded, so auto mode replays it all.
    for file in recorded.parent.glob("*.json"):
        shutil.copy(file, tmp_path / file.name)
    code, stdout, stderr = _rec(
        capsys,
        "replay",
        str(TRAVEL_AGENT),
        str(tmp_path / recorded.name),
        "--record-missing",
        "--workers",
        "2",
    )
    assert code == 0, stdout + stderr
    assert "writes one recording, so the cases run in one process" in stderr
    assert "4 passed, 0 failed" in stdout


def test_the_api_runs_in_this_process_unless_asked(recorded: Path) -> None:
    # ReplayOptions.workers defaults to 1: library callers (the pytest plugin, AgentEvaluator)
    # keep their in-process run; workers=2 gives the same verdicts.
    serial = replay_evalsets(str(TRAVEL_AGENT), [recorded])
    spread = replay_evalsets(str(TRAVEL_AGENT), [recorded], ReplayOptions(workers=2))
    assert ReplayOptions().workers == 1
    assert [r.result.passed for r in serial] == [r.result.passed for r in spread] == [True]
    assert [c.eval_id for c in serial[0].result.eval_case_results] == [
        c.eval_id for c in spread[0].result.eval_case_results
    ]
    assert serial[0].unused == spread[0].unused


def test_a_malformed_cassette_is_the_same_one_line_error_with_workers(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for file in recorded.parent.glob("*.json"):
        shutil.copy(file, tmp_path / file.name)
    cassette = tmp_path / "travel.cassette.json"
    data = json.loads(cassette.read_text())
    data["exchanges"][3]["response"]["status"] = 999
    cassette.write_text(json.dumps(data, indent=2))
    errors = []
    for workers in ("1", "2"):
        code, stdout, stderr = _rec(
            capsys, "replay", str(TRAVEL_AGENT), str(tmp_path / recorded.name), "--workers", workers
        )
        assert code == 2, stdout + stderr
        errors.append(stderr.strip())
    assert errors[0] == errors[1] and len(errors[0].splitlines()) == 1, errors
    assert f"{cassette}:exchanges[3].response.status" in errors[0]


_PARENT_PROBE = """
import json, sys
from rec.cli import main
try:
    status = main(json.loads(sys.argv[1]))
except SystemExit as exc:
    status = exc.code
print("\\n@@" + json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""


def test_the_parent_of_a_workers_run_imports_no_adk(recorded: Path) -> None:
    # The parent deals the cases out and merges: ADK and google-genai are the workers' (and
    # the fork server's) to import, so the parent's start-up does not hold the workers back.
    args = ["replay", str(TRAVEL_AGENT), str(recorded), "--workers", "2"]
    done = subprocess.run(
        [sys.executable, "-c", _PARENT_PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("@@")]
    assert lines, done.stderr[-3000:]
    result = json.loads(lines[-1][2:])
    assert result["status"] == 0, done.stdout[-3000:]
    assert "4 passed" in done.stdout
    heavy = [m for m in result["modules"] if m.startswith(("google.adk", "google.genai"))]
    assert heavy == []


def test_the_fork_servers_preload_starts_no_thread() -> None:
    # Forking is safe only from a process with one thread: the modules the fork server
    # imports must start none at import (and must all import).
    probe = """
import json, sys, threading
from replayer._worker_start import PRELOAD
for name in PRELOAD:
    __import__(name)
missing = [name for name in PRELOAD if name not in sys.modules]
print(json.dumps({"threads": threading.active_count(), "missing": missing}))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"threads": 1, "missing": []}


def _group(pgid: int) -> list[str]:
    """The processes still in process group ``pgid`` (their command lines)."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it exited while we looked
            continue
        if int(fields[2]) == pgid:
            left.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode())
    return left


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("case", [None, "first"], ids=["split", "one-case"])
def test_rec_replay_leaves_no_process_in_its_group(recorded: Path, case: str | None) -> None:
    # The workers' fork server starts early (it imports ADK beside the parent); it must be
    # gone when `rec replay` returns, however short the run.
    args = ["replay", str(TRAVEL_AGENT), str(recorded), "--workers", "2"]
    if case is not None:
        evalset = json.loads(recorded.read_text())
        args += ["--case", evalset["eval_cases"][0]["eval_id"]]
    process = subprocess.Popen(
        rec_argv(*args),
        env=rec_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, led by its pid
    )
    out, _ = process.communicate(timeout=600)
    assert process.returncode == 0, out.decode()[-3000:]
    assert _group(process.pid) == []


def test_a_run_of_one_case_starts_no_fork_server(tmp_path: Path) -> None:
    one = {"eval_set_id": "one", "eval_cases": [{"eval_id": "a"}]}
    (tmp_path / "one.evalset.json").write_text(json.dumps(one))
    assert not may_split([tmp_path])
    assert not may_split([tmp_path / "one.evalset.json"])
    (tmp_path / "two.test.json").write_text(json.dumps({"eval_cases": [{"eval_id": "b"}]}))
    assert may_split([tmp_path])
    assert not may_split([tmp_path], cases=("a",))
    assert may_split([tmp_path / "missing.evalset.json"])  # the run itself says what is wrong
