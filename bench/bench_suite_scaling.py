"""``rec replay`` of growing suites: serial, ``--parallel 4``, ``--workers 2``, ``--shard`` halves.

    python bench/bench_suite_scaling.py [--sizes 10,50,200] [--repeat 3]

Records the travel agent (tests/agents/travel) for the largest size once (not timed),
then runs the real command, ``rec replay AGENT EVALSET --recording CASSETTE``, as a fresh
process per run (start-up included, as in CI), interleaved over ``--repeat`` rounds:

- every size: serial (``--parallel 1``, and ``--workers 1`` where the default is one
  worker process per core) and ``--parallel 4`` (asyncio concurrency in one process);
- the largest size: ``--workers 2`` (worker processes) and ``--shard 1/2`` + ``--shard 2/2``
  started at once (wall time until both exit), when this rec has those flags.

Ratios are medians of per-round ratios against serial of the same size. Each round also
times one CPU-bound spinner alone and two at once: on a shared machine that says how many
cores two processes really get, the floor for ``--workers 2``. Goal (issue 14): 200 cases
with ``--workers 2`` <= 0.6x serial on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import Rounds, rec_command, run_child, table, verdict  # noqa: E402
from _travel import TRAVEL_AGENT, conversations, record_travel  # noqa: E402

from rec.standin.replies import FAKE_API_KEY  # noqa: E402


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env["PYTHONWARNINGS"] = "ignore"
    return env


def _subset(evalset: Path, size: int, folder: Path) -> Path:
    data = json.loads(evalset.read_text())
    data["eval_cases"] = data["eval_cases"][:size]
    out = folder / f"cases{size}" / "travel.evalset.json"
    out.parent.mkdir()
    out.write_text(json.dumps(data))
    return out


def _flags() -> set[str]:
    done = run_child([*rec_command(), "replay", "--help"], rss=False)
    return {flag for flag in ("--workers", "--shard") if flag in done.stdout.decode()}


def main() -> None:  # noqa: C901
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,50,200")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    env = _env()
    rec = rec_command()
    flags = _flags()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["GOOGLE_API_KEY"] = FAKE_API_KEY
        started = time.perf_counter()
        (folder / "recording").mkdir()
        full = record_travel(folder / "recording", conversations(max(sizes)))
        print(f"recorded {max(sizes)} cases in {time.perf_counter() - started:.0f} s (not timed)")
        del os.environ["GOOGLE_API_KEY"]
        cassette = folder / "recording" / "travel.cassette.json"

        def replay(evalset: Path, *extra: str) -> list[str]:
            head = [*rec, "replay", str(TRAVEL_AGENT), str(evalset), "--recording", str(cassette)]
            return head + list(extra)

        def timed(argv: list[str]) -> Callable[[], float]:
            def measure() -> float:
                done = run_child(argv, env=env, rss=False)
                if done.returncode != 0:
                    raise SystemExit(f"failed: {' '.join(argv)}\n{done.stderr.decode()[-2000:]}")
                return done.seconds

            return measure

        def at_once(argvs: list[list[str]]) -> Callable[[], float]:
            def measure() -> float:
                start = time.perf_counter()
                procs = [
                    subprocess.Popen(a, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                    for a in argvs
                ]
                for proc, argv in zip(procs, argvs, strict=True):
                    _, err = proc.communicate()
                    if proc.returncode != 0:
                        raise SystemExit(f"failed: {' '.join(argv)}\n{err.decode()[-2000:]}")
                return time.perf_counter() - start

            return measure

        measures: dict[str, Callable[[], float]] = {}
        subsets = {size: _subset(full, size, folder) for size in sizes}
        # Serial is one process: --workers 1 where the default is one worker per core.
        one = ("--workers", "1") if "--workers" in flags else ()
        for size, evalset in subsets.items():
            measures[f"{size} serial"] = timed(replay(evalset, "--parallel", "1", *one))
            measures[f"{size} --parallel 4"] = timed(replay(evalset, "--parallel", "4", *one))
        largest = max(sizes)
        if "--workers" in flags:
            measures[f"{largest} --workers 2"] = timed(replay(subsets[largest], "--workers", "2"))
        if "--shard" in flags:
            shard_args = [replay(subsets[largest], "--shard", f"{i}/2", *one) for i in (1, 2)]
            measures[f"{largest} two --shard halves at once"] = at_once(shard_args)
        # What two cores give right now: one CPU-bound spinner alone vs two at once (the
        # other users of a shared machine decide it; on two idle cores the ratio is ~1.0).
        spin = [sys.executable, "-c", "x = 0\nfor i in range(20_000_000): x += i"]
        measures["CPU spinner, one"] = timed(spin)
        measures["CPU spinners, two at once"] = at_once([spin, spin])
        timed(replay(subsets[min(sizes)]))()  # warm-up: .pyc files, page cache
        rounds = Rounds().run(measures, repeat=args.repeat)

    print(f"rec replay wall time (a fresh process per run), median of {args.repeat} rounds")
    rows = []
    for name in measures:
        if name.startswith("CPU"):
            continue
        size = name.split()[0]
        ratio = rounds.ratio(name, f"{size} serial")
        rows.append((name, f"{rounds.median(name):.1f}", f"{ratio:.2f}x"))
    print(table(rows, ("run", "s", "vs serial")))
    for name, samples in rounds.samples.items():
        print(f"  {name}: " + ", ".join(f"{s:.1f}" for s in samples) + " s per round")
    capacity = rounds.ratio("CPU spinners, two at once", "CPU spinner, one")
    print(
        f"two CPU spinners at once take {capacity:.2f}x the time of one: two processes get "
        f"{2 / capacity:.2f} cores' worth, so --workers 2 can reach {capacity / 2:.2f}x serial "
        "at best on this machine now"
    )
    if "--workers" not in flags:
        print("(this rec has no --workers / --shard: the worker rows are missing)")
    else:
        ratio = rounds.ratio(f"{largest} --workers 2", f"{largest} serial")
        serial = rounds.median(f"{largest} serial")
        floor = f"serial {serial:.1f} s, the machine's best {capacity / 2:.2f}x"
        label = f"{largest} cases --workers 2 / serial"
        verdict(label, f"{ratio:.2f}x", floor, "<= 0.6x", ratio <= 0.6)


if __name__ == "__main__":
    main()
