"""rec's replay paths and their google-genai floors, set up alike, for the replay benches.

An ADK agent's model calls are answered, around a run of its cases on a fresh event loop
(as one ``rec replay`` process runs them), by one of:

- :func:`rec_replay`: rec, on the runner's loop (``rec replay``: a loopback server on that
  loop) or in-process (``rec replay --in-process``: rec's httpx transport);
- :func:`genai_floor`: no rec. The same google-genai clients, with the same one TLS
  context, answered with the recorded response bytes in recorded order (no matching): by a
  minimal HTTP server on the runner's loop (``_canned_server``), the floor of the loopback
  path, or by an httpx transport, the floor of the in-process path.

Both sides point the clients the same way (the base URL, one TLS context), so what a path
costs beyond its floor is rec's own share.

:func:`settle_gc` runs before each timed run: the garbage earlier runs left is collected
and what is alive frozen (``gc.freeze``). Without it a full collection of the process's
startup heap (150 ms here) lands on whichever run crosses the collector's threshold,
always the same one in a given order of measures: one path is charged 9 ms a call that
the others are not.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import statistics
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import httpx
from _canned_server import Canned, CannedServer
from _measure import Rounds

from cassettes._bodies import body_to_bytes
from cassettes._cassette import load_cassette
from cassettes._evalset import EvalSet
from recorder._traffic import pointing_clients_at, spawn
from replayer._adk_runner import run_adk_case
from replayer._agent_loading import LoadedAgent
from replayer._in_process import models_in_process
from replayer._mock_tools import ToolResponseBook, recorded_tool_calls
from replayer._model_clients import model_client_args, shared_tls
from replayer._replay_api import replay_async

__all__ = [
    "Around",
    "InOrder",
    "genai_floor",
    "now",
    "own_share_ms",
    "rec_replay",
    "run_cases",
    "settle_gc",
    "time_by_wall",
]

Around = Callable[[LoadedAgent], contextlib.AbstractAsyncContextManager[object]]
"""What a timed run is entered in, on its own loop, given the agent."""

_DROPPED = ("content-length", "content-encoding", "transfer-encoding")


_clock = time.process_time


def now() -> float:
    """What a timed run is measured by: this process's CPU time, unless
    :func:`time_by_wall`. Every path's work runs in this process (the replay server on the
    runner's loop or in a thread of it, the canned server, the transports), and no other
    process's sharing the cores is counted: on a loaded machine wall time charges a path
    for the runs of others."""
    return _clock()


def time_by_wall(wall: bool) -> str:
    """Measure by wall time (``wall``) or CPU time from now on; the clock's name."""
    global _clock
    _clock = time.perf_counter if wall else time.process_time
    return "wall" if wall else "CPU"


def settle_gc() -> None:
    """Collect the garbage earlier runs left and freeze what is alive (see the module
    docstring): each run then starts from the same collector state, and a full collection
    in it scans only what the run made."""
    gc.collect()
    gc.freeze()


def run_cases(sets: Sequence[tuple[LoadedAgent, EvalSet]], around: Around | None = None) -> float:
    """Seconds (:func:`now`) to run every case of every eval set through rec's ADK case
    runner (mock tools) on a fresh event loop, as one ``rec replay`` process does (ADK builds
    each model's client once per loop), inside ``around`` entered on that loop, from a
    settled collector (:func:`settle_gc`)."""

    async def timed() -> float:
        start = now()
        for agent, evalset in sets:
            for case in evalset.eval_cases:
                book = ToolResponseBook([recorded_tool_calls(i) for i in case.conversation or []])
                out = await run_adk_case(agent, case, book=book)
                assert isinstance(out, list), out
        return now() - start

    async def within() -> float:
        if around is None:
            return await timed()
        async with around(sets[0][0]):
            return await timed()

    settle_gc()
    return asyncio.run(within())


def own_share_ms(rounds: Rounds, name: str, floor: str, calls: int) -> float:
    """rec's own share of a model call on path ``name``, in ms: the median over rounds of
    the path's time less its floor's in the same round (a burst of load hits both)."""
    paired = zip(rounds.samples[name], rounds.samples[floor], strict=True)
    return 1000 * statistics.median(path - base for path, base in paired) / calls


class InOrder:
    """The recorded model responses of ``cassettes``, in recorded order, whatever is asked."""

    def __init__(self, cassettes: Sequence[Path]) -> None:
        self.answers: list[Canned] = []
        for path in cassettes:
            for exchange in load_cassette(path).exchanges:
                if exchange.origin == "tool":
                    continue
                response = exchange.response
                headers = tuple((k, v) for k, v in response.headers.items() if k not in _DROPPED)
                self.answers.append(Canned(response.status, headers, body_to_bytes(response.body)))
        self.position = 0

    def check(self) -> None:
        """Each recorded response was asked for once (the run took the recorded path)."""
        if self.position != len(self.answers):
            raise AssertionError(f"{self.position} model calls for {len(self.answers)} recorded")

    def next(self) -> Canned:
        canned = self.answers[self.position % len(self.answers)]
        self.position += 1
        return canned


class _CannedTransport(httpx.AsyncBaseTransport):
    def __init__(self, answers: InOrder) -> None:
        self.answers = answers

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        canned = self.answers.next()
        return httpx.Response(
            canned.status, headers=list(canned.headers), content=canned.body, request=request
        )


def rec_replay(cassettes: Sequence[Path], *, in_process: bool, tls: bool = True) -> Around:
    """rec's replay of ``cassettes`` on the runner's loop, as ``rec replay`` serves a run
    (``in_process``: ``rec replay --in-process``); ``tls``: the run's one TLS context for
    the agent's model clients, as ``rec replay`` gives them."""

    @contextlib.asynccontextmanager
    async def around(agent: LoadedAgent) -> AsyncIterator[None]:
        async with replay_async(*cassettes) as replaying:
            with contextlib.ExitStack() as stack:
                if tls:
                    stack.enter_context(shared_tls(agent.root_agent))
                if in_process:
                    stack.enter_context(models_in_process(agent.root_agent, replaying.handler))
                yield

    return around


def genai_floor(answers: InOrder, *, in_process: bool) -> Around:
    """google-genai answered with the recorded bytes in order (no rec): over loopback by a
    canned server on the runner's loop, or in-process by an httpx transport."""

    @contextlib.asynccontextmanager
    async def around(agent: LoadedAgent) -> AsyncIterator[None]:
        answers.position = 0
        with shared_tls(agent.root_agent):
            if in_process:
                transport = _CannedTransport(answers)
                with model_client_args(agent.root_agent, async_args={"transport": transport}):
                    yield
                answers.check()
                return
            server = CannedServer(lambda method, target, body: answers.next())
            ready = asyncio.Event()
            task = spawn(server.serve(ready.set), name="canned-server")
            await ready.wait()
            try:
                with pointing_clients_at(server.url):
                    yield
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            answers.check()

    return around
