"""Time to first chunk through the recording proxy vs straight to the server.

The stand-in Gemini server streams 5 events 300 ms apart. The real google-genai client
(sync, httpx) reads the stream directly, then through ``recorder.record``; each run is
timed from the call to the arrival of the first and the last chunk. Goal: the proxy adds
at most 5 ms to the time to first chunk (it must never buffer the stream).

Run:  python bench/bench_stream_latency.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from google import genai  # noqa: E402
from google.genai import types  # noqa: E402

from recorder import record  # noqa: E402
from standin import FAKE_API_KEY, Reply, StandinGemini

EVENTS = 5
GAP_S = 0.3


def responder(request):  # type: ignore[no-untyped-def]
    if request.rpc == "streamGenerateContent":
        return Reply.text("one two three four five", chunks=EVENTS, delay_s=GAP_S)
    return None


def time_stream(base_url: str) -> tuple[float, float]:
    client = genai.Client(api_key=FAKE_API_KEY, http_options=types.HttpOptions(base_url=base_url))
    start = time.perf_counter()
    first = last = 0.0
    for i, _chunk in enumerate(
        client.models.generate_content_stream(model="gemini-2.0-flash", contents="count")
    ):
        now = time.perf_counter() - start
        if i == 0:
            first = now
        last = now
    return first * 1000, last * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    os.environ.pop("GOOGLE_GEMINI_BASE_URL", None)
    with StandinGemini(responder) as api, tempfile.TemporaryDirectory() as tmp:
        time_stream(api.url)  # warm up both paths
        direct = [time_stream(api.url) for _ in range(args.runs)]
        with record(
            Path(tmp), name="bench", upstream=api.url, point_clients=False, write_evalset=False
        ) as rec:
            time_stream(rec.url)
            proxied = [time_stream(rec.url) for _ in range(args.runs)]

    def med(values: list[tuple[float, float]], i: int) -> float:
        return statistics.median(v[i] for v in values)

    rows = [
        ("direct", med(direct, 0), med(direct, 1)),
        ("through rec (record)", med(proxied, 0), med(proxied, 1)),
    ]
    print(f"stream of {EVENTS} events {int(GAP_S * 1000)} ms apart, median of {args.runs} runs")
    print(f"{'path':<24}{'first chunk ms':>16}{'last chunk ms':>16}")
    for name, first, last in rows:
        print(f"{name:<24}{first:>16.2f}{last:>16.2f}")
    overhead = rows[1][1] - rows[0][1]
    verdict = "OK" if overhead <= 5.0 else "OVER GOAL"
    print(f"time-to-first-chunk overhead: {overhead:+.2f} ms (goal <= 5 ms): {verdict}")


if __name__ == "__main__":
    main()
