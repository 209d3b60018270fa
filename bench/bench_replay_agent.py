"""Replay of an ADK agent per model call, against two floors, side by side.

    python bench/bench_replay_agent.py [--cases 100] [--repeat 3]

1. Records CASES conversations x 3 turns of the travel agent (tests/agents/travel: tools,
   state, a sub-agent) against the stand-in Gemini server (not timed).
2. Runs the same cases through rec's ADK case runner (ADK's Runner, mock tools, ADK's
   event converter), interleaved, ``--repeat`` rounds, with the model answered by:

   - **BaseLlm floor**: a ``BaseLlm`` subclass returning the recorded responses from
     memory in recorded order (ADK's own cost: no google-genai, no HTTP);
   - **genai floor**: the real google-genai model pointed at a minimal local server that
     sends back the recorded response bytes in order with no parsing and no matching
     (``bench/_canned_server.py``): the floor of the base-URL seam;
   - **rec replay**: the real google-genai model under ``rec.replay`` (matching, fail
     closed): answered in-process where the tree does that, else over loopback;
   - **rec in-process**: `rec replay --in-process`, rec supplying the model client's transport
     (`replayer._in_process`: no loopback round trip).

3. ``rec replay_evalsets`` end to end once (cases timed through the progress hook,
   scoring and setup apart), as ``rec replay`` runs.

rec's own share per model call = (rec replay - genai floor) / model calls. The breakdown
times matching alone and raw httpx round trips to the replay proxy.

Goals (issue 14): rec's own share <= 0.5 ms per call; eval-set replay <= 1.3x the genai
floor and <= 2x the BaseLlm floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _canned_server import Canned, CannedServer  # noqa: E402
from _measure import Rounds, table, verdict  # noqa: E402
from _travel import TRAVEL_AGENT, conversations, record_travel  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models import BaseLlm, LlmRequest, LlmResponse  # noqa: E402
from google.genai import types  # noqa: E402

from cassettes._bodies import body_to_bytes  # noqa: E402
from cassettes._cassette import JsonBody, load_cassette  # noqa: E402
from cassettes._evalset import EvalSet, load_evalset  # noqa: E402
from rec.standin.replies import FAKE_API_KEY  # noqa: E402
from recorder._traffic import pointing_clients_at  # noqa: E402
from replayer._adk_runner import run_adk_case  # noqa: E402
from replayer._agent_loading import LoadedAgent, load_agent  # noqa: E402
from replayer._in_process import models_in_process  # noqa: E402
from replayer._mock_tools import ToolResponseBook, recorded_tool_calls  # noqa: E402
from replayer._replay_api import replay, replay_async  # noqa: E402
from replayer._replay_run import replay_evalsets  # noqa: E402
from replayer._replay_target import ReplayOptions  # noqa: E402
from replayer._score import score_evalset  # noqa: E402


def _with_verdict(name: str, value: str, note: str) -> tuple[str, str, str]:
    """A row whose note states a goal (``goal <= N``) gets ``met`` or ``not met``."""
    goal = re.match(r"goal <= ([0-9.]+)", note)
    if goal is None:
        return name, value, note
    figure = float(re.sub(r"[^0-9.-]", "", value.split()[0]))
    return name, value, f"{note}: {'met' if figure <= float(goal.group(1)) else 'not met'}"


LOOP = "rec replay, runner's loop"
"""``replay_async``: the replay server on the runner's own event loop (``rec replay``'s path)."""


class ScriptedLlm(BaseLlm):  # type: ignore[misc]
    """Returns recorded responses from memory in order (the floor: no HTTP, no matching)."""

    responses: list[Any] = []
    position: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        body = self.responses[self.position % len(self.responses)]
        self.position += 1
        yield LlmResponse.create(types.GenerateContentResponse.model_validate(body))


def _scripted_agent(real: LoadedAgent, model: ScriptedLlm) -> LoadedAgent:
    root = real.root_agent
    subs = [
        LlmAgent(
            name=s.name,
            model=model,
            description=s.description,
            instruction=s.instruction,
            tools=list(s.tools),
        )
        for s in root.sub_agents
    ]
    agent = LlmAgent(
        name=root.name,
        model=model,
        description=root.description,
        instruction=root.instruction,
        tools=list(root.tools),
        sub_agents=subs,
    )
    return LoadedAgent(spec="scripted", app_name=real.app_name, root_agent=agent)


def _canned_in_order(cassette_path: Path) -> Callable[[str, str, bytes], Canned]:
    """The recorded response bytes, in recorded order, whatever is asked (no matching)."""
    answers = []
    for exchange in load_cassette(cassette_path).exchanges:
        if exchange.origin == "tool":
            continue
        headers = tuple(
            (k, v)
            for k, v in exchange.response.headers.items()
            if k not in ("content-length", "content-encoding", "transfer-encoding")
        )
        answers.append(
            Canned(exchange.response.status, headers, body_to_bytes(exchange.response.body))
        )
    position = 0

    def answer(method: str, target: str, body: bytes) -> Canned:
        nonlocal position
        canned = answers[position % len(answers)]
        position += 1
        return canned

    return answer


def _run_cases(
    agent: LoadedAgent,
    evalset: EvalSet,
    around: Callable[[], AbstractAsyncContextManager[object]] | None = None,
) -> float:
    """Seconds to run every case through rec's ADK case runner (mock tools), on a fresh loop
    (inside ``around``, entered on that loop, when given)."""

    async def timed() -> float:
        start = time.perf_counter()
        for case in evalset.eval_cases:
            book = ToolResponseBook([recorded_tool_calls(i) for i in case.conversation or []])
            out = await run_adk_case(agent, case, book=book)
            assert isinstance(out, list), out
        return time.perf_counter() - start

    async def cases() -> float:
        if around is None:
            return await timed()
        async with around():
            return await timed()

    return asyncio.run(cases())


def _timed_within(
    context: Callable[[], AbstractContextManager[object]], agent: LoadedAgent, evalset: EvalSet
) -> Callable[[], float]:
    def measure() -> float:
        with context():
            return _run_cases(agent, evalset)

    return measure


@contextmanager
def _pointing(url: str) -> Iterator[None]:
    with pointing_clients_at(url):
        yield


def _round_trips(url: str, exchanges: list[Any]) -> float:
    """Seconds per raw httpx POST of each recorded request to ``url`` (one kept-alive client)."""
    import httpx

    with httpx.Client(base_url=url, trust_env=False) as client:
        start = time.perf_counter()
        for exchange in exchanges:
            path = "/" + exchange.request.url.split("/", 3)[3]
            body = json.dumps(exchange.request.body.value)
            client.post(path, content=body, headers={"content-type": "application/json"})
        return (time.perf_counter() - start) / len(exchanges)


def _breakdown(cassette_path: Path) -> tuple[float, float, float]:
    """Time rec's own parts per model call: matching alone, a raw HTTP round trip to rec's
    proxy, and the same to the canned server (no matching), both in a thread."""
    from cassettes._bodies import body_from_bytes
    from cassettes._cassette import RecordedRequest
    from cassettes._matching import MatchIndex

    cassette = load_cassette(cassette_path)
    exchanges = [e for e in cassette.exchanges if e.origin != "tool"]
    index = MatchIndex(exchanges)
    start = time.perf_counter()
    for exchange in exchanges:
        body = json.dumps(exchange.request.body.value).encode()  # type: ignore[union-attr]
        request = RecordedRequest(
            method="POST", url=exchange.request.url, body=body_from_bytes(body, "application/json")
        )
        assert index.lookup(request) is not None
    match_s = time.perf_counter() - start
    proxy, canned = [], []
    with CannedServer(_canned_in_order(cassette_path)) as canned_server:
        with replay(cassette_path, point_clients=False) as served:
            for _ in range(3):  # interleaved
                proxy.append(_round_trips(served.url, exchanges))
                canned.append(_round_trips(canned_server.url, exchanges))
    return match_s / len(exchanges), statistics.median(proxy), statistics.median(canned)


@asynccontextmanager
async def _in_process(cassette: Path, agent: LoadedAgent) -> AsyncIterator[None]:
    """``rec replay --in-process``: the replay on the runner's loop, and the agent's models
    answered by rec's in-process transport (no loopback round trip)."""
    async with replay_async(cassette) as replaying:
        with models_in_process(agent.root_agent, replaying.handler):
            yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ["GOOGLE_API_KEY"] = FAKE_API_KEY
    for name in ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"):
        os.environ.pop(name, None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        evalset_path = record_travel(folder, conversations(args.cases))
        recording_s = time.perf_counter() - t0
        cassette_path = folder / "travel.cassette.json"
        evalset = load_evalset(evalset_path)
        bodies = [
            e.response.body.value
            for e in load_cassette(cassette_path).exchanges
            if isinstance(e.response.body, JsonBody) and e.origin != "tool"
        ]
        calls = len(bodies)
        real = load_agent(str(TRAVEL_AGENT))
        scripted = _scripted_agent(real, ScriptedLlm(model="scripted", responses=bodies))

        with CannedServer(_canned_in_order(cassette_path)) as canned:
            measures = {
                "BaseLlm floor": lambda: _run_cases(scripted, evalset),
                "genai floor": _timed_within(lambda: _pointing(canned.url), real, evalset),
                "rec replay": _timed_within(lambda: replay(cassette_path), real, evalset),
                LOOP: lambda: _run_cases(real, evalset, lambda: replay_async(cassette_path)),
            }
            measures["rec in-process"] = lambda: _run_cases(
                real, evalset, lambda: _in_process(cassette_path, real)
            )
            for measure in measures.values():  # warm-up: imports, first client, caches
                measure()
            rounds = Rounds().run(measures, repeat=args.repeat)

        marks: list[float] = []
        start = time.perf_counter()
        [run] = replay_evalsets(
            str(TRAVEL_AGENT),
            [evalset_path],
            ReplayOptions(),
            on_case=lambda done, total: marks.append(time.perf_counter()),
        )
        total_s = time.perf_counter() - start
        evalset_cases_s = marks[-1] - start
        assert run.result.passed, [c.failure_reasons for c in run.result.eval_case_results][:2]
        t1 = time.perf_counter()
        score_evalset(evalset, evalset)
        score_s = time.perf_counter() - t1
        match_s, proxy_s, canned_s = _breakdown(cassette_path)

    n = len(evalset.eval_cases)
    floor = rounds.median("BaseLlm floor")
    genai = rounds.median("genai floor")
    print(
        f"{n} cases x 3 turns, {calls} model calls; recording {recording_s:.1f} s (not timed); "
        f"median of {args.repeat} interleaved rounds"
    )
    rows = []
    for name in rounds.samples:
        seconds = rounds.median(name)
        rows.append(
            (
                name,
                f"{seconds:.2f}",
                f"{1000 * seconds / n:.2f}",
                f"{1000 * seconds / calls:.2f}",
                f"{rounds.ratio(name, 'BaseLlm floor'):.2f}x",
                f"{rounds.ratio(name, 'genai floor'):.2f}x",
            )
        )
    rows.append(
        (
            "rec replay_evalsets (cases)",
            f"{evalset_cases_s:.2f}",
            f"{1000 * evalset_cases_s / n:.2f}",
            f"{1000 * evalset_cases_s / calls:.2f}",
            f"{evalset_cases_s / floor:.2f}x",
            f"{evalset_cases_s / genai:.2f}x",
        )
    )
    print(table(rows, ("model answered by", "s", "ms/case", "ms/call", "vs BaseLlm", "vs genai")))
    print()
    share = 1000 * (rounds.median("rec replay") - genai) / calls
    share_rows = [
        ("rec's own share (rec replay - genai floor)", f"{share:.2f} ms", "goal <= 0.5 ms"),
        ("  matching alone", f"{1000 * match_s:.2f} ms", "parse + canonical key + lookup"),
        ("  raw httpx round trip to rec's proxy", f"{1000 * proxy_s:.2f} ms", "incl. matching"),
        ("  raw httpx round trip to the canned server", f"{1000 * canned_s:.2f} ms", "no matching"),
        (
            "google-genai + ADK model glue",
            f"{1000 * (genai - floor) / calls:.2f} ms",
            "genai floor - BaseLlm floor",
        ),
        (
            "rec's own share, server on the runner's loop",
            f"{1000 * (rounds.median(LOOP) - genai) / calls:.2f} ms",
            "goal <= 0.5 ms (what `rec replay` runs)",
        ),
        (
            "eval-set replay (runner's loop) / genai floor",
            f"{rounds.ratio(LOOP, 'genai floor'):.2f}x",
            "goal <= 1.3x",
        ),
        (
            "eval-set replay (runner's loop) / BaseLlm floor",
            f"{rounds.ratio(LOOP, 'BaseLlm floor'):.2f}x",
            "goal <= 2x",
        ),
        (
            "eval-set replay / genai floor",
            f"{rounds.ratio('rec replay', 'genai floor'):.2f}x",
            "goal <= 1.3x",
        ),
        (
            "eval-set replay / BaseLlm floor",
            f"{rounds.ratio('rec replay', 'BaseLlm floor'):.2f}x",
            "goal <= 2x",
        ),
    ]
    share_rows.extend(
        [
            (
                "rec's own share, in-process (in-process - genai floor)",
                f"{1000 * (rounds.median('rec in-process') - genai) / calls:.2f} ms",
                "goal <= 0.5 ms (`rec replay --in-process`)",
            ),
            (
                "eval-set replay (in-process) / genai floor",
                f"{rounds.ratio('rec in-process', 'genai floor'):.2f}x",
                "goal <= 1.3x",
            ),
            (
                "eval-set replay (in-process) / BaseLlm floor",
                f"{rounds.ratio('rec in-process', 'BaseLlm floor'):.2f}x",
                "goal <= 2x",
            ),
        ]
    )
    share_rows.append(
        (
            "replay_evalsets scoring + load + setup",
            f"{total_s - evalset_cases_s:.2f} s",
            f"(scoring alone {score_s:.2f} s)",
        )
    )
    print(table([_with_verdict(*row) for row in share_rows], ("per model call", "value", "note")))
    for name, value, note in share_rows:
        goal = re.match(r"goal (<= ([0-9.]+) ?(ms|x)?)", note)
        if goal is not None:
            base = "BaseLlm floor" if "BaseLlm" in name else "genai floor"
            per_call = f"{base} {1000 * rounds.median(base) / calls:.2f} ms a call"
            met = float(value.split()[0].rstrip("x")) <= float(goal.group(2))
            verdict(name, value, per_call, goal.group(1), met)


if __name__ == "__main__":
    main()
