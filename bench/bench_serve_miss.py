"""What a replay miss costs: finding the nearest recording and describing the difference.

A request no recording matches fails closed with the nearest recording and what differs
from it. Replay (``rec serve``, ``rec replay``, ``rec.replay()``) loads a cassette lazily,
so the cost of a miss is what it reads of the cassette besides the request itself. For
cassettes of 100 and 10,000 exchanges of agent conversations (``_gemini_traffic.py``),
saved and loaded as ``rec serve`` loads them, each miss is a recorded request with its system
instruction changed (the recording it came from is the nearest, and the check says so):
the index's lookup (the miss), ``MatchIndex.nearest`` and the explanation, in-process.

Figures:

- a miss on 10,000 exchanges, absolute (goal <= 50 ms), and against a miss on 100 in the
  same run (goal <= 1.5x: a miss costs its own request, not the cassette);
- the first miss of a fresh index on 10,000, in CPU time (goal <= 50 ms: it also groups
  what the side index says of every exchange, once, and keys the request's bucket);
- the exchanges a miss parses into models on 10,000 (goal <= 2: the nearest, and none
  for scoring);
- the modules the first miss imports in a fresh interpreter, and the growth of its RSS
  (no goal: deepdiff, which describes the difference, brings numpy and pandas when they
  are installed; Linux).

Run::

    python bench/bench_serve_miss.py            # 100 and 10,000
    python bench/bench_serve_miss.py --quick    # 100 and 1,000
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gemini_traffic  # noqa: E402
from _measure import Rounds, verdict  # noqa: E402

from cassettes._cassette import (  # noqa: E402
    Exchange,
    JsonBody,
    LazyExchanges,
    RecordedRequest,
    load_cassette,
)
from cassettes._cassette_writer import save_cassette  # noqa: E402
from cassettes._divergence import explain_miss  # noqa: E402
from cassettes._matching import MatchIndex  # noqa: E402

GOAL_MS = 50.0
GOAL_RATIO = 1.5
GOAL_PARSES = 2
HEAVY = ("numpy", "pandas", "pyarrow")
_MISSES = 6


def _missing(exchange: Exchange) -> RecordedRequest:
    """The exchange's request with its system instruction changed: recorded nowhere."""
    body = exchange.request.body
    assert isinstance(body, JsonBody) and isinstance(body.value, dict)
    changed = {
        **body.value,
        "systemInstruction": {"role": "user", "parts": [{"text": "You are a grumpy assistant"}]},
    }
    return exchange.request.model_copy(update={"body": JsonBody(value=changed)})


class _Miss:
    """A lazily loaded cassette's index and requests it misses."""

    def __init__(self, count: int, folder: Path) -> None:
        self.path = folder / f"miss{count}.cassette.json"
        recorded = _gemini_traffic.cassette(count)
        save_cassette(recorded, self.path)
        exchanges = load_cassette(self.path, lazy=True).exchanges
        assert isinstance(exchanges, LazyExchanges)
        exchanges.keep_only_in_use()  # as rec serve holds them: a model let go once used
        self.exchanges = exchanges
        self.index = MatchIndex(exchanges)
        picks = [round(i * (count - 1) / (_MISSES - 1)) for i in range(_MISSES)]
        self.requests = [(p, _missing(recorded.exchanges[p])) for p in picks]  # none parsed

    def measure(self) -> float:
        """Median seconds of one miss: lookup, nearest, explanation."""
        times = []
        for position, request in self.requests:
            started = time.perf_counter()
            assert self.index.lookup(request) is None
            nearest = self.index.nearest(request)
            miss = explain_miss(request, nearest, cassette_path=self.path)
            times.append(time.perf_counter() - started)
            assert nearest is not None and nearest.id == self.exchanges.written(position)[0]
            assert miss.diff and miss.diff[0].startswith("systemInstruction changed"), miss.diff
        return statistics.median(times)

    def first(self) -> float:
        """CPU seconds of the first miss of a fresh index (it groups the side index's
        columns): CPU, not wall time, as one run of it is all the load's noise."""
        index = MatchIndex(self.exchanges)
        _, request = self.requests[len(self.requests) // 2]
        started = time.process_time()
        assert index.lookup(request) is None
        explain_miss(request, index.nearest(request), cassette_path=self.path)
        return time.process_time() - started

    def parses_per_miss(self) -> float:
        before = self.exchanges.parses()
        self.measure()
        return (self.exchanges.parses() - before) / len(self.requests)


_FIRST_MISS = """
import json, resource, sys
def rss():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20
from cassettes._cassette import JsonBody, load_cassette
from cassettes._matching import MatchIndex
exchanges = load_cassette({path!r}, lazy=True).exchanges
index = MatchIndex(exchanges)
request = exchanges[0].request
request = request.model_copy(update={{"body": JsonBody(value={{**request.body.value, "n": 1}})}})
before, held = set(sys.modules), rss()
from cassettes._divergence import explain_miss
assert index.lookup(request) is None
explain_miss(request, index.nearest(request), cassette_path={path!r})
grown = rss() - held
print(json.dumps([grown, sorted(set(sys.modules) - before)]))
"""


def _first_miss_imports(path: Path) -> tuple[float, list[str]]:
    """The MB of memory (RSS) a fresh interpreter grows by and the modules it imports to
    explain its first miss."""
    import cassettes  # the tree measured (PYTHONPATH), not necessarily this script's

    root = str(Path(cassettes.__file__).resolve().parents[1])
    code = _FIRST_MISS.format(path=str(path))
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={"PYTHONPATH": root, "PATH": "/usr/bin:/bin"},
    )
    grown, modules = json.loads(out.stdout.splitlines()[-1])
    return float(grown), list(modules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 exchanges")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    large = 1_000 if args.quick else 10_000
    with tempfile.TemporaryDirectory() as folder:
        small_miss, large_miss = _Miss(100, Path(folder)), _Miss(large, Path(folder))
        parses = large_miss.parses_per_miss()
        rounds = Rounds().run(
            {
                "small": small_miss.measure,
                "large": large_miss.measure,
                "first": large_miss.first,
            },
            repeat=args.rounds,
        )
        grown, imported = _first_miss_imports(small_miss.path)
    heavy = sorted({m.split(".")[0] for m in imported} & set(HEAVY))
    small_ms, large_ms = rounds.median("small") * 1e3, rounds.median("large") * 1e3
    floor = f"a miss on 100 exchanges {small_ms:.1f} ms"
    label = f"miss on {large:,} exchanges"
    verdict(label, f"{large_ms:.1f} ms", floor, f"<= {GOAL_MS:.0f} ms", large_ms <= GOAL_MS)
    first_ms = rounds.median("first") * 1e3
    verdict(
        f"first {label} (CPU)",
        f"{first_ms:.1f} ms",
        floor,
        f"<= {GOAL_MS:.0f} ms",
        first_ms <= GOAL_MS,
    )
    ratio = rounds.ratio("large", "small")
    verdict(f"{label} / on 100", f"{ratio:.2f}x", floor, f"<= {GOAL_RATIO}x", ratio <= GOAL_RATIO)
    verdict(
        f"exchanges parsed a {label}",
        f"{parses:.1f}",
        f"{_MISSES} misses",
        f"<= {GOAL_PARSES}",
        parses <= GOAL_PARSES,
    )
    verdict(
        "heavy modules the first miss imports",
        f"{len(heavy)} ({', '.join(heavy) or 'none'}; {len(imported)} modules in all,"
        f" RSS +{grown:.1f} MB)",
        "python with a cassette loaded",
        None,
        None,
    )


if __name__ == "__main__":
    main()
