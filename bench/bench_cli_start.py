"""How long ``rec`` commands take, start to finish, vs ``python -c pass`` and ``adk --help``.

Users call ``rec status``, ``rec check`` and ``rec score`` in loops and pre-commit hooks,
so the cost of starting matters as much as the work. Each command runs as a user runs it
(the ``rec`` console script, a fresh process), interleaved with the two baselines, and the
ratios are medians of per-round ratios. A second pass (not timed) lists which heavy
libraries each command imported.

Goals: ``rec --help`` <= 4x ``python -c pass``; ``rec status``, ``rec check`` of one small
EvalSet, ``rec score A A`` and ``rec show`` of an 11-exchange cassette each <= 6x
``python -c pass``.

The commands run with the bytecode cache on (``PYTHONDONTWRITEBYTECODE`` is dropped from
their environment), as users run rec: with it off every module of rec is compiled from
source at each start. Beside the wall time, each command's CPU time (user + system, from
the children's resource usage) is given against ``python -c pass``'s: on a shared machine
the wall time also holds the time a command waited for a core, its CPU time does not.

Run::

    python bench/bench_cli_start.py            # --repeat 7
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gemini_traffic  # noqa: E402
from _measure import Rounds, median_ratio, rec_command, run_child, table, verdict  # noqa: E402

from cassettes._cassette_writer import save_cassette  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EVALSET = ROOT / "examples" / "production_bug" / "evals" / "thermostat_bug.evalset.json"
HEAVY = (
    "pydantic",  # not heavy, but most of what rec check and rec score pay when they load it
    "google.adk",
    "google.genai",
    "nltk",
    "rouge_score",
    "scipy",
    "deepdiff",
    "aiohttp",
    "pandas",
    "numpy",
    "filelock",  # a lock library: only commands that write need it
)
GOALS = {
    "rec --help": 4.0,
    "rec status": 6.0,
    "rec check FILE": 6.0,
    "rec score A A": 6.0,
    "rec show SMALL": 6.0,
}

_PROBE = """
import sys
sys.argv = ["rec", *{args!r}]
from rec.cli import main
try:
    main()
finally:
    heavy = sorted({{m for m in {heavy!r} if m in sys.modules}})
    sys.__stderr__.write("\\n@@" + __import__("json").dumps([heavy, len(sys.modules)]) + "\\n")
"""


def _imports(args: list[str]) -> tuple[list[str], int]:
    code = _PROBE.format(args=args, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_cached_env()
    )
    line = [x for x in done.stderr.splitlines() if x.startswith("@@")][-1]
    heavy, count = json.loads(line[2:])
    return heavy, count


def _cached_env() -> dict[str, str]:
    """This environment with the bytecode cache on (as users run rec)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rec = rec_command()
    adk = shutil.which("adk", path=str(Path(sys.executable).parent)) or "adk"
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "recordings"
        empty.mkdir()
        small = Path(tmp) / "small.cassette.json"
        save_cassette(_gemini_traffic.cassette(11), small)
        commands: dict[str, list[str]] = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "adk --help": [adk, "--help"],
            "rec --help": ["--help"],
            "rec --version": ["--version"],
            "rec status": ["status", "--out", str(empty)],
            "rec check FILE": ["check", str(EVALSET)],
            "rec score A A": ["score", str(EVALSET), str(EVALSET)],
            "rec show SMALL": ["show", str(small)],
        }
        full = {
            name: (argv if not name.startswith("rec ") else [*rec, *argv])
            for name, argv in commands.items()
        }
        env = _cached_env()
        for name, argv in full.items():  # warm the page cache and .pyc files; check they work
            done = run_child(argv, env=env, rss=False)
            if done.returncode != 0:
                raise SystemExit(
                    f"{name} failed ({done.returncode}): {done.stderr.decode()[-500:]}"
                )
        cpu: dict[str, list[float]] = {}

        def timer(name: str, argv: list[str]):  # type: ignore[no-untyped-def]
            def measure() -> float:
                before = _children_cpu()
                seconds = run_child(argv, env=env, rss=False).seconds
                cpu.setdefault(name, []).append(_children_cpu() - before)
                return seconds

            return measure

        rounds = Rounds().run({n: timer(n, a) for n, a in full.items()}, repeat=args.repeat)
        rows = []
        verdicts: list[tuple[str, str, str, str | None, bool | None]] = []
        floor = f"python -c pass {rounds.median('python -c pass') * 1000:,.0f} ms"
        for name, argv in commands.items():
            heavy, modules = _imports(argv) if name.startswith("rec ") else ([], 0)
            goal = GOALS.get(name)
            ratio = rounds.ratio(name, "python -c pass")
            cpu_ratio = median_ratio(cpu[name], cpu["python -c pass"])
            rows.append(
                (
                    name,
                    f"{rounds.median(name) * 1000:,.0f}",
                    f"{ratio:.1f}x",
                    f"{rounds.ratio(name, 'adk --help'):.2f}x",
                    f"<= {goal:g}x {_met_text(ratio, goal)}" if goal else "",
                    f"{cpu_ratio:.1f}x {_met_text(cpu_ratio, goal)}".strip(),
                    modules or "",
                    ", ".join(heavy) if name.startswith("rec ") else "",
                )
            )
            if name.startswith("rec "):
                met = None if goal is None else ratio <= goal
                goal_text = None if goal is None else f"<= {goal:g}x"
                verdicts.append(
                    (f"{name} / python -c pass", f"{ratio:.2f}x", floor, goal_text, met)
                )
                cpu_floor = (
                    f"python -c pass CPU {statistics.median(cpu['python -c pass']) * 1000:,.0f} ms"
                )
                verdicts.append(
                    (f"{name} CPU / python -c pass", f"{cpu_ratio:.2f}x", cpu_floor, None, None)
                )
                verdicts.append((f"{name} modules", f"{modules}", "-", None, None))
    print(f"wall time per command, median of {args.repeat} interleaved rounds; cpu: CPU time")
    header = ("command", "ms", "vs python", "vs adk", "goal", "cpu vs python", "modules")
    print(table(rows, (*header, "heavy imports")))
    for row in verdicts:
        verdict(*row)


def _met_text(ratio: float, goal: float | None) -> str:
    if goal is None:
        return ""
    return "met" if ratio <= goal else "NOT met"


if __name__ == "__main__":
    main()
