"""A large response body through the recording proxy: direct vs ``rec start``, then ``rec stop``.

    python bench/bench_large_body.py [--mb 50] [--repeat 3] [--against OTHER_TREE]

The upstream (``bench/_canned_server.py``, in this process's thread) answers every call
with one JSON body of ``--mb`` megabytes: a Gemini answer whose part is inline image data
(base64), the way a large answer usually arrives. ``rec start`` runs as the real command;
the client (aiohttp) reads the whole body, direct and through the proxy, interleaved.
Each round's time is to the last byte; the ratio is the median of the per-round ratios.
Then ``rec stop`` is timed until the recorder has written its cassette, and the largest
resident set of the recorder, while recording and by the end of the stop, is reported
beside the body's size. ``--against`` runs a second recorder from another source tree in
the same rounds (``git worktree add /tmp/before main``): a change's before and after,
measured under the same load.

Goals: the recorded fetch within 2x the direct one; ``rec stop`` within a few seconds
(goal <= 5 s).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
from _canned_server import Canned, CannedServer  # noqa: E402
from _measure import median_ratio, peak_rss_mb, rec_command, table, verdict  # noqa: E402

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


@dataclass
class _Recorder:
    """One ``rec start``, from this tree or from ``--against``'s."""

    label: str
    env: dict[str, str]
    out: Path
    proc: subprocess.Popen[str] | None = None
    url: str = ""
    seconds: list[float] = field(default_factory=list)
    recording_peak_mb: float = 0.0
    stop_s: float = 0.0
    stop_peak_mb: float = 0.0

    def start(self, upstream: str) -> None:
        argv = [*rec_command(), "start", "--out", str(self.out), "--upstream", upstream, "-q"]
        self.proc, self.url = _spawn(argv, self.env)

    def stop(self) -> None:
        """Time ``rec stop`` until the recorder has written its cassette; its peak RSS
        (``VmHWM``, polled while it finalises: it only grows) before and during the stop."""
        assert self.proc is not None
        self.recording_peak_mb = peak_rss_mb(self.proc.pid)
        peak = [self.recording_peak_mb]
        done = threading.Event()

        def poll() -> None:
            while not done.wait(0.01):
                try:
                    peak[0] = max(peak[0], peak_rss_mb(self.proc.pid))  # type: ignore[union-attr]
                except (OSError, RuntimeError):
                    return  # it has exited

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        start = time.perf_counter()
        stop = [*rec_command(), "stop", "--out", str(self.out)]
        subprocess.run(stop, env=self.env, check=True, stdout=subprocess.DEVNULL)
        self.proc.wait(timeout=1800)
        self.stop_s = time.perf_counter() - start
        done.set()
        poller.join()
        self.stop_peak_mb = peak[0]

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--against",
        type=Path,
        help="another source tree of rec (a checkout of an earlier commit): its recorder "
        "is measured in the same rounds, interleaved, as the before of a change",
    )
    args = parser.parse_args()
    payload = large_answer(args.mb)
    answer = Canned(body=payload)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env.update(NO_PROXY="127.0.0.1,localhost", PYTHONWARNINGS="ignore")
    trees = [("this tree", str(Path(__file__).resolve().parents[1]))]
    if args.against is not None:
        trees.append((f"against {args.against}", str(args.against.resolve())))
    direct: list[float] = []
    with CannedServer(lambda *_: answer) as upstream, tempfile.TemporaryDirectory() as tmp:
        recorders = [
            _Recorder(label, {**env, "PYTHONPATH": tree}, Path(tmp) / f"big{n}")
            for n, (label, tree) in enumerate(trees)
        ]
        try:
            for recorder in recorders:
                recorder.start(upstream.url)
            for _ in range(args.repeat):
                seconds, size = asyncio.run(fetch(upstream.url))
                assert size == len(payload), (size, len(payload))
                direct.append(seconds)
                for recorder in recorders:
                    seconds, size = asyncio.run(fetch(recorder.url))
                    assert size == len(payload), (size, len(payload))
                    recorder.seconds.append(seconds)
            for recorder in recorders:
                recorder.stop()
            cassettes = list(recorders[0].out.glob("*.cassette.json"))
            cassette_mb = sum(c.stat().st_size for c in cassettes) / 1e6
        finally:
            for recorder in recorders:
                recorder.close()
    body_mb = len(payload) / 1e6
    bodies_mb = body_mb * args.repeat  # what the recorder finalises at once
    print(
        f"{body_mb:.1f} MB JSON body, {args.repeat} interleaved rounds; "
        f"cassette {cassette_mb:.1f} MB"
    )
    rows = [("direct", f"{statistics.median(direct):.2f}", "1.00x", "", "", "")]
    for recorder in recorders:
        ratio = median_ratio(recorder.seconds, direct)
        rows.append(
            (
                f"rec start ({recorder.label})",
                f"{statistics.median(recorder.seconds):.2f}",
                f"{ratio:.2f}x",
                f"{recorder.stop_s:.2f}",
                f"{recorder.recording_peak_mb:.0f} ({recorder.recording_peak_mb / body_mb:.1f}x)",
                f"{recorder.stop_peak_mb:.0f} ({recorder.stop_peak_mb / bodies_mb:.1f}x)",
            )
        )
    header = ("path", "last byte s", "vs direct", "rec stop s", "RSS MB recording", "by stop's end")
    print(table(rows, header))
    mine = recorders[0]
    ratio = median_ratio(mine.seconds, direct)
    floor = f"direct {statistics.median(direct):.2f} s"
    verdict("recorded fetch / direct", f"{ratio:.2f}x", floor, "<= 2x", ratio <= 2)
    stop = f"rec stop after {args.repeat} large exchanges"
    verdict(stop, f"{mine.stop_s:.2f} s", "none (seconds)", "<= 5 s", mine.stop_s <= 5)
    print(
        f"recorder peak RSS: {mine.stop_peak_mb:.0f} MB by the end of rec stop "
        f"({mine.stop_peak_mb / bodies_mb:.1f}x the {args.repeat} bodies it finalises at once); "
        f"{mine.recording_peak_mb:.0f} MB while recording ({mine.recording_peak_mb / body_mb:.1f}x "
        "one body)"
    )


if __name__ == "__main__":
    main()
