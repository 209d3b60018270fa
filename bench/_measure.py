"""Measuring on a loaded machine: interleaved repeated runs, medians, ratios within one round.

Other engineers' test runs share the 2 cores, so a figure measured once moves by tens of
percent. Every benchmark here therefore runs the things it compares *interleaved* (A, B,
C, A, B, C, ...), takes the median of each, and states ratios as the median of the
per-round ratios: a burst of load hits both sides of a ratio in the same round.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Child",
    "Rounds",
    "cpu_seconds",
    "median_ratio",
    "peak_rss_mb",
    "rec_command",
    "run_child",
    "table",
    "verdict",
]

VERDICT = "VERDICT"
"""The first word of a verdict line (what ``bench/compare.py`` reads)."""
SEPARATOR = " | "
NO_GOAL = "-"
"""The goal and met fields of a figure kept for comparison that has no goal of its own."""


def rec_command() -> list[str]:
    """The ``rec`` console script of the running interpreter's environment (as users call it)."""
    script = Path(sys.executable).parent / "rec"
    return [str(script)] if script.exists() else [sys.executable, "-m", "rec"]


@dataclass
class Child:
    """What a finished child process cost."""

    seconds: float
    """Wall time from start to exit."""
    peak_rss_kb: int
    """The command's peak resident set size (``ru_maxrss``), in KiB."""
    returncode: int
    stdout: bytes = b""
    stderr: bytes = b""


_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write("\\n@@maxrss %d\\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""
# A small launcher forks the command and reports its peak RSS: the kernel starts a forked
# child's ``ru_maxrss`` at its parent's size, so measuring from a large benchmark process
# would report the benchmark's own RSS for any smaller command.


def run_child(
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    rss: bool = True,
) -> Child:
    """Run ``args`` to completion; wall time and (with ``rss``) the peak RSS of that command.

    Without ``rss`` the command runs directly (no launcher in the wall time; peak RSS 0).
    """
    # Output goes to files, not pipes: a full pipe would block the child.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, *args] if rss else list(args),
            env=dict(env) if env is not None else None,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stderr = err.read()
        if not rss:
            return Child(seconds, 0, done.returncode, out.read(), stderr)
        head, _, tail = stderr.rpartition(b"\n@@maxrss ")
        return Child(seconds, int(tail.split()[0]), done.returncode, out.read(), head)


def peak_rss_mb(pid: int) -> float:
    """Peak RSS so far of a running process (``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / 1e6
    raise RuntimeError(f"no VmHWM for pid {pid}")


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) so far of process ``pid``, every thread of it, and of its
    live children (the recorder's build worker); None where ``/proc`` cannot tell (not
    Linux, or the process is gone)."""
    try:
        own = _cpu_and_parent(Path(f"/proc/{pid}/stat"))[0]
    except (OSError, ValueError, IndexError):
        return None
    children = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            seconds, parent = _cpu_and_parent(stat)
        except (OSError, ValueError, IndexError):
            continue  # gone since the listing
        if parent == pid:
            children += seconds
    return own + children


def _cpu_and_parent(stat: Path) -> tuple[float, int]:
    # The name (field 2) is in parentheses and may hold spaces: fields count from its end.
    fields = stat.read_text().rpartition(")")[2].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK"), int(fields[1])


def median_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median of the per-round ratios (rounds paired by position)."""
    return statistics.median(n / d for n, d in zip(numerators, denominators, strict=True))


@dataclass
class Rounds:
    """Interleaved repeated measurements: ``rounds.run({"a": fa, "b": fb}, repeat=7)``."""

    samples: dict[str, list[float]] = field(default_factory=dict)

    def run(self, measures: Mapping[str, Callable[[], float]], *, repeat: int) -> Rounds:
        """Call every measure once per round, in order, ``repeat`` rounds."""
        for _ in range(repeat):
            for name, measure in measures.items():
                self.samples.setdefault(name, []).append(measure())
        return self

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])

    def ratio(self, name: str, baseline: str) -> float:
        """Median over rounds of ``name / baseline``."""
        return median_ratio(self.samples[name], self.samples[baseline])


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """A plain text table: first column left-aligned, the rest right-aligned."""
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for row in cells:
        rest = [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        parts = [row[0].ljust(widths[0]), *rest]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def verdict(
    label: str,
    figure: str,
    floor: str,
    goal: str | None,
    met: bool | None,
    *,
    anchor: str | None = None,
) -> None:
    """Print one figure with its floor, goal and verdict, in the one form every bench uses::

        VERDICT <label> | <figure> | floor <floor> | goal <goal> | met
        VERDICT <label> | <figure> | floor <floor> | anchor <anchor> | goal <goal> | NOT met

    ``figure`` starts with its number (``"1.04x"``, ``"0.25 ms"``, ``"+0.3 ms"``);
    ``floor`` names what the figure is measured against in the same run and its value
    (``"python -c pass 25 ms"``); ``anchor`` names another library's figure where the bench
    measures one. A goal written ``>= N`` means higher is better; for every other figure
    lower is better (``bench/compare.py`` judges "within 5%" that way). A figure kept for
    comparison without a goal of its own passes ``goal=None, met=None``.
    """
    if (goal is None) != (met is None):
        raise ValueError(f"{label}: a verdict has both a goal and met / not met, or neither")
    fields = [label, figure, f"floor {floor}"]
    if anchor is not None:
        fields.append(f"anchor {anchor}")
    fields.append(f"goal {goal if goal is not None else NO_GOAL}")
    fields.append(NO_GOAL if met is None else ("met" if met else "NOT met"))
    for text in fields:
        if "|" in text or "\n" in text:
            raise ValueError(f"a verdict field holds '|' or a line break: {text!r}")
    print(f"{VERDICT} {SEPARATOR.join(fields)}", flush=True)
