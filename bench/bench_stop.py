"""``rec stop`` after many exchanges: the finalisation it waits for, on a real journal.

    python bench/bench_stop.py [--exchanges 6000] [--repeat 3]

A journal of ``--exchanges`` real agent exchanges (``bench/_gemini_traffic.py``: every
fourth conversation streamed, thought signatures, function calls) is written as the
recorder writes it (its journal writer, the header included), then finalised as ``rec
stop`` finalises it: the journal read back, the cassette written, the EvalSet extracted,
redacted and written. Each round uses a fresh folder; the median is reported.

Goal (issue 23): <= 1 s after 6,000 exchanges.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gemini_traffic  # noqa: E402

from cassettes._cassette import Exchange  # noqa: E402
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


def _one_round(journal_text: bytes) -> float:
    with tempfile.TemporaryDirectory(prefix="rec-bench-stop-") as folder:
        paths = RecordingPaths(Path(folder), "bench")
        paths.journal.parent.mkdir(parents=True)
        paths.journal.write_bytes(journal_text)
        started = time.perf_counter()
        result = finalize_recording(paths, upstream="https://generativelanguage.googleapis.com")
        seconds = time.perf_counter() - started
        assert result.exchanges > 0 and result.evalset_path is not None
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=6000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    journal_text = _journal_text(_gemini_traffic.exchanges(args.exchanges))
    samples = [_one_round(journal_text) for _ in range(args.repeat)]
    median = statistics.median(samples)
    verdict = "met" if median <= GOAL_S else "NOT met"
    rounds = ", ".join(f"{s:.2f}" for s in samples)
    print(
        f"rec stop (finalisation) after {args.exchanges:,} exchanges: {median:.2f} s "
        f"median of {rounds} (goal <= {GOAL_S:.0f} s): {verdict}"
    )


if __name__ == "__main__":
    main()
