"""``rec serve`` and ``rec replay`` with a 10,000-exchange cassette: peak memory and time.

    python bench/bench_large_cassette.py [--exchanges 10000] [--requests 1000] [--repeat 3]

- ``rec serve CASSETTE``: the real command in its own process, for both traffic shapes
  of ``bench_cassette_load.py`` (8- and 2-request conversations), and for the 8-request
  one again without its side index (copied where rec did not write it, so it is scanned);
  time until it prints its URL (start-up + load + index), then ``--requests`` recorded
  requests are served over one connection (the first exchanges of the file, in recorded
  order), then its peak RSS (``VmHWM``) is read and compared with the cassette's size on
  disk. The first 100 of those requests are timed, each paired with the same request to
  a ``rec serve`` of a small cassette of the same shape (its first 100 exchanges) running
  beside it, the two sent one after the other, first one then the other: the per-request
  cost of a big cassette beside a small one is the ratio of the medians of the two
  servers' request times, so a burst of load on the shared machine hits both sides.
- ``rec replay``: one recorded case of the travel agent (tests/agents/travel), replayed
  from its own small cassette and from the same cassette with 10,000 more exchanges
  appended (an agent's long recording session). Wall time and peak RSS of the process.

Runs are interleaved; figures are medians. Goals: peak RSS of ``rec serve`` after 1,000
requests <= 1.5x the cassette file; a request served from the 10k cassette <= 1.2x one
from the small cassette; ``rec replay`` of one case from the large cassette <= 1.1x the
time and peak RSS of the same case from its small one.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gemini_traffic  # noqa: E402
from _measure import Rounds, peak_rss_mb, rec_command, run_child, table, verdict  # noqa: E402
from _travel import TRAVEL_AGENT, conversations, record_travel  # noqa: E402

from cassettes._cassette_writer import save_cassette  # noqa: E402
from rec.standin.replies import FAKE_API_KEY  # noqa: E402


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env.update(NO_PROXY="127.0.0.1,localhost", PYTHONWARNINGS="ignore")
    return env


_TIMED = 100
"""Requests timed per server (the small cassette holds this many exchanges)."""


def _requests(count: int, per: int) -> list[tuple[str, bytes]]:
    """(path and query, body) of the first ``count`` exchanges of a shape's traffic."""
    out = []
    for exchange in _gemini_traffic.exchanges(count, requests_per_conversation=per):
        path = "/" + exchange.request.url.split("/", 3)[3]
        body = json.dumps(exchange.request.body.value).encode()  # type: ignore[union-attr]
        out.append((path, body))
    return out


class _Served:
    """A ``rec serve`` of one cassette in its own process, and one connection to it."""

    def __init__(self, cassette: Path, env: dict[str, str]) -> None:
        start = time.perf_counter()
        self.proc = subprocess.Popen(
            [*rec_command(), "serve", str(cassette), "-q"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        url = self.proc.stdout.readline().strip().split("=", 1)[1]
        self.ready = time.perf_counter() - start
        """Seconds until it printed its URL."""
        netloc = urllib.parse.urlsplit(url).netloc
        self.connection = http.client.HTTPConnection(netloc, timeout=120)

    def ask(self, number: int, path: str, body: bytes) -> float:
        """Send one recorded request; the seconds until its whole answer was read."""
        began = time.perf_counter()
        self.connection.request("POST", path, body=body, headers=_HEADERS)
        answer = self.connection.getresponse()
        answer.read()
        took = time.perf_counter() - began
        if answer.status != 200:
            raise SystemExit(f"rec serve answered {answer.status} to request {number}")
        return took

    def close(self) -> None:
        self.connection.close()
        self.proc.terminate()
        self.proc.wait(timeout=60)


_HEADERS = {"content-type": "application/json"}


def _serve(
    cassette: Path, small: Path, env: dict[str, str], requests: list[tuple[str, bytes]]
) -> tuple[float, float, float, float]:
    """(seconds until the URL is printed, median seconds per request over the first
    :data:`_TIMED` requests, the same from the small cassette's server asked the same
    requests alternately, peak RSS in MB after all ``requests``)."""
    big, beside = _Served(cassette, env), _Served(small, env)
    try:
        timed: tuple[list[float], list[float]] = ([], [])
        for number, (path, body) in enumerate(requests[:_TIMED]):
            order = (0, 1) if number % 2 else (1, 0)  # who goes first alternates
            for side in order:
                timed[side].append((big, beside)[side].ask(number, path, body))
        for number, (path, body) in enumerate(requests[_TIMED:], start=_TIMED):
            big.ask(number, path, body)
        rss = peak_rss_mb(big.proc.pid)
    finally:
        big.close()
        beside.close()
    return big.ready, statistics.median(timed[0]), statistics.median(timed[1]), rss


def _with_padding(small: Path, padding: int, out: Path) -> None:
    """``small`` plus ``padding`` more exchanges (ids continued), written as rec writes it."""
    from cassettes._cassette import load_cassette

    cassette = load_cassette(small)
    extra = _gemini_traffic.exchanges(padding)
    first = len(cassette.exchanges)
    cassette.exchanges.extend(e.model_copy(update={"id": first + i}) for i, e in enumerate(extra))
    save_cassette(cassette, out)


def _shapes(
    folder: Path, exchanges: int
) -> tuple[dict[str, Path], dict[str, Path], dict[str, int]]:
    """The large cassettes by shape (one also without its side index), a small cassette of
    each one's shape, and each one's requests per conversation."""
    shapes: dict[str, Path] = {}
    smalls: dict[str, Path] = {}
    pers: dict[str, int] = {}
    for per in (8, 2):
        name = f"{per}-request conversations"
        shapes[name] = folder / f"shape{per}.cassette.json"
        save_cassette(
            _gemini_traffic.cassette(exchanges, requests_per_conversation=per), shapes[name]
        )
        smalls[name] = folder / f"small{per}.cassette.json"
        save_cassette(_gemini_traffic.cassette(_TIMED, requests_per_conversation=per), smalls[name])
        pers[name] = per
    # The same file without its side index (a cassette rec did not write): scanned.
    (folder / "bare").mkdir()
    bare = shapes["8-request, no side index"] = folder / "bare" / "shape8.cassette.json"
    shutil.copyfile(shapes["8-request conversations"], bare)
    smalls["8-request, no side index"] = smalls["8-request conversations"]
    pers["8-request, no side index"] = 8
    return shapes, smalls, pers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    env = _env()
    rec = rec_command()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shapes, smalls, pers = _shapes(folder, args.exchanges)
        wanted = {per: _requests(min(args.requests, args.exchanges), per) for per in (8, 2)}
        (folder / "small").mkdir()
        os.environ["GOOGLE_API_KEY"] = FAKE_API_KEY
        evalset = record_travel(folder / "small", conversations(1))
        del os.environ["GOOGLE_API_KEY"]
        small = folder / "small" / "travel.cassette.json"
        large = folder / "large.cassette.json"
        _with_padding(small, args.exchanges, large)

        serve: dict[str, list[tuple[float, float, float]]] = {shape: [] for shape in shapes}
        per_small: dict[str, list[float]] = {shape: [] for shape in shapes}
        replay_rss: dict[str, list[float]] = {"small": [], "large": []}

        def replay(cassette: Path, label: str):  # type: ignore[no-untyped-def]
            def measure() -> float:
                argv = [*rec, "replay", str(TRAVEL_AGENT), str(evalset)]
                argv += ["--recording", str(cassette)]
                done = run_child(argv, env=env)
                if done.returncode != 0:
                    raise SystemExit(done.stderr.decode()[-2000:])
                replay_rss[label].append(done.peak_rss_kb * 1024 / 1e6)
                return done.seconds

            return measure

        def serving(shape: str):  # type: ignore[no-untyped-def]
            def measure() -> float:
                requests = wanted[pers[shape]]
                ready, per, small, rss = _serve(shapes[shape], smalls[shape], env, requests)
                per_small[shape].append(small)
                serve[shape].append((ready, per, rss))
                return ready

            return measure

        replay(small, "small")()  # warm-up
        rounds = Rounds().run(
            {
                **{f"serve {shape}": serving(shape) for shape in shapes},
                "replay small": replay(small, "small"),
                "replay large": replay(large, "large"),
            },
            repeat=args.repeat,
        )
        sizes = {shape: shapes[shape].stat().st_size / 1e6 for shape in shapes}
        small_mb, large_mb = small.stat().st_size / 1e6, large.stat().st_size / 1e6
    _report(args, rounds, serve, per_small, sizes, replay_rss, (small_mb, large_mb))


def _report(  # type: ignore[no-untyped-def]
    args, rounds, serve, per_small, sizes, replay_rss, replay_mb
) -> None:
    print(
        f"{args.exchanges:,} exchanges, {args.requests:,} requests served; "
        f"median of {args.repeat} interleaved rounds"
    )
    rows = []
    for shape in serve:
        rss = statistics.median(r for _, _, r in serve[shape])
        rows.append(
            (
                f"rec serve, {shape}",
                f"{sizes[shape]:.1f}",
                f"{rounds.median(f'serve {shape}'):.2f}",
                f"{statistics.median(q for _, q, _ in serve[shape]) * 1000:.2f}",
                f"{statistics.median(per_small[shape]) * 1000:.2f}",
                f"{rss:.0f}",
                f"{rss / sizes[shape]:.2f}x",
            )
        )
    for label, mb in zip(("small", "large"), replay_mb, strict=True):
        rss = statistics.median(replay_rss[label])
        rows.append(
            (
                f"rec replay of 1 case, {label} cassette",
                f"{mb:.1f}",
                f"{rounds.median(f'replay {label}'):.2f}",
                "",
                "",
                f"{rss:.0f}",
                f"{rss / mb:.1f}x",
            )
        )
    header = ("command", "file MB", "s", "ms/req", f"ms/req, {_TIMED}", "peak RSS MB", "RSS/file")
    print(table(rows, header))
    time_ratio = rounds.ratio("replay large", "replay small")
    rss_ratio = statistics.median(replay_rss["large"]) / statistics.median(replay_rss["small"])
    one_case = f"rec replay of 1 case, small cassette {rounds.median('replay small'):.2f} s"
    case = "rec replay of 1 case, large / small cassette"
    verdict(f"{case}, time", f"{time_ratio:.2f}x", one_case, "<= 1.1x", time_ratio <= 1.1)
    verdict(f"{case}, peak RSS", f"{rss_ratio:.2f}x", one_case, "<= 1.1x", rss_ratio <= 1.1)
    for shape in serve:
        rss = statistics.median(r for _, _, r in serve[shape])
        file = f"the file {sizes[shape]:.1f} MB"
        served = f"rec serve peak RSS after {args.requests:,} requests, {shape} / file"
        ratio = rss / sizes[shape]
        verdict(served, f"{ratio:.2f}x", file, "<= 1.5x", ratio <= 1.5)
        ratio = statistics.median(
            q / small for (_, q, _), small in zip(serve[shape], per_small[shape], strict=True)
        )
        floor = f"a {_TIMED}-exchange cassette {statistics.median(per_small[shape]) * 1000:.2f} ms"
        verdict(
            f"rec serve per request, {shape} / small",
            f"{ratio:.2f}x",
            floor,
            "<= 1.2x",
            ratio <= 1.2,
        )


if __name__ == "__main__":
    main()
