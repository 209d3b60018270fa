"""Replay of examples/home_assistant per model call, against the in-memory model, side by side.

    python bench/bench_replay_home.py [--repeat 5]

The home assistant's two bundled cases (18 model calls, a sub-agent, tools, state) run
through rec's ADK case runner (ADK's Runner per case, mock tools), interleaved, ``--repeat``
rounds, with the model answered by:

- **in-memory model**: a ``BaseLlm`` returning the recorded responses in order (ADK's own
  cost: no google-genai, no HTTP);
- **rec replay, runner's loop** (what ``rec replay`` runs) and **rec in-process**
  (``rec replay --in-process``), each twice: with the run's one TLS context for the model
  clients (``replayer._model_clients.shared_tls``, what ``rec replay`` does) and without it
  (the baseline: google-genai builds three TLS contexts, loading the CA bundle each time,
  for each client ADK builds: one per model of the agent tree and event loop, so once per
  round here as once per ``rec replay`` run or worker).

Goal: a replayed call <= 2x the in-memory model's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import Rounds, table  # noqa: E402
from bench_replay_agent import ScriptedLlm, _scripted_agent  # noqa: E402

from cassettes._cassette import JsonBody, load_cassette  # noqa: E402
from cassettes._evalset import EvalSet, load_evalset  # noqa: E402
from rec.standin.replies import FAKE_API_KEY  # noqa: E402
from replayer._adk_runner import run_adk_case  # noqa: E402
from replayer._agent_loading import LoadedAgent, load_agent  # noqa: E402
from replayer._in_process import models_in_process  # noqa: E402
from replayer._mock_tools import ToolResponseBook, recorded_tool_calls  # noqa: E402
from replayer._model_clients import shared_tls  # noqa: E402
from replayer._replay_api import replay_async  # noqa: E402

HOME = Path(__file__).resolve().parents[1] / "examples" / "home_assistant"
RECORDINGS = HOME / "recordings"
NAMES = ("evening_routine", "leaving_home")

Around = Callable[[LoadedAgent], contextlib.AbstractAsyncContextManager[object]]


def _served(*, in_process: bool, tls: bool) -> Around:
    """One replay of both cassettes on the runner's loop, as ``rec replay`` serves a run."""

    @contextlib.asynccontextmanager
    async def around(agent: LoadedAgent) -> AsyncIterator[None]:
        cassettes = [RECORDINGS / f"{name}.cassette.json" for name in NAMES]
        async with replay_async(*cassettes) as replaying:
            with contextlib.ExitStack() as stack:
                if tls:
                    stack.enter_context(shared_tls(agent.root_agent))
                if in_process:
                    stack.enter_context(models_in_process(agent.root_agent, replaying.handler))
                yield

    return around


@contextlib.asynccontextmanager
async def _nothing(agent: LoadedAgent) -> AsyncIterator[None]:
    yield


def _run(sets: list[tuple[LoadedAgent, EvalSet]], around: Around) -> float:
    """Seconds to run every case of every eval set on a fresh event loop (as one ``rec
    replay`` process does: ADK builds each model's client once per loop), inside ``around``
    entered on that loop."""

    async def timed() -> float:
        async with around(sets[0][0]):
            start = time.perf_counter()
            for agent, evalset in sets:
                for case in evalset.eval_cases:
                    model = agent.root_agent.model
                    if isinstance(model, ScriptedLlm):
                        model.position = 0
                    calls = [recorded_tool_calls(i) for i in case.conversation or []]
                    out = await run_adk_case(agent, case, book=ToolResponseBook(calls))
                    assert isinstance(out, list), out
            return time.perf_counter() - start

    return asyncio.run(timed())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ["GOOGLE_API_KEY"] = FAKE_API_KEY
    for name in ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"):
        os.environ.pop(name, None)
    real = load_agent(str(HOME))
    replayed: list[tuple[LoadedAgent, EvalSet]] = []
    scripted: list[tuple[LoadedAgent, EvalSet]] = []
    calls = 0
    for name in NAMES:
        cassette = RECORDINGS / f"{name}.cassette.json"
        evalset = load_evalset(RECORDINGS / f"{name}.evalset.json")
        bodies: list[Any] = [
            e.response.body.value
            for e in load_cassette(cassette).exchanges
            if isinstance(e.response.body, JsonBody) and e.origin != "tool"
        ]
        calls += len(bodies)
        model = ScriptedLlm(model="scripted", responses=bodies)
        replayed.append((real, evalset))
        scripted.append((_scripted_agent(real, model), evalset))

    measures: dict[str, Callable[[], float]] = {
        "in-memory model": lambda: _run(scripted, _nothing),
        "rec replay, TLS per client (baseline)": lambda: _run(
            replayed, _served(in_process=False, tls=False)
        ),
        "rec replay": lambda: _run(replayed, _served(in_process=False, tls=True)),
        "rec in-process, TLS per client (baseline)": lambda: _run(
            replayed, _served(in_process=True, tls=False)
        ),
        "rec in-process": lambda: _run(replayed, _served(in_process=True, tls=True)),
    }
    for measure in measures.values():  # warm-up: imports, first client, caches
        measure()
    rounds = Rounds().run(measures, repeat=args.repeat)
    load = os.getloadavg()[0]
    print(
        f"home_assistant: {len(NAMES)} cases, {calls} model calls; median of {args.repeat} "
        f"interleaved rounds; load average {load:.1f} on {os.cpu_count()} cores"
    )
    rows = []
    for name in rounds.samples:
        ratio = rounds.ratio(name, "in-memory model")
        verdict = "" if name == "in-memory model" else ("met" if ratio <= 2 else "not met")
        rows.append(
            (
                name,
                f"{1000 * rounds.median(name) / calls:.2f}",
                f"{ratio:.2f}x",
                verdict,
            )
        )
    print(table(rows, ("model answered by", "ms/call", "vs in-memory", "goal <= 2x")))


if __name__ == "__main__":
    main()
