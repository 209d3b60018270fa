"""Time to first chunk through the recording proxy vs straight to the server.

Two upstreams stream 5 events 300 ms apart: the stand-in Gemini server, and a minimal
server (``bench/_canned_server.py``) that, as real servers may, writes the headers and the
first event as two small writes with Nagle's algorithm on. The real google-genai client
(sync, httpx) reads the stream directly, then through ``rec.record``, interleaved;
each run is timed from the call to the arrival of the first and the last chunk. Goal: the
proxy adds at most 5 ms to the time to first chunk (it must never buffer the stream, nor
let Nagle / delayed ACKs hold the first event).

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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _canned_server import CannedServer, gemini_answer  # noqa: E402
from _measure import verdict  # noqa: E402
from google import genai  # noqa: E402
from google.genai import types  # noqa: E402

from rec.standin.replies import FAKE_API_KEY, Reply
from rec.standin.server import StandinGemini
from recorder._recorder import Recorder  # noqa: E402
from recorder._traffic import Upstreams  # noqa: E402

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
    nagle = CannedServer(gemini_answer(events=EVENTS, gap_s=GAP_S), nagle=True)
    with StandinGemini(responder) as standin, nagle, tempfile.TemporaryDirectory() as tmp:
        for label, upstream in (
            ("stand-in", standin.url),
            ("Nagle on, split writes", nagle.url),
        ):
            # The recorder alone (no capture of this process's own httpx calls, which would
            # take the direct client's stream for a tool's call).
            recorder = Recorder(
                Path(tmp) / label.split()[0],
                name="bench",
                upstreams=Upstreams(gemini=upstream),
                write_evalset=False,
            )
            with recorder.running_in_thread() as rec:
                time_stream(upstream)  # warm up both paths
                time_stream(rec.url)
                direct, proxied = [], []
                for _ in range(args.runs):
                    direct.append(time_stream(upstream))
                    proxied.append(time_stream(rec.url))
            _report(label, direct, proxied, args.runs)


def _report(
    label: str,
    direct: list[tuple[float, float]],
    proxied: list[tuple[float, float]],
    runs: int,
) -> None:
    def med(values: list[tuple[float, float]], i: int) -> float:
        return statistics.median(v[i] for v in values)

    rows = [
        ("direct", med(direct, 0), med(direct, 1)),
        ("through rec (record)", med(proxied, 0), med(proxied, 1)),
    ]
    print(
        f"upstream: {label}; stream of {EVENTS} events {int(GAP_S * 1000)} ms apart, "
        f"median of {runs} interleaved runs"
    )
    print(f"{'path':<24}{'first chunk ms':>16}{'last chunk ms':>16}")
    for name, first, last in rows:
        print(f"{name:<24}{first:>16.2f}{last:>16.2f}")
    overhead = rows[1][1] - rows[0][1]
    floor = f"direct first chunk {rows[0][1]:.2f} ms"
    label = f"{label}: time-to-first-chunk, record - direct"
    verdict(label, f"{overhead:+.2f} ms", floor, "<= 5 ms", overhead <= 5.0)
    print()


if __name__ == "__main__":
    main()
