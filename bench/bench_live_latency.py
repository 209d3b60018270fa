"""Time to first server frame of a Gemini Live turn, direct, recording and replaying, beside REST.

Live: the real google-genai Live client opens a session (``client.aio.live.connect``) to the
Live stand-in (``rec.standin.live``), directly, through ``rec.record``'s proxy, and through
a replay of that recording; each run is timed from sending a text turn to the first
``serverContent`` message (the session is already open), and the opening itself (connect +
``setup`` -> ``setupComplete``) is timed too. REST: the same client's
``generate_content_stream`` against the stand-in Gemini API, timed to the first chunk.
Runs are interleaved; the table shows medians, then per path (direct, recording, replaying)
whether the Live figure meets the goal of being no later than the REST one.

Run:  python bench/bench_live_latency.py [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import Rounds, table, verdict  # noqa: E402
from google import genai  # noqa: E402
from google.genai import types  # noqa: E402

from rec.standin.live import StandinLive  # noqa: E402
from rec.standin.replies import FAKE_API_KEY, Reply  # noqa: E402
from rec.standin.server import StandinGemini  # noqa: E402
from recorder._recorder import Recorder  # noqa: E402
from recorder._traffic import (
    ProxyServer,  # noqa: E402
    Upstreams,  # noqa: E402
    install_live_reach,  # noqa: E402
)
from replayer._replay_api import load_cassettes  # noqa: E402
from replayer._replay_handler import ReplayHandler  # noqa: E402

MODEL = "gemini-live-2.5-flash"


def _client(base_url: str) -> genai.Client:
    return genai.Client(api_key=FAKE_API_KEY, http_options=types.HttpOptions(base_url=base_url))


async def _live_once(base_url: str) -> tuple[float, float]:
    """(ms to open the session, ms from the turn to the first server frame)."""
    client = _client(base_url)
    start = time.perf_counter()
    async with client.aio.live.connect(
        model=MODEL, config={"response_modalities": ["TEXT"]}
    ) as session:
        opened = time.perf_counter()
        await session.send_client_content(
            turns={"role": "user", "parts": [{"text": "hello"}]}, turn_complete=True
        )
        sent = time.perf_counter()
        first = None
        async for _message in session.receive():
            if first is None:
                first = time.perf_counter()
    assert first is not None
    return (opened - start) * 1000.0, (first - sent) * 1000.0


def _rest_once(base_url: str) -> float:
    """ms from the call to the first streamed chunk."""
    client = _client(base_url)
    start = time.perf_counter()
    first = None
    for _chunk in client.models.generate_content_stream(model="gemini-2.0-flash", contents="hi"):
        if first is None:
            first = time.perf_counter()
    assert first is not None
    return (first - start) * 1000.0


def _live_measure(url: str, name: str, opened: dict[str, list[float]]) -> Callable[[], float]:
    def measure() -> float:
        open_ms, first_ms = asyncio.run(_live_once(url))
        opened.setdefault(name, []).append(open_ms)
        return first_ms

    return measure


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    os.environ.pop("GOOGLE_GEMINI_BASE_URL", None)
    install_live_reach()
    reply = Reply.text("one two three four five", chunks=5)
    opened: dict[str, list[float]] = {}
    with (
        StandinLive() as live,
        StandinGemini(lambda request: reply) as rest,
        tempfile.TemporaryDirectory() as tmp,
    ):
        recorder = Recorder(Path(tmp), name="bench", upstreams=Upstreams(gemini=live.url))
        rest_recorder = Recorder(
            Path(tmp) / "rest", name="bench", upstreams=Upstreams(gemini=rest.url)
        )
        with recorder.running_in_thread() as recording, rest_recorder.running_in_thread() as r2:
            asyncio.run(_live_once(recording.url))  # what the replay serves
            _rest_once(r2.url)
            measures = {
                "Live direct": _live_measure(live.url, "Live direct", opened),
                "Live through rec (record)": _live_measure(
                    recording.url, "Live through rec (record)", opened
                ),
                "REST direct": lambda: _rest_once(rest.url),
                "REST through rec (record)": lambda: _rest_once(r2.url),
            }
            for measure in measures.values():
                measure()  # warm up
            opened.clear()
            rounds = Rounds().run(measures, repeat=args.runs)
        # Replay once the recordings are written (the replay loads the finished cassettes).
        handler = ReplayHandler(
            load_cassettes([Path(tmp) / "bench.cassette.json", Path(tmp) / "rest"])
        )
        with ProxyServer(handler).running_in_thread() as replaying:
            replayed = {
                "Live replay": _live_measure(replaying.url, "Live replay", opened),
                "REST replay": lambda: _rest_once(replaying.url),
            }
            for measure in replayed.values():
                measure()
            opened.pop("Live replay", None)
            rounds.run(replayed, repeat=args.runs)
        assert not handler.misses, handler.misses[0]

    rows = []
    for name in rounds.samples:
        open_ms = opened.get(name)
        median_open = f"{sorted(open_ms)[len(open_ms) // 2]:.2f}" if open_ms else "-"
        rows.append((name, f"{rounds.median(name):.2f}", median_open))
    print(f"median of {args.runs} interleaved runs (replay runs after recording ends)")
    print(table(rows, ("path", "first server frame ms", "session open ms")))
    # Goal: a Live turn's first frame comes no later than the REST figure on the same path.
    for live_path, rest_path in (
        ("Live direct", "REST direct"),
        ("Live through rec (record)", "REST through rec (record)"),
        ("Live replay", "REST replay"),
    ):
        live_ms, rest_ms = rounds.median(live_path), rounds.median(rest_path)
        ratio = rounds.ratio(live_path, rest_path)
        floor = f"{rest_path} {rest_ms:.2f} ms"
        verdict(f"{live_path} / {rest_path}", f"{ratio:.3g}x", floor, "<= 1x", live_ms <= rest_ms)


if __name__ == "__main__":
    main()
