"""``rec stop`` after many exchanges: the finalisation it waits for, on a real journal.

    python bench/bench_stop.py [--exchanges 6000] [--repeat 3] [--cli-rounds 3]

A journal of ``--exchanges`` real agent exchanges (``bench/_gemini_traffic.py``: every
fourth conversation streamed, thought signatures, function calls) is written as the
recorder writes it (its journal writer, the header included), then finalised as ``rec
stop`` finalises it: the journal read back once, the cassette written, the EvalSet
extracted, redacted and written. Each round uses a fresh folder; medians of its wall
time and CPU time are reported.

Then, end to end, what a user waits for: ``rec start`` (the real command) records
``--exchanges`` requests from 10 clients (``bench_proxy_concurrency.py``'s load against
``_canned_server.py``), and ``rec stop`` is timed until the recorder has exited, with the
CPU it cost every process (the ``rec stop`` command, the recorder and its build worker).

Goals (issue 43): the CPU of ``rec stop`` after 6,000 exchanges <= 1.5 s in all processes
together, the journal validated once; its wall time <= 1 s (issue 23).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gemini_traffic  # noqa: E402
import bench_proxy_concurrency as proxy_bench  # noqa: E402
from _measure import cpu_seconds, rec_command, verdict  # noqa: E402

from cassettes._cassette import Exchange  # noqa: E402
from recorder._journal import Journal  # noqa: E402
from recorder._journal_header import journal_header  # noqa: E402
from recorder._recording import finalize_recording  # noqa: E402
from recorder._recording_state import RecordingPaths  # noqa: E402

GOAL_S = 1.0
"""``rec stop``'s wall time (issue 23)."""
CPU_GOAL_S = 1.5
"""``rec stop``'s CPU in all processes together (issue 43)."""


def _journal_text(exchanges: list[Exchange]) -> bytes:
    """The journal the recorder writes of ``exchanges``: through its own writer, with the
    header it opens a journal with."""
    with tempfile.TemporaryDirectory(prefix="rec-bench-journal-") as folder:
        journal = Journal[Exchange](Path(folder) / "bench.journal.jsonl", header=journal_header())
        for exchange in exchanges:
            journal.append_sync(exchange)
        journal.close()
        return journal.path.read_bytes()


def _one_round(journal_text: bytes) -> tuple[float, float]:
    """Wall and CPU seconds of one finalisation in this process."""
    with tempfile.TemporaryDirectory(prefix="rec-bench-stop-") as folder:
        paths = RecordingPaths(Path(folder), "bench")
        paths.journal.parent.mkdir(parents=True)
        paths.journal.write_bytes(journal_text)
        started, cpu = time.perf_counter(), time.process_time()
        result = finalize_recording(paths, upstream="https://generativelanguage.googleapis.com")
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert result.exchanges > 0 and result.evalset_path is not None
        return seconds, cpu


def _waited_cpu(pid: int) -> float:
    """Wait for child ``pid`` to exit; the CPU seconds it and the children it waited for
    spent in all (``wait4``'s usage)."""
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_utime + usage.ru_stime


def _stop_measured(
    out: Path, env: dict[str, str], recorder: subprocess.Popen[str]
) -> tuple[float, float]:
    """``rec stop`` until the recorder has exited: wall seconds, and CPU seconds of the
    command, the recorder and its build worker from the moment it was asked to stop."""
    before = cpu_seconds(recorder.pid)
    assert before is not None, "the bench reads CPU times from /proc (Linux)"
    start = time.perf_counter()
    stop = subprocess.Popen([*rec_command(), "stop", "--out", str(out)], env=env)
    stop_cpu = _waited_cpu(stop.pid)
    stop.returncode = 0
    recorder_cpu = _waited_cpu(recorder.pid)
    recorder.returncode = 0
    return time.perf_counter() - start, stop_cpu + recorder_cpu - before


def _through_rec_start(requests: list[tuple[str, bytes]]) -> tuple[float, float]:
    """``rec stop``'s wall and CPU time after ``rec start`` recorded ``requests``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env.update(NO_PROXY="127.0.0.1,localhost", PYTHONWARNINGS="ignore")
    here = Path(__file__).resolve().parent
    procs: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory(prefix="rec-bench-stop-cli-") as folder:
        try:
            upstream, upstream_url = proxy_bench._spawn(
                [sys.executable, str(here / "_canned_server.py")], env
            )
            procs.append(upstream)
            args = ["start", "--out", folder, "--upstream", upstream_url, "-q"]
            recorder, url = proxy_bench._spawn([*rec_command(), *args], env)
            procs.append(recorder)
            asyncio.run(proxy_bench._load(url, 10, requests))
            return _stop_measured(Path(folder), env, recorder)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.terminate()
                proc.wait(timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=6000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--cli-rounds", type=int, default=3, help="rounds through rec start / rec stop (0: none)"
    )
    args = parser.parse_args()
    journal_text = _journal_text(_gemini_traffic.exchanges(args.exchanges))
    _report(
        f"finalisation after {args.exchanges:,} exchanges",
        [_one_round(journal_text) for _ in range(args.repeat)],
        "CPU",
    )
    if args.cli_rounds:
        requests = proxy_bench._requests(args.exchanges)
        _report(
            f"rec stop after rec start recorded {args.exchanges:,} exchanges",
            [_through_rec_start(requests) for _ in range(args.cli_rounds)],
            "CPU in all processes",
        )


def _report(what: str, rounds: list[tuple[float, float]], cpu_is: str) -> None:
    """Each round's wall and CPU seconds, and their medians against the goals."""
    wall = statistics.median(r[0] for r in rounds)
    cpu = statistics.median(r[1] for r in rounds)
    listed = ", ".join(f"{w:.2f}/{c:.2f}" for w, c in rounds)
    print(f"{what}, wall/CPU s: {listed}")
    floor = "none (seconds)"
    verdict(f"{what}, wall", f"{wall:.2f} s", floor, f"<= {GOAL_S:g} s", wall <= GOAL_S)
    verdict(f"{what}, {cpu_is}", f"{cpu:.2f} s", floor, f"<= {CPU_GOAL_S:g} s", cpu <= CPU_GOAL_S)


if __name__ == "__main__":
    main()
