"""``rec stop`` after many exchanges: the finalisation it waits for, on a real journal.

    python bench/bench_stop.py [--exchanges 6000] [--repeat 3]

A journal of ``--exchanges`` real agent exchanges (``bench/_gemini_traffic.py``: every
fourth conversation streamed, thought signatures, function calls) is written as the
recorder writes it (its journal writer, the header included), then finalised as ``rec
stop`` finalises it: the journal read back, the cassette written, the EvalSet extracted,
redacted and written. ``rec stop`` has the recorder's build worker write the cassette
while the recorder extracts the EvalSet (``recorder._recording.SaveJob``): each round
times that and, alternating with it, finalisation in one process (the worker-less path:
a recovery, Windows, a journal outside ``SAVE_ELSEWHERE_BYTES``). Each round uses a fresh
folder; medians are reported.

Then, end to end, what a user waits for: ``rec start`` (the real command) records
``--exchanges`` requests from 10 clients (``bench_proxy_concurrency.py``'s load against
``_canned_server.py``), and ``rec stop`` is timed until the recorder has exited.

Goal (issue 23): <= 1 s after 6,000 exchanges.
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
from _measure import rec_command  # noqa: E402

from cassettes._cassette import Exchange  # noqa: E402
from cassettes._redaction import RedactionRules  # noqa: E402
from recorder._build_worker import BuildWorker  # noqa: E402
from recorder._journal import Journal  # noqa: E402
from recorder._journal_header import journal_header  # noqa: E402
from recorder._recording import finalize_recording  # noqa: E402
from recorder._recording_state import RecordingPaths  # noqa: E402

GOAL_S = 1.0


def _journal_text(exchanges: list[Exchange]) -> bytes:
    """The journal the recorder writes of ``exchanges``: through its own writer, with the
    header it opens a journal with."""
    with tempfile.TemporaryDirectory(prefix="rec-bench-journal-") as folder:
        journal = Journal[Exchange](Path(folder) / "bench.journal.jsonl", header=journal_header())
        for exchange in exchanges:
            journal.append_sync(exchange)
        journal.close()
        return journal.path.read_bytes()


def _one_round(journal_text: bytes, worker: BuildWorker | None) -> float:
    with tempfile.TemporaryDirectory(prefix="rec-bench-stop-") as folder:
        paths = RecordingPaths(Path(folder), "bench")
        paths.journal.parent.mkdir(parents=True)
        paths.journal.write_bytes(journal_text)
        written = worker.cassettes_written if worker is not None else 0
        started = time.perf_counter()
        result = finalize_recording(
            paths, upstream="https://generativelanguage.googleapis.com", elsewhere=worker
        )
        seconds = time.perf_counter() - started
        assert result.exchanges > 0 and result.evalset_path is not None
        if worker is not None:
            assert worker.cassettes_written == written + 1, "the worker wrote no cassette"
        return seconds


def _through_rec_start(requests: list[tuple[str, bytes]]) -> float:
    """``rec stop``'s wall time after ``rec start`` recorded ``requests``."""
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
            return proxy_bench._stop(Path(folder), env, recorder)
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
    worker = BuildWorker(RedactionRules())
    try:
        if not worker.wait_ready(timeout=120):
            raise SystemExit("the build worker did not start")
        alone: list[float] = []
        beside: list[float] = []
        for _ in range(args.repeat):
            alone.append(_one_round(journal_text, None))
            beside.append(_one_round(journal_text, worker))
    finally:
        worker.close()
    for what, samples in (("in one process", alone), ("with the build worker", beside)):
        rounds = ", ".join(f"{s:.2f}" for s in samples)
        print(f"finalisation {what}: {statistics.median(samples):.2f} s median of {rounds}")
    median = statistics.median(beside)
    verdict = "met" if median <= GOAL_S else "NOT met"
    print(
        f"rec stop (finalisation, with the build worker) after {args.exchanges:,} exchanges: "
        f"{median:.2f} s, {median / statistics.median(alone):.2f}x one process "
        f"(goal <= {GOAL_S:.0f} s): {verdict}"
    )
    if args.cli_rounds:
        requests = proxy_bench._requests(args.exchanges)
        cli = [_through_rec_start(requests) for _ in range(args.cli_rounds)]
        median = statistics.median(cli)
        rounds = ", ".join(f"{s:.2f}" for s in cli)
        print(
            f"rec stop through the CLI after rec start recorded {args.exchanges:,} exchanges: "
            f"{median:.2f} s median of {rounds} (goal <= {GOAL_S:.0f} s): "
            f"{'met' if median <= GOAL_S else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
