"""A 200-case ``rec replay`` report with recorded usage and cost, against one without.

    python bench/bench_usage_report.py [--cases 200] [--repeat 3]

Records the travel agent (tests/agents/travel) for ``--cases`` three-turn conversations
once (not timed), then per round, in this process with ``--workers 1``:

- the replay itself (``replay_evalsets``), with the time spent reading each turn's
  exchanges off the channel and computing its figures and cost measured inside it;
- the four reports (console, results JSON, JUnit, HTML) of that result as it is, and of the
  same result with the figures and takes taken out (what the reports cost without them).

"without" = replay - usage work + reports without figures; "with" = replay + reports with
figures. Goal (issue 41): with <= 1.05x without.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import median_ratio, table, verdict  # noqa: E402
from _travel import TRAVEL_AGENT, conversations, record_travel  # noqa: E402

import replayer._local_run as local_run  # noqa: E402
from rec.standin.replies import FAKE_API_KEY  # noqa: E402
from replayer._replay_run import replay_evalsets  # noqa: E402
from replayer._replay_target import ReplayOptions  # noqa: E402
from replayer._reports.console import render_report  # noqa: E402
from replayer._reports.html import render_html  # noqa: E402
from replayer._reports.junit import render_junit  # noqa: E402
from replayer._reports.results import result_json  # noqa: E402
from replayer._reports.set_report import report_from_replay  # noqa: E402


class _Timed:
    """Wraps a function of ``replayer._local_run`` and adds up the time spent in it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.inner: Callable[..., Any] = getattr(local_run, name)
        self.seconds = 0.0
        setattr(local_run, name, self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - began


def _reports(replay: Any) -> float:
    began = time.perf_counter()
    render_report(replay.result, width=100)
    result_json(replay.result)
    render_junit([replay.result])
    render_html([report_from_replay(replay)])
    return time.perf_counter() - began


def _stripped(replay: Any) -> Any:
    cases = [
        c.model_copy(update={"usage": None, "takes": None}) for c in replay.result.eval_case_results
    ]
    replay.result = replay.result.model_copy(update={"eval_case_results": cases})
    return replay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["GOOGLE_API_KEY"] = FAKE_API_KEY
        started = time.perf_counter()
        evalset = record_travel(folder, conversations(args.cases))
        print(f"recorded {args.cases} cases in {time.perf_counter() - started:.0f} s (not timed)")
        del os.environ["GOOGLE_API_KEY"]
        usage, split = _Timed("case_usage"), _Timed("_split_turns")
        rows: dict[str, list[float]] = {}
        for _ in range(args.repeat):
            usage.seconds = split.seconds = 0.0
            began = time.perf_counter()
            [replay] = replay_evalsets(str(TRAVEL_AGENT), [evalset], ReplayOptions(workers=1))
            replayed = time.perf_counter() - began
            assert replay.result.eval_case_results[0].usage is not None
            with_figures = _reports(replay)
            without_figures = _reports(_stripped(replay))
            work = usage.seconds + split.seconds
            samples = {
                "replay": replayed,
                "usage work in the replay": work,
                "reports with figures": with_figures,
                "reports without figures": without_figures,
                "with": replayed + with_figures,
                "without": replayed - work + without_figures,
            }
            for name, value in samples.items():
                rows.setdefault(name, []).append(value)
    ratio = median_ratio(rows["with"], rows["without"])
    print(
        table(
            [(name, f"{sorted(v)[len(v) // 2]:.3f}") for name, v in rows.items()],
            ["", "median s"],
        )
    )
    floor = f"without figures {sorted(rows['without'])[len(rows['without']) // 2]:.3f} s"
    label = f"replay + reports with / without usage figures, {args.cases} cases"
    verdict(label, f"{ratio:.3f}x", floor, "<= 1.05x", ratio <= 1.05)


if __name__ == "__main__":
    main()
