"""Per-request replay lookup time: rec's MatchIndex vs vcrpy's body-matched replay.

For 10 / 100 / 1,000 / 10,000 recorded exchanges of growing agent conversations
(``_gemini_traffic.py``), both sides answer the same requests: up to 500 distinct
recorded requests in random order, each replayed once (as in a real replay):

- rec: ``MatchIndex.lookup(request)``, which canonicalises the request (sorted JSON,
  bytes normalised) and hashes it into the FIFO queues;
- rec from bytes: what the replay decision does per request, from the body's bytes as
  google-genai sends them to the found exchange, on the cassette as replay holds it: the
  file rec wrote (with its side index), loaded lazily, its exchanges parsed beforehand so
  that, as in the other rows, the figure is matching alone (no model built for a hit);
- vcrpy: ``Cassette.play_response(request)`` with ``match_on=(method, uri, body)``
  over the same interactions (vcrpy's own matchers, in-process, no HTTP).

Goals: rec flat, at most 1.5x from 100 to 10,000 exchanges; from bytes <= 20 µs a request
at every size (an absolute figure: it moves with the machine's load, so the floor beside it,
``json.loads`` of the same bodies timed in the same run, shows what the load did: a request
cannot be matched without reading its body once). vcrpy is sampled
fewer times at large sizes (it scans linearly); each figure is a median of per-request times.

Run::

    python bench/bench_replay_lookup.py            # full table
    python bench/bench_replay_lookup.py --quick    # up to 1,000
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gemini_traffic  # noqa: E402
from _measure import verdict  # noqa: E402
from vcr.cassette import Cassette as VcrCassette  # noqa: E402
from vcr.matchers import body, method, uri  # noqa: E402
from vcr.record_mode import RecordMode  # noqa: E402
from vcr.request import Request as VcrRequest  # noqa: E402

from cassettes._cassette import Cassette, Exchange, JsonBody, load_cassette  # noqa: E402
from cassettes._cassette_writer import save_cassette  # noqa: E402
from cassettes._matching import MatchIndex, MatchRules  # noqa: E402

try:  # the tree being measured may predate the wire lookup (alternated with an older one)
    from cassettes._matching import WireRequest  # noqa: E402
except ImportError:  # pragma: no cover - older trees
    WireRequest = None  # type: ignore[assignment,misc]

GOAL_FROM_BYTES_US = 20.0


def _vcr_request(exchange: Exchange) -> VcrRequest:
    assert isinstance(exchange.request.body, JsonBody)
    data = json.dumps(exchange.request.body.value).encode()
    return VcrRequest("POST", exchange.request.url, data, {"content-type": "application/json"})


def _vcr_cassette(exchanges: list[Exchange]) -> VcrCassette:
    cassette = VcrCassette(
        "unused.yaml",
        match_on=(method, uri, body),
        record_mode=RecordMode.NONE,
        allow_playback_repeats=True,
    )
    for exchange in exchanges:
        response = {
            "status": {"code": 200, "message": "OK"},
            "headers": {},
            "body": {"string": b"{}"},
        }
        cassette.append(_vcr_request(exchange), response)
    return cassette


def _time_rec(index: MatchIndex, exchanges: list[Exchange], picks: list[int]) -> list[float]:
    times = []
    for position in picks:
        request = exchanges[position].request
        start = time.perf_counter()
        found = index.lookup(request)
        times.append(time.perf_counter() - start)
        assert found is not None
    return times


def _wire(exchange: Exchange) -> tuple[str, str, bytes]:
    assert isinstance(exchange.request.body, JsonBody)
    return (
        exchange.request.method,
        exchange.request.url,
        json.dumps(exchange.request.body.value).encode(),
    )


def _time_from_bytes(index: MatchIndex, exchanges: list[Exchange], picks: list[int]) -> list[float]:
    """Per request from its wire bytes, as the replay decision matches it."""
    headers = {"content-type": "application/json"}
    wires = [_wire(exchanges[position]) for position in picks]
    times = []
    for verb, url, content in wires:
        start = time.perf_counter()
        if WireRequest is not None:
            found = index.lookup_wire(WireRequest(verb, url, headers, content))
        else:  # older trees: the request model from the body, then the lookup
            from cassettes._bodies import body_from_bytes
            from cassettes._cassette import RecordedRequest

            request = RecordedRequest.model_construct(
                method=verb,
                url=url,
                headers=dict(headers),
                body=body_from_bytes(content, headers["content-type"]),
            )
            found = index.lookup(request)
        times.append(time.perf_counter() - start)
        assert found is not None
    return times


def _as_replayed(exchanges: list[Exchange], folder: Path) -> Sequence[Exchange]:
    """``exchanges`` as replay holds them: saved by rec, loaded lazily from the file, each
    parsed once beforehand (as the in-memory rows hold them)."""
    upstream = _gemini_traffic.BASE.split("/v1beta")[0]
    cassette = Cassette(name="bench", upstream=upstream, exchanges=exchanges)
    loaded = load_cassette(save_cassette(cassette, folder / "bench.cassette.json"), lazy=True)
    for _ in loaded.exchanges:
        pass
    return loaded.exchanges


def _time_floor(exchanges: list[Exchange], picks: list[int]) -> list[float]:
    """Per request, ``json.loads`` of its body's bytes: the least any matching does."""
    bodies = [_wire(exchanges[position])[2] for position in picks]
    times = []
    for content in bodies:
        start = time.perf_counter()
        json.loads(content)
        times.append(time.perf_counter() - start)
    return times


def _time_vcr(
    cassette: VcrCassette, exchanges: list[Exchange], picks: list[int], budget_s: float
) -> list[float]:
    times: list[float] = []
    spent = 0.0
    for position in picks:
        request = _vcr_request(exchanges[position])
        start = time.perf_counter()
        cassette.play_response(request)
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        spent += elapsed
        if spent > budget_s and len(times) >= 3:
            break
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop at 1,000 exchanges")
    parser.add_argument("--samples", type=int, default=500, help="rec lookups per size")
    parser.add_argument("--vcr-budget", type=float, default=5.0, help="seconds of vcrpy per size")
    args = parser.parse_args(argv)

    sizes = [10, 100, 1_000] if args.quick else [10, 100, 1_000, 10_000]
    rng = random.Random(1)
    rows = []
    for size in sizes:
        exchanges = _gemini_traffic.exchanges(size)
        # Each recorded request is replayed once, in random order, on a fresh index: every
        # lookup pays its share of building the index lazily, as in a real replay.
        picks = rng.sample(range(size), min(size, args.samples))
        _time_rec(MatchIndex(exchanges, MatchRules()), exchanges, picks[:20])  # warm up
        index = MatchIndex(exchanges, MatchRules())
        rec_us = statistics.median(_time_rec(index, exchanges, picks)) * 1e6
        with tempfile.TemporaryDirectory(prefix="rec-bench-lookup-") as folder:
            replayed = _as_replayed(exchanges, Path(folder))
            index = MatchIndex(replayed, MatchRules())
            wire_us = statistics.median(_time_from_bytes(index, exchanges, picks)) * 1e6
        floor_us = statistics.median(_time_floor(exchanges, picks)) * 1e6
        vcr_times = _time_vcr(_vcr_cassette(exchanges), exchanges, picks, args.vcr_budget)
        vcr_us = statistics.median(vcr_times) * 1e6
        rows.append((size, rec_us, vcr_us, len(vcr_times), wire_us, floor_us))
        print(f"  measured {size} exchanges", file=sys.stderr)

    base = next(row[1] for row in rows if row[0] == 100)
    print(
        f"{'exchanges':>10} {'rec µs/req':>11} {'vs @100':>8} {'from bytes':>11} "
        f"{'json.loads':>11} {'vcrpy µs/req':>13} {'vcrpy/rec':>10} {'vcr n':>6}"
    )
    for size, rec_us, vcr_us, samples, wire_us, floor_us in rows:
        print(
            f"{size:>10,} {rec_us:>11.1f} {rec_us / base:>7.2f}x {wire_us:>11.1f} "
            f"{floor_us:>11.1f} {vcr_us:>13,.0f} {vcr_us / rec_us:>9,.0f}x {samples:>6}"
        )
    last_size, last = rows[-1][0], rows[-1][1]
    worst = max(row[1] for row in rows if row[0] >= 100) / base
    flat = worst <= 1.5
    print(f"rec at {last_size:,} vs 100: {last / base:.2f}x")
    floor = f"rec at 100 exchanges {base:.1f} µs a request"
    anchor = f"vcrpy at {last_size:,} {rows[-1][2]:,.0f} µs a request"
    slowest = "rec lookup, slowest size / 100 exchanges"
    verdict(slowest, f"{worst:.2f}x", floor, "<= 1.5x", flat, anchor=anchor)
    slowest_wire = max(row[4] for row in rows)
    met = slowest_wire <= GOAL_FROM_BYTES_US
    goal = f"<= {GOAL_FROM_BYTES_US:.0f} µs"
    loads = statistics.median(row[5] for row in rows)
    from_bytes = "rec lookup from bytes, slowest size"
    wire_floor = f"json.loads of the body {loads:.1f} µs ({slowest_wire / loads:.1f}x)"
    verdict(from_bytes, f"{slowest_wire:.1f} µs", wire_floor, goal, met, anchor=anchor)


if __name__ == "__main__":
    main()
