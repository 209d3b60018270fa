"""A large response body through the recording proxy: direct vs ``rec start``, then ``rec stop``.

    python bench/bench_large_body.py [--mb 50] [--repeat 3]

The upstream (``bench/_canned_server.py``, in this process's thread) answers every call
with one JSON body of ``--mb`` megabytes: a Gemini answer whose part is inline image data
(base64), the way a large answer usually arrives. ``rec start`` runs as the real command;
the client (aiohttp) reads the whole body, direct and through the proxy, interleaved.
Each round's time is to the last byte; the ratio is the median of the per-round ratios.
Then ``rec stop`` is timed until the recorder has written its cassette, and the largest
resident set of the recorder (and ``rec stop``) is reported beside the body's size.

Goals: the recorded fetch within 2x the direct one; ``rec stop`` within a few seconds
(goal <= 5 s).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
from _canned_server import Canned, CannedServer  # noqa: E402
from _measure import median_ratio, rec_command, table  # noqa: E402

PATH = "/v1beta/models/gemini-2.5-flash:generateContent"


def large_answer(megabytes: float) -> bytes:
    """A Gemini JSON answer of about ``megabytes`` MB (inline base64 image data)."""
    raw = os.urandom(int(megabytes * 1e6 * 3 / 4))
    data = base64.b64encode(raw).decode("ascii")
    part = {"inlineData": {"mimeType": "image/png", "data": data}}
    doc = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
        "modelVersion": "gemini-2.5-flash",
    }
    return json.dumps(doc).encode()


async def fetch(url: str) -> tuple[float, int]:
    """Seconds to the last byte of one call, and the body's length."""
    headers = {"content-type": "application/json", "x-goog-api-key": "bench-fake-key"}
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "draw"}]}]})
    start = time.perf_counter()
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session,
        session.post(url + PATH, data=body, headers=headers) as response,
    ):
        got = await response.read()
        if response.status != 200:
            raise SystemExit(f"{url}: {response.status} {got[:300]!r}")
    return time.perf_counter() - start, len(got)


def _spawn(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        for word in line.replace("=", " ").split():
            if word.startswith("http://"):
                return proc, word
    raise SystemExit(f"{' '.join(argv)} printed no URL (exit {proc.wait()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    payload = large_answer(args.mb)
    answer = Canned(body=payload)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env.update(NO_PROXY="127.0.0.1,localhost", PYTHONWARNINGS="ignore")
    direct: list[float] = []
    recorded: list[float] = []
    with CannedServer(lambda *_: answer) as upstream, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "big"
        argv = [*rec_command(), "start", "--out", str(out), "--upstream", upstream.url, "-q"]
        recorder, proxy_url = _spawn(argv, env)
        try:
            for _ in range(args.repeat):
                seconds, size = asyncio.run(fetch(upstream.url))
                assert size == len(payload), (size, len(payload))
                direct.append(seconds)
                seconds, size = asyncio.run(fetch(proxy_url))
                assert size == len(payload), (size, len(payload))
                recorded.append(seconds)
            start = time.perf_counter()
            subprocess.run([*rec_command(), "stop", "--out", str(out)], env=env, check=True)
            recorder.wait(timeout=1800)
            stop_s = time.perf_counter() - start
            peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e3
            cassettes = list(out.glob("*.cassette.json"))
            cassette_mb = sum(c.stat().st_size for c in cassettes) / 1e6
        finally:
            if recorder.poll() is None:
                recorder.terminate()
                recorder.wait(timeout=60)
    ratio = median_ratio(recorded, direct)
    print(
        f"{len(payload) / 1e6:.1f} MB JSON body, {args.repeat} interleaved rounds; "
        f"cassette {cassette_mb:.1f} MB"
    )
    rows = [
        ("direct", f"{statistics.median(direct):.2f}", "1.00x"),
        ("through rec start", f"{statistics.median(recorded):.2f}", f"{ratio:.2f}x"),
    ]
    print(table(rows, ("path", "last byte s", "vs direct")))
    print(f"recorded fetch: {ratio:.2f}x direct (goal <= 2x): {'met' if ratio <= 2 else 'NOT met'}")
    verdict = "met" if stop_s <= 5 else "NOT met"
    print(f"rec stop after {args.repeat} large exchanges: {stop_s:.2f} s (goal <= 5 s): {verdict}")
    print(
        f"recorder peak RSS: {peak_mb:.0f} MB ({peak_mb / (len(payload) / 1e6):.1f}x the body; "
        "recording, then finalising every body at once)"
    )


if __name__ == "__main__":
    main()
