"""Every bench script on two commits, alternating, in one table of their verdicts.

    python bench/compare.py                           # HEAD against its first parent
    python bench/compare.py --base main --head my-branch --rounds 3
    python bench/compare.py --quick --rounds 1 --only bench_cli_start --only bench_scoring
    python bench/compare.py --base main --bench-from head --markdown

Each commit is checked out into a temporary git worktree (removed at the end, on Ctrl-C
too). Every ``bench/bench_*.py`` (or those named with ``--only``) runs from its own tree,
with ``PYTHONPATH`` set to that tree and this interpreter, alternating base and head for
``--rounds`` rounds, so a burst of load hits both sides. Each bench prints its figures as
``VERDICT`` lines (``_measure.verdict``); a figure's value is the median of its rounds.

The table has one row per figure: base and head, the change, the floor it is measured
against in the same run, the anchor (another library's figure, where the bench measures
one), the goal, whether head meets it, and whether head is within 5% of base or better
(a goal written ``>= N`` means higher is better; every other figure, lower).
``--bench-from head`` runs head's bench scripts in both trees (for a base whose scripts
predate the ``VERDICT`` form, or to measure two trees by the same script).

Exit status: 0 when every run finished and printed its verdicts; 1 when a run failed or
printed none; 2 for a bad ref or bench name. ``--markdown`` prints the head of
bench/README.md and the table in its form: one table keyed by commit.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import NO_GOAL, SEPARATOR, VERDICT, table  # noqa: E402

HERE = Path(__file__).resolve().parent
WITHIN = 0.05
"""Head within this fraction of base (or better) keeps a figure "within 5%"."""

QUICK: dict[str, tuple[str, ...]] = {
    "bench_anchors": ("--sizes", "200", "--samples", "50", "--repeat", "1", "--vcr-budget", "0.5"),
    "bench_cassette_load": ("--exchanges", "1000", "--repeat", "1"),
    "bench_cli_start": ("--repeat", "3"),  # one start each is too few for a ratio
    "bench_large_body": ("--mb", "5", "--repeat", "1"),
    "bench_large_cassette": ("--exchanges", "1000", "--requests", "100", "--repeat", "1"),
    "bench_live_latency": ("--runs", "3"),
    "bench_openai_wire": ("--quick",),
    "bench_proxy_concurrency": ("--clients", "1,10", "--requests", "100", "--repeat", "1"),
    "bench_replay_agent": ("--cases", "5", "--repeat", "1"),
    "bench_replay_home": ("--repeat", "1"),
    "bench_replay_lookup": ("--quick", "--samples", "100", "--vcr-budget", "1"),
    "bench_scoring": ("--invocations", "500"),
    "bench_serve_miss": ("--quick",),
    "bench_stop": ("--exchanges", "600", "--repeat", "1", "--cli-rounds", "1"),
    "bench_stream_latency": ("--runs", "3"),
    "bench_suite_scaling": ("--sizes", "2,6", "--repeat", "1"),
    "bench_trace_import": ("--copies", "3", "--repeat", "1"),
    "bench_usage_report": ("--cases", "10", "--repeat", "1"),
}
"""Each bench's smallest sensible sizes and repeats (``--quick``)."""

README_HEAD = """\
# rec benchmarks

Each script in `bench/` runs on its own and prints, for every figure it measures, one
`VERDICT` line: the figure, the floor it is measured against in the same run (a direct
connection, a canned server, an in-memory model, ADK's own evaluators, `json.load`,
`python -c pass`), the anchor where one exists (vcrpy and cassetter, in `bench_anchors.py`,
installed by the bench), the goal and met / not met. Rounds are interleaved and figures
are medians; absolute times move with the machine's load, the goals are about the ratios.

`python bench/compare.py --base A --head B --rounds N` runs every bench on both commits,
alternating, and prints the table below (`--markdown`); `--only NAME` picks benches,
`--quick` takes each bench's smallest sizes. Earlier figures are in git
(`git log -p bench/README.md`).

## Figures by commit
"""


@dataclass(frozen=True)
class Verdict:
    """One ``VERDICT`` line of a bench's output."""

    label: str
    figure: str
    """As printed: its number first, then its unit (``"1.04x"``, ``"+0.25 ms"``)."""
    floor: str
    goal: str
    met: bool | None
    anchor: str = ""

    @property
    def value(self) -> float | None:
        found = _NUMBER.match(self.figure)
        return None if found is None else float(found.group(1).replace(",", ""))

    @property
    def higher_is_better(self) -> bool:
        return self.goal.lstrip().startswith(">")


_NUMBER = re.compile(r"\s*([-+]?[\d,]*\.?\d+)")


def parse_verdicts(text: str) -> list[Verdict]:
    """The ``VERDICT`` lines of one bench run's output, in order.

    Raises:
        ValueError: a ``VERDICT`` line that does not have the form ``_measure.verdict``
            prints.
    """
    found = []
    for line in text.splitlines():
        if line.startswith(VERDICT + " "):
            found.append(_parse_line(line[len(VERDICT) + 1 :]))
    return found


def _parse_line(line: str) -> Verdict:
    fields = line.split(SEPARATOR)
    named = dict(f.split(" ", 1) for f in fields[2:-1] if " " in f)
    state = fields[-1] if len(fields) >= 5 else ""
    if "floor" not in named or "goal" not in named or state not in ("met", "NOT met", NO_GOAL):
        raise ValueError(f"not a verdict line: {VERDICT} {line!r}")
    met = None if state == NO_GOAL else state == "met"
    return Verdict(
        fields[0], fields[1], named["floor"], named["goal"], met, named.get("anchor", "")
    )


@dataclass(frozen=True)
class Tree:
    """One side of the comparison: a commit checked out in a worktree."""

    role: str
    """``base`` or ``head``."""
    commit: str
    path: Path

    @property
    def short(self) -> str:
        return self.commit[:7]


@dataclass
class Run:
    """What one bench run on one tree printed."""

    bench: str
    role: str
    returncode: int
    seconds: float
    verdicts: list[Verdict] = field(default_factory=list)
    problem: str = ""
    """Why the run gave no verdicts (empty when it did)."""


class _UsageError(Exception):
    """A bad ref, bench name or repository (exit status 2)."""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise _UsageError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def resolve(repo: Path, ref: str) -> str:
    """The full commit id of ``ref`` in ``repo``."""
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except _UsageError:
        raise _UsageError(
            f"{repo}: no commit named {ref!r}. Give --base/--head a branch, tag or commit "
            "(the default base, HEAD^, needs a commit with a parent)."
        ) from None


@contextmanager
def worktrees(repo: Path, commits: dict[str, str]) -> Iterator[dict[str, Tree]]:
    """A detached worktree of each commit under one temporary folder, removed on exit
    (on Ctrl-C and SIGTERM too)."""
    folder = Path(tempfile.mkdtemp(prefix="rec-compare-"))
    made: dict[str, Tree] = {}
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        for role, commit in commits.items():
            path = folder / role
            _git(repo, "worktree", "add", "--detach", "--quiet", str(path), commit)
            made[role] = Tree(role, commit, path)
        yield made
    finally:
        for tree in made.values():
            subprocess.run(
                ["git", "-C", str(repo), "worktree", "remove", "--force", str(tree.path)],
                capture_output=True,
            )
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True)
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def bench_names(folder: Path, only: Sequence[str]) -> list[str]:
    """The bench scripts in ``folder`` (``bench_*.py``, without ``.py``), or those named.

    Raises:
        _UsageError: a name in ``only`` that is not a bench script there.
    """
    every = sorted(p.stem for p in folder.glob("bench_*.py"))
    if not only:
        return every
    wanted = []
    for name in only:
        stem = Path(name).stem
        stem = stem if stem.startswith("bench_") else f"bench_{stem}"
        if stem not in every:
            raise _UsageError(
                f"{folder}: no bench script {name!r}. Pick one of: {', '.join(every)}."
            )
        wanted.append(stem)
    return list(dict.fromkeys(wanted))


def run_bench(tree: Tree, bench: str, args: Sequence[str], *, log: Path | None) -> Run:
    """Run one bench script of ``tree`` from ``tree``, with ``PYTHONPATH`` set to it."""
    script = tree.path / "bench" / f"{bench}.py"
    if not script.exists():
        return Run(bench, tree.role, 0, 0.0, problem="no such script in this commit")
    # The bytecode cache on, as users run rec (bench_cli_start times each command's start).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree.path)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=tree.path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if log is not None:
        stem = log / f"{bench}.{tree.role}.{tree.short}"
        with open(f"{stem}.out", "a") as out, open(f"{stem}.err", "a") as err:
            out.write(done.stdout)
            err.write(done.stderr)
    return _finished(Run(bench, tree.role, done.returncode, seconds), done.stdout, done.stderr)


def _finished(run: Run, stdout: str, stderr: str) -> Run:
    tail = stderr.strip().splitlines()[-1:] or ["(no output on stderr)"]
    if run.returncode != 0:
        run.problem = f"exit {run.returncode}: {tail[0][:200]}"
        return run
    try:
        run.verdicts = parse_verdicts(stdout)
    except ValueError as error:
        run.problem = str(error)
        return run
    if not run.verdicts:
        run.problem = f"no {VERDICT} lines (a bench older than them? --bench-from head)"
    return run


def alternate(
    trees: Sequence[Tree],
    benches: Sequence[str],
    *,
    rounds: int,
    quick: bool,
    log: Path | None = None,
) -> list[Run]:
    """Every bench on every tree, the trees alternating within each of ``rounds`` rounds."""
    runs = []
    for bench in benches:
        args = QUICK.get(bench, ()) if quick else ()
        for number in range(1, rounds + 1):
            for tree in trees:
                run = run_bench(tree, bench, args, log=log)
                state = run.problem or f"{len(run.verdicts)} verdicts"
                print(
                    f"{bench} round {number}/{rounds} {tree.role} {tree.short}: "
                    f"{run.seconds:.1f} s, {state}",
                    file=sys.stderr,
                    flush=True,
                )
                runs.append(run)
    return runs


@dataclass
class Row:
    """One figure of one bench on both sides."""

    bench: str
    label: str
    base: list[Verdict] = field(default_factory=list)
    head: list[Verdict] = field(default_factory=list)

    def figure(self, role: str) -> str:
        return _median_figure(self.base if role == "base" else self.head)

    def change(self) -> float | None:
        """Head's median against base's, as a fraction of base (None where either is missing)."""
        base, head = _median(self.base), _median(self.head)
        if base is None or head is None or base == 0:
            return None
        return (head - base) / abs(base)

    def within(self) -> str:
        """``yes``, ``no``, ``new`` (no base figure), ``gone`` (no head figure) or ``-``."""
        if not self.base or not self.head:
            return "gone" if self.base else "new"
        change = self.change()
        if change is None:
            return "-"
        worse = -change if self.head[-1].higher_is_better else change
        return "yes" if worse <= WITHIN else "no"

    def met(self) -> str:
        states = [v.met for v in self.head]
        if not states or states[0] is None:
            return "-"
        hits = sum(1 for state in states if state)
        if hits == len(states):
            return "met"
        return "NOT met" if hits == 0 else f"{hits}/{len(states)} met"


def _median(verdicts: Sequence[Verdict]) -> float | None:
    values = [v.value for v in verdicts if v.value is not None]
    return statistics.median(values) if values else None


def _median_figure(verdicts: Sequence[Verdict]) -> str:
    """The median of the figures, written as the bench writes them (sign, decimals, unit)."""
    value = _median(verdicts)
    if len(verdicts) == 1 or value is None:
        return verdicts[0].figure if verdicts else "-"
    found = _NUMBER.match(verdicts[0].figure)
    assert found is not None
    number = found.group(1)
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    sign = "+" if number.startswith(("+", "-")) else ""
    return f"{value:{sign},.{decimals}f}{verdicts[0].figure[found.end() :]}"


def collect(runs: Sequence[Run]) -> list[Row]:
    """One row per (bench, label), in the order head printed them (base-only rows last)."""
    rows: dict[tuple[str, str], Row] = {}
    for run in sorted(runs, key=lambda r: r.role != "head"):
        for verdict in run.verdicts:
            row = rows.setdefault((run.bench, verdict.label), Row(run.bench, verdict.label))
            (row.head if run.role == "head" else row.base).append(verdict)
    order = {bench: n for n, bench in enumerate(dict.fromkeys(r.bench for r in runs))}
    return sorted(rows.values(), key=lambda r: order[r.bench])


HEADER = ("bench", "figure", "base", "head", "change", "floor", "anchor", "goal", "head: met?")
"""The table's columns (base and head are named by their commits), then "within 5%"."""


def _cells(row: Row) -> tuple[str, ...]:
    change = row.change()
    latest = (row.head or row.base)[-1]
    return (
        row.bench.removeprefix("bench_"),
        row.label,
        row.figure("base"),
        row.figure("head"),
        "-" if change is None else f"{change * 100:+.1f}%",
        latest.floor,
        latest.anchor or "-",
        latest.goal,
        row.met(),
        row.within(),
    )


def text_table(rows: Sequence[Row], trees: dict[str, Tree]) -> str:
    """The plain-text table: one row per figure."""
    header = [*HEADER, "within 5%"]
    header[2:4] = [f"base {trees['base'].short}", f"head {trees['head'].short}"]
    return table([_cells(row) for row in rows], header)


def markdown_table(rows: Sequence[Row], trees: dict[str, Tree]) -> str:
    """The table as bench/README.md keeps it: keyed by commit, one column per commit."""
    head = trees["head"].short
    header = [*HEADER[:2], trees["base"].short, head, *HEADER[4:-1], f"{head}: met?", "within 5%"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [cell.replace("|", "/") for cell in _cells(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def problems(runs: Sequence[Run]) -> list[str]:
    """A line for each run that failed or gave no verdicts (a base without the script is
    said, not counted: the bench is new)."""
    found = []
    for run in runs:
        if run.problem:
            found.append(f"{run.bench} on {run.role}: {run.problem}")
    return found


def _failed(runs: Sequence[Run]) -> bool:
    return any(r.problem and not r.problem.startswith("no such script") for r in runs)


def _measured_on(trees: dict[str, Tree], args: argparse.Namespace) -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    flags = f" --rounds {args.rounds}" + (" --quick" if args.quick else "")
    flags += "".join(f" --only {name}" for name in args.only)
    flags += " --bench-from head" if args.bench_from == "head" else ""
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with "
        f"`python bench/compare.py --base {trees['base'].short} --head {trees['head'].short}"
        f"{flags}`, load average {load} on {os.cpu_count()} cores; each figure the median "
        f"of {args.rounds} run(s) of its bench, base and head alternating. Within 5%: head "
        "within 5% of base, or better."
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=None, help="the commit before (default: HEAD^)")
    parser.add_argument("--head", default="HEAD", help="the commit after (default: HEAD)")
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds")
    parser.add_argument(
        "--only", action="append", default=[], metavar="NAME", help="this bench (repeatable)"
    )
    parser.add_argument("--quick", action="store_true", help="each bench's smallest sizes")
    parser.add_argument(
        "--bench-from",
        choices=("own", "head"),
        default="own",
        help="whose bench scripts each tree runs (default: its own)",
    )
    parser.add_argument("--markdown", action="store_true", help="bench/README.md's form")
    parser.add_argument("--logs", type=Path, help="keep each run's output in this folder")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.rounds < 1:
        print("compare.py: --rounds must be 1 or more", file=sys.stderr)
        return 2
    repo = HERE.parent
    try:
        head = resolve(repo, args.head)
        base = resolve(repo, args.base or f"{args.head}^")
        with worktrees(repo, {"base": base, "head": head}) as trees:
            benches = bench_names(trees["head"].path / "bench", args.only)
            if args.bench_from == "head":
                shutil.copytree(
                    trees["head"].path / "bench", trees["base"].path / "bench", dirs_exist_ok=True
                )
            if args.logs is not None:
                args.logs.mkdir(parents=True, exist_ok=True)
            runs = alternate(
                [trees["base"], trees["head"]],
                benches,
                rounds=args.rounds,
                quick=args.quick,
                log=args.logs,
            )
    except _UsageError as error:
        print(f"compare.py: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("compare.py: interrupted; the worktrees are removed", file=sys.stderr)
        return 130
    _print(collect(runs), trees, runs, args)
    return 1 if _failed(runs) else 0


def _print(
    rows: Sequence[Row], trees: dict[str, Tree], runs: Sequence[Run], args: argparse.Namespace
) -> None:
    if args.markdown:
        print(README_HEAD)
        print(_measured_on(trees, args))
        print()
        print(markdown_table(rows, trees))
    else:
        print(_measured_on(trees, args))
        print(text_table(rows, trees))
    for line in problems(runs):
        print(f"problem: {line}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
