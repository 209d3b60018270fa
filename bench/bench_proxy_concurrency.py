"""The proxy under concurrent clients: direct vs ``rec start`` (record) vs ``rec serve`` (replay).

    python bench/bench_proxy_concurrency.py [--clients 1,10,50] [--requests 400] [--repeat 3]

The upstream is ``bench/_canned_server.py --nagle`` in its own process: Gemini-shaped
answers, a stream's headers and first event written separately with Nagle's algorithm
on, as real servers may. ``rec start`` and ``rec serve`` run as the real commands, each in
its own process; the load generator (aiohttp clients, one keep-alive connection each) runs
in this process. Request bodies are real agent requests (``bench/_gemini_traffic.py``,
every fourth conversation streamed), all distinct.

A warm-up recording through a first ``rec start`` captures every request; it is stopped
and served by ``rec serve``, while a second ``rec start`` records the timed rounds. Each
round sends ``--requests`` requests split over the clients, to each target in turn
(interleaved); requests/s is per round, ratios are medians of per-round ratios against
direct. Latency percentiles pool every round's requests; "first chunk" is the time to
the first body bytes of streamed answers.

A fourth target, ``bare``, is ``bench/_bare_proxy.py``: a pass-through proxy on the parts
rec's recorder forwards with (aiohttp's server and client on uvloop) and nothing else. It
is the floor of any proxy on these parts on this machine; what recording costs beyond it
is rec's own share, printed beside each goal.

A second table gives the CPU each process spent per request (from ``/proc``: the load
generator, the upstream, and the proxy with its threads and children, the recorder's
build worker included) and how many cores each run kept busy. When that is the machine's
core count, requests/s is bound by the CPU the processes share, and each goal leaves the
recorder a CPU budget per request, printed beside its verdict.

Goals: recording >= 0.8x direct requests/s at 10 clients and >= 0.6x at 50; p50 overhead
<= 1 ms at 1 client; the recorder's CPU a request (its build worker included) <= 1.5x the
bare proxy's at each client count (the machine-independent figure: both are measured in
the same rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gemini_traffic  # noqa: E402
import aiohttp  # noqa: E402
from _measure import cpu_seconds, median_ratio, rec_command, table, verdict  # noqa: E402

HERE = Path(__file__).resolve().parent
TARGETS = ("direct", "bare", "record", "replay")


@dataclass
class Load:
    """What one run of the load generator saw."""

    seconds: float
    latencies: list[float]
    first_chunks: list[float] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        return len(self.latencies) / self.seconds


def _requests(total: int) -> list[tuple[str, bytes]]:
    """Distinct (path, body) pairs, as an ADK agent sends them."""
    out = []
    for exchange in _gemini_traffic.exchanges(total, requests_per_conversation=8):
        path = "/" + exchange.request.url.split("/", 3)[3]
        body = json.dumps(exchange.request.body.value).encode()  # type: ignore[union-attr]
        out.append((path, body))
    return out


async def _load(url: str, clients: int, requests: list[tuple[str, bytes]]) -> Load:
    headers = {"content-type": "application/json", "x-goog-api-key": "bench-fake-key"}
    latencies: list[float] = []
    first_chunks: list[float] = []

    async def client(mine: list[tuple[str, bytes]]) -> None:
        connector = aiohttp.TCPConnector(limit=1)
        async with aiohttp.ClientSession(url, connector=connector) as session:
            for path, body in mine:
                start = time.perf_counter()
                async with session.post(path, data=body, headers=headers) as response:
                    first = await response.content.readany()
                    if "alt=sse" in path:
                        first_chunks.append(time.perf_counter() - start)
                    rest = await response.read()
                    if response.status != 200:
                        raise RuntimeError(f"{url}{path}: {response.status} {first + rest!r}"[:400])
                latencies.append(time.perf_counter() - start)

    shares = [requests[i::clients] for i in range(clients)]
    start = time.perf_counter()
    await asyncio.gather(*(client(share) for share in shares))
    return Load(time.perf_counter() - start, latencies, first_chunks)


def _spawn(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """Start a server process; its URL (first ``http://`` word on stdout)."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        for word in line.replace("=", " ").split():
            if word.startswith("http://"):
                return proc, word
    raise SystemExit(f"{' '.join(argv)} printed no URL (exit {proc.wait()})")


def _stop(out: Path, env: dict[str, str], recorder: subprocess.Popen[str]) -> float:
    """``rec stop``, then wait for the recorder to finish its cassette; seconds until it has."""
    start = time.perf_counter()
    subprocess.run([*rec_command(), "stop", "--out", str(out)], env=env, check=False)
    recorder.wait(timeout=1800)
    return time.perf_counter() - start


@dataclass
class Cpu:
    """CPU milliseconds per request of one run, by role; None where ``/proc`` cannot tell."""

    load: float
    upstream: float | None
    proxy: float | None
    """The proxy's process with its threads and children (the recorder's build worker);
    0 for ``direct``."""

    @property
    def known(self) -> bool:
        return self.upstream is not None and self.proxy is not None

    @property
    def total(self) -> float:
        return self.load + (self.upstream or 0.0) + (self.proxy or 0.0)


def _cpu_now(pids: dict[str, int | None]) -> dict[str, float | None]:
    now: dict[str, float | None] = {"load": time.process_time()}
    for role, pid in pids.items():
        now[role] = 0.0 if pid is None else cpu_seconds(pid)
    return now


def _cpu_spent(
    before: dict[str, float | None], after: dict[str, float | None], requests: int
) -> Cpu:
    def per_request(role: str) -> float | None:
        start, end = before[role], after[role]
        return None if start is None or end is None else (end - start) * 1000 / requests

    return Cpu(per_request("load") or 0.0, per_request("upstream"), per_request("proxy"))


def _cpu_table(
    levels: list[int],
    cpu: dict[tuple[int, str], list[Cpu]],
    runs: dict[tuple[int, str], list[Load]],
) -> str:
    """CPU per request by process, and how many of the machine's cores the run kept busy:
    near ``os.cpu_count()``, requests/s is bound by the CPU all the processes share."""
    rows = []
    for clients in levels:
        for target in TARGETS:
            samples, loads = cpu[(clients, target)], runs[(clients, target)]
            busy = statistics.median(
                c.total * len(x.latencies) / 1000 / x.seconds
                for c, x in zip(samples, loads, strict=True)
            )
            rows.append(
                (
                    f"{clients} client{'s' if clients > 1 else ''}, {target}",
                    f"{statistics.median(c.load for c in samples):.2f}",
                    f"{statistics.median(c.upstream or 0.0 for c in samples):.2f}",
                    f"{statistics.median(c.proxy or 0.0 for c in samples):.2f}",
                    f"{statistics.median(c.total for c in samples):.2f}",
                    f"{busy:.2f} of {os.cpu_count()}",
                )
            )
    header = ("CPU ms/request", "load generator", "upstream", "proxy", "total", "cores busy")
    return table(rows, header)


def _cpu_budget(
    clients: int,
    goal: float,
    cpu: dict[tuple[int, str], list[Cpu]],
    runs: dict[tuple[int, str], list[Load]],
) -> str:
    """The CPU the goal leaves the recorder: ``goal`` x direct's requests/s, with every
    core busy, allows ``cores / that rate`` of CPU a request for all the processes, of
    which the load generator and the upstream take their share."""
    direct = statistics.median(x.per_second for x in runs[(clients, "direct")])
    record = cpu[(clients, "record")]
    others = statistics.median(c.load + (c.upstream or 0.0) for c in record)
    rec = statistics.median(c.proxy or 0.0 for c in record)
    cores = os.cpu_count() or 1
    allowed = cores * 1000 / (goal * direct) - others
    return (
        f"  CPU: the recorder spends {rec:.2f} ms a request. {goal}x direct is "
        f"{goal * direct:,.0f} req/s: with all {cores} cores busy, at most "
        f"{cores * 1000 / (goal * direct):.2f} ms a request in all, of which the load "
        f"generator and the upstream take {others:.2f} ms; {allowed:.2f} ms are left"
    )


CPU_GOAL = 1.5
"""The recorder's CPU a request, at most this many times the bare proxy's."""


def _cpu_verdicts(levels: list[int], cpu: dict[tuple[int, str], list[Cpu]]) -> None:
    """The recorder's CPU a request against the bare proxy's, per client count: the median
    of the rounds' ratios, with its goal and verdict."""
    for clients in levels:
        record = [c.proxy or 0.0 for c in cpu[(clients, "record")]]
        bare = [c.proxy or 0.0 for c in cpu[(clients, "bare")]]
        if not all(bare):
            continue
        ratio = median_ratio(record, bare)
        verdict(
            f"recorder CPU a request at {clients} client{'s' if clients > 1 else ''} / bare",
            f"{ratio:.2f}x",
            f"the bare proxy's CPU {statistics.median(bare):.2f} ms a request",
            f"<= {CPU_GOAL}x",
            ratio <= CPU_GOAL,
        )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:  # noqa: C901
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,10,50")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    levels = [int(c) for c in args.clients.split(",")]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env.update(NO_PROXY="127.0.0.1,localhost", PYTHONWARNINGS="ignore")
    rec = rec_command()
    requests = _requests(args.requests)
    procs: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        warm, timed = Path(tmp) / "warm", Path(tmp) / "timed"
        try:
            upstream, upstream_url = _spawn(
                [sys.executable, str(HERE / "_canned_server.py"), "--nagle"], env
            )
            procs.append(upstream)
            bare, bare_url = _spawn(
                [sys.executable, str(HERE / "_bare_proxy.py"), "--upstream", upstream_url], env
            )
            procs.append(bare)
            start_args = ["--upstream", upstream_url, "--no-evalset", "-q"]
            recorder, warm_url = _spawn([*rec, "start", "--out", str(warm), *start_args], env)
            procs.append(recorder)
            for clients in levels:
                asyncio.run(_load(warm_url, clients, requests))
            _stop(warm, env, recorder)
            [cassette] = warm.glob("*.cassette.json")
            size_mb = cassette.stat().st_size / 1e6
            recorder, record_url = _spawn([*rec, "start", "--out", str(timed), *start_args], env)
            procs.append(recorder)
            server, replay_url = _spawn([*rec, "serve", str(cassette), "-q"], env)
            procs.append(server)
            urls = {
                "direct": upstream_url,
                "bare": bare_url,
                "record": record_url,
                "replay": replay_url,
            }
            proxies = {"bare": bare.pid, "record": recorder.pid, "replay": server.pid}
            runs: dict[tuple[int, str], list[Load]] = {}
            cpu: dict[tuple[int, str], list[Cpu]] = {}
            for _ in range(args.repeat):
                for clients in levels:
                    for target in TARGETS:
                        pids = {"upstream": upstream.pid, "proxy": proxies.get(target)}
                        before = _cpu_now(pids)
                        load = asyncio.run(_load(urls[target], clients, requests))
                        runs.setdefault((clients, target), []).append(load)
                        spent = _cpu_spent(before, _cpu_now(pids), len(load.latencies))
                        cpu.setdefault((clients, target), []).append(spent)
            recorded = sum(len(runs[(c, "record")]) for c in levels) * len(requests)
            stop_s = _stop(timed, env, recorder)
            server.terminate()
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.terminate()
                proc.wait(timeout=1800)

    print(
        f"{len(requests)} requests per run ({cassette.name} of the warm-up: {size_mb:.1f} MB), "
        f"{args.repeat} interleaved rounds; upstream with Nagle on, headers and first event "
        "written separately"
    )
    rows = []
    for clients in levels:
        direct = runs[(clients, "direct")]
        for target in TARGETS:
            loads = runs[(clients, target)]
            latencies = [x for load in loads for x in load.latencies]
            firsts = [x for load in loads for x in load.first_chunks]
            ratio = median_ratio([x.per_second for x in loads], [x.per_second for x in direct])
            rows.append(
                (
                    f"{clients} client{'s' if clients > 1 else ''}, {target}",
                    f"{statistics.median(x.per_second for x in loads):,.0f}",
                    f"{ratio:.2f}x",
                    f"{_pct(latencies, 0.5):.1f}",
                    f"{_pct(latencies, 0.99):.1f}",
                    f"{_pct(firsts, 0.5):.1f}" if firsts else "",
                )
            )
    print(table(rows, ("clients, path", "req/s", "vs direct", "p50 ms", "p99 ms", "1st chunk p50")))

    def p50(clients: int, target: str) -> float:
        return _pct([x for load in runs[(clients, target)] for x in load.latencies], 0.5)

    def vs_direct(clients: int, target: str) -> float:
        return median_ratio(
            [x.per_second for x in runs[(clients, target)]],
            [x.per_second for x in runs[(clients, "direct")]],
        )

    if all(c.known for samples in cpu.values() for c in samples):
        print()
        print(_cpu_table(levels, cpu, runs))
        _cpu_verdicts(levels, cpu)
    for clients, goal in ((10, 0.8), (50, 0.6)):
        if clients not in levels:
            continue
        ratio = vs_direct(clients, "record")
        verdict(
            f"recording at {clients} clients / direct req/s",
            f"{ratio:.2f}x",
            f"the bare proxy {vs_direct(clients, 'bare'):.2f}x direct",
            f">= {goal}x",
            ratio >= goal,
        )
        if all(c.known for c in cpu[(clients, "record")] + cpu[(clients, "direct")]):
            print(_cpu_budget(clients, goal, cpu, runs))
    if 1 in levels:
        overhead = p50(1, "record") - p50(1, "direct")
        floor = p50(1, "bare") - p50(1, "direct")
        verdict(
            "recording p50 overhead at 1 client",
            f"{overhead:+.2f} ms",
            f"the bare proxy {floor:+.2f} ms",
            "<= 1 ms",
            overhead <= 1.0,
        )
    stop = f"rec stop after {recorded:,} recorded exchanges"
    verdict(stop, f"{stop_s:.2f} s", "none (seconds)", None, None)


if __name__ == "__main__":
    main()
