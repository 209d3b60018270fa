"""Per request through httpx: rec against the cassette libraries it is measured by.

    python bench/bench_anchors.py [--sizes 1000,10000] [--samples 200] [--repeat 3]

For each cassette size, growing agent conversations (``_gemini_traffic.py``, 2.5 kB
requests, a quarter of them streamed) are replayed through one sync ``httpx.Client``, each
of ``--samples`` recorded requests once in random order, ``--repeat`` interleaved rounds
(a fresh replay each round), the median time a request taken. The same requests are
answered by:

- **httpx.MockTransport**: the recorded response bytes looked up by the request's bytes
  in a dict (the floor of any in-process answer through httpx);
- **rec in-process**: ``rec.replay()``'s in-process httpx transport (what google-genai
  clients built in a ``rec.replay()`` block or the ``rec`` fixture send through);
- **rec loopback**: the same replay over its loopback socket (what ``rec serve`` and the
  other processes of ``rec replay`` get);
- **cassetter** (a Rust-core cassette library, matching on method, URI and body): installed
  by the bench into a folder of its own under the temporary directory when it is not
  importable; its cassette recorded once through a local server, as TOML (its YAML reader refuses
  a 10k-exchange cassette: a node budget);
- **vcrpy** (matching on method, URI and body), sampled within ``--vcr-budget`` seconds a
  round: it scans the cassette for each request.

Goals: rec in-process <= 0.3 ms a request at every size, <= 2.5x MockTransport, and faster
than cassetter at every size.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gemini_traffic  # noqa: E402
import httpx  # noqa: E402
from _canned_server import Canned, CannedServer  # noqa: E402
from _measure import table, verdict  # noqa: E402

from cassettes._bodies import body_to_bytes  # noqa: E402
from cassettes._cassette import Exchange, JsonBody  # noqa: E402
from cassettes._cassette_writer import save_cassette  # noqa: E402
from replayer._replay_api import replay  # noqa: E402

try:  # the tree being measured may predate the in-process transport of rec.replay()
    from replayer._in_process import SyncReplayTransport
except ImportError:  # pragma: no cover - older trees
    SyncReplayTransport = None  # type: ignore[assignment,misc]

GOAL_MS = 0.3
GOAL_VS_MOCK = 2.5
CASSETTER = "cassetter"

Request = tuple[str, bytes]
"""A recorded request as sent: its path and query, and its body's bytes."""
Send = Callable[[httpx.Client, Request], None]


def _cassetter() -> Any:
    """cassetter, installed into a folder of the bench's own when it is not importable."""
    try:
        return importlib.import_module(CASSETTER)
    except ImportError:
        pass
    target = Path(tempfile.gettempdir()) / "rec-bench-anchors"
    if not (target / CASSETTER).exists():
        print(f"  installing {CASSETTER} into {target}", file=sys.stderr)
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target), CASSETTER],
            check=True,
        )
    sys.path.append(str(target))
    return importlib.import_module(CASSETTER)


def _wire(exchange: Exchange) -> tuple[Request, Canned]:
    body = exchange.request.body
    assert isinstance(body, JsonBody)
    path = "/" + exchange.request.url.split("/", 3)[3]
    response = exchange.response
    headers = (("content-type", response.headers.get("content-type", "application/json")),)
    answer = Canned(response.status, headers, body_to_bytes(response.body))
    return (path, json.dumps(body.value).encode()), answer


def _post(client: httpx.Client, request: Request) -> None:
    path, body = request
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    response.read()
    assert response.status_code == 200, response.text[:300]


def _timed(client: httpx.Client, requests: list[Request], budget_s: float = 1e9) -> list[float]:
    """Seconds for each request (stopping after ``budget_s`` once three are timed)."""
    times: list[float] = []
    for request in requests:
        start = time.perf_counter()
        _post(client, request)
        times.append(time.perf_counter() - start)
        if sum(times) > budget_s and len(times) >= 3:
            break
    return times


@contextlib.contextmanager
def _recorded_libraries(
    folder: Path, requests: list[Request], answers: dict[bytes, Canned]
) -> Iterator[str]:
    """Record every request with cassetter and vcrpy through a canned local server;
    yield its URL (the recordings' host)."""
    import vcr

    cassetter = _cassetter()
    with CannedServer(lambda method, target, body: answers[body]) as server:
        with (
            cassetter.use_cassette(folder / "cassetter.toml", record_mode="all"),
            httpx.Client(base_url=server.url) as client,
        ):
            for request in requests:
                _post(client, request)
        with (
            vcr.use_cassette(str(folder / "vcrpy.yaml"), record_mode="all"),
            httpx.Client(base_url=server.url) as client,
        ):
            for request in requests:
                _post(client, request)
        yield server.url


def _round(
    cassette: Path, url: str, folder: Path, picks: list[Request], answers: dict[bytes, Canned]
) -> dict[str, list[float]]:
    """One round of every contender; seconds a request, by contender."""
    import vcr

    cassetter = _cassetter()
    found: dict[str, list[float]] = {}

    def mocked(request: httpx.Request) -> httpx.Response:
        canned = answers[request.content]
        return httpx.Response(canned.status, headers=list(canned.headers), content=canned.body)

    with httpx.Client(transport=httpx.MockTransport(mocked), base_url=url) as client:
        found["httpx.MockTransport"] = _timed(client, picks)
    if SyncReplayTransport is not None:
        with replay(cassette, point_clients=False) as replaying:
            transport = SyncReplayTransport(replaying.handler, replaying.url)
            with httpx.Client(transport=transport, base_url=replaying.url) as client:
                found["rec in-process"] = _timed(client, picks)
    with replay(cassette, point_clients=False) as replaying:
        with httpx.Client(base_url=replaying.url, trust_env=False) as client:
            found["rec loopback"] = _timed(client, picks)
    match = ["method", "uri", "body"]
    with (
        cassetter.use_cassette(folder / "cassetter.toml", record_mode="none", match_on=match),
        httpx.Client(base_url=url) as client,
    ):
        found["cassetter"] = _timed(client, picks)
    with (
        vcr.use_cassette(
            str(folder / "vcrpy.yaml"),
            record_mode="none",
            match_on=match,
            allow_playback_repeats=True,
        ),
        httpx.Client(base_url=url) as client,
    ):
        found["vcrpy"] = _timed(client, picks, budget_s=ARGS.vcr_budget)
    return found


def _size(size: int, rng: random.Random) -> dict[str, float]:
    """Median ms a request by contender, for a cassette of ``size`` exchanges."""
    exchanges = _gemini_traffic.exchanges(size)
    wires = [_wire(e) for e in exchanges]
    requests = [request for request, _ in wires]
    answers = {request[1]: answer for request, answer in wires}
    with tempfile.TemporaryDirectory(prefix="rec-bench-anchors-") as name:
        folder = Path(name)
        cassette = folder / "rec.cassette.json"
        save_cassette(_gemini_traffic.cassette(size), cassette)
        with _recorded_libraries(folder, requests, answers) as url:
            pass  # the server stops: every library replays with nothing listening
        picks = [requests[i] for i in rng.sample(range(size), min(size, ARGS.samples))]
        times: dict[str, list[float]] = {}
        for _ in range(ARGS.repeat):
            for name_, each in _round(cassette, url, folder, picks, answers).items():
                times.setdefault(name_, []).append(statistics.median(each))
    print(f"  measured {size:,} exchanges", file=sys.stderr)
    return {name_: 1000 * statistics.median(each) for name_, each in times.items()}


ARGS = argparse.Namespace(samples=200, repeat=3, vcr_budget=3.0)


def main() -> None:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--samples", type=int, default=200, help="requests a round")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--vcr-budget", type=float, default=3.0, help="seconds of vcrpy a round")
    ARGS = parser.parse_args()
    rng = random.Random(1)
    sizes = [int(size) for size in ARGS.sizes.split(",")]
    results = {size: _size(size, rng) for size in sizes}
    names = list(next(iter(results.values())))
    rows = [(name, *(f"{results[size][name]:.3f}" for size in sizes)) for name in names]
    print(table(rows, ("ms a request through httpx", *(f"{size:,}" for size in sizes))))
    for size in sizes:
        _verdicts(size, results[size])


def _verdicts(size: int, got: dict[str, float]) -> None:
    """The goals at one size; rec over its loopback socket is kept as a figure."""
    floor = f"MockTransport {got['httpx.MockTransport']:.3f} ms"
    anchor = f"cassetter {got['cassetter']:.3f} ms, vcrpy {got['vcrpy']:.3f} ms"
    loopback = got["rec loopback"]
    verdict(f"{size:,}: rec loopback", f"{loopback:.3f} ms", floor, None, None, anchor=anchor)
    if "rec in-process" not in got:
        print("rec in-process: not in this tree (goals not measured)")
        return
    rec = got["rec in-process"]
    vs_mock = rec / got["httpx.MockTransport"]
    vs_cassetter = rec / got["cassetter"]
    verdict(
        f"{size:,}: rec in-process",
        f"{rec:.3f} ms",
        floor,
        f"<= {GOAL_MS} ms",
        rec <= GOAL_MS,
        anchor=anchor,
    )
    verdict(
        f"{size:,}: rec in-process / MockTransport",
        f"{vs_mock:.2f}x",
        floor,
        f"<= {GOAL_VS_MOCK}x",
        vs_mock <= GOAL_VS_MOCK,
        anchor=anchor,
    )
    verdict(
        f"{size:,}: rec in-process / cassetter",
        f"{vs_cassetter:.2f}x",
        floor,
        "< 1x (faster than cassetter)",
        vs_cassetter < 1,
        anchor=anchor,
    )


if __name__ == "__main__":
    main()
