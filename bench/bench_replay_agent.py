"""Replay of an ADK agent per model call, against its floors, side by side.

    python bench/bench_replay_agent.py [--cases 100] [--repeat 3]

1. Records CASES conversations x 3 turns of the travel agent (tests/agents/travel: tools,
   state, a sub-agent) against the stand-in Gemini server (not timed).
2. Runs the same cases through rec's ADK case runner (ADK's Runner, mock tools, ADK's
   event converter), interleaved, ``--repeat`` rounds, each run on a fresh event loop from
   a settled collector (``bench/_genai_floor.py``), with the model answered by:

   - **BaseLlm floor**: a ``BaseLlm`` subclass returning the recorded responses from
     memory in recorded order (ADK's own cost: no google-genai, no HTTP);
   - **genai floors**: the same google-genai clients as rec's paths (one TLS context)
     answered with the recorded response bytes in order, no parsing, no matching and no
     rec: by a minimal server on the runner's loop (``bench/_canned_server.py``), the
     floor of the loopback path, and by an httpx transport, the floor of the in-process
     paths;
   - **rec replay, runner's loop**: ``rec replay``'s path, a loopback server on the
     runner's loop;
   - **rec in-process**: ``rec replay --in-process``, rec supplying the model client's
     transport (no loopback round trip);
   - **rec.replay()**: the server in a thread of its own, google-genai's clients built in
     the block answered in-process.

3. ``rec replay_evalsets`` end to end once (cases timed through the progress hook,
   scoring and setup apart), as ``rec replay`` runs.

rec's own share per model call = (a path - its genai floor) / model calls. The breakdown
times matching alone and raw httpx round trips to the replay proxy.

Goals (issues 14, 43): rec's own share <= 0.5 ms per call; a path <= 1.3x its genai floor
and <= 2x the BaseLlm floor.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _canned_server import CannedServer  # noqa: E402
from _genai_floor import (  # noqa: E402
    InOrder,
    genai_floor,
    now,
    own_share_ms,
    rec_replay,
    run_cases,
    settle_gc,
    time_by_wall,
)
from _measure import Rounds, table, verdict  # noqa: E402
from _travel import TRAVEL_AGENT, conversations, record_travel  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models import BaseLlm, LlmRequest, LlmResponse  # noqa: E402
from google.genai import types  # noqa: E402

from cassettes._cassette import JsonBody, load_cassette  # noqa: E402
from cassettes._evalset import EvalSet, load_evalset  # noqa: E402
from rec.standin.replies import FAKE_API_KEY  # noqa: E402
from replayer._agent_loading import LoadedAgent, load_agent  # noqa: E402
from replayer._replay_api import replay  # noqa: E402
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


def _timed_within(
    context: Callable[[], AbstractContextManager[object]], agent: LoadedAgent, evalset: EvalSet
) -> Callable[[], float]:
    def measure() -> float:
        with context():
            return run_cases([(agent, evalset)])

    return measure


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
    answers = InOrder([cassette_path])
    with CannedServer(lambda method, target, body: answers.next()) as canned_server:
        with replay(cassette_path, point_clients=False) as served:
            for _ in range(3):  # interleaved
                proxy.append(_round_trips(served.url, exchanges))
                canned.append(_round_trips(canned_server.url, exchanges))
    return match_s / len(exchanges), statistics.median(proxy), statistics.median(canned)


BASE = "BaseLlm floor"
LOOP_FLOOR = "genai floor, loopback (no rec)"
"""google-genai answered by a canned server on the runner's loop: the floor of ``LOOP``."""
IN_PROCESS_FLOOR = "genai floor, in-process (no rec)"
"""google-genai answered by an httpx transport: the floor of the in-process paths."""
THREAD = "rec.replay() (a thread; answered in-process)"
IN_PROCESS = "rec in-process"


def _measures(
    cassette_path: Path, evalset: EvalSet, real: LoadedAgent, scripted: LoadedAgent
) -> dict[str, Callable[[], float]]:
    """Every way of answering the model, each a timed run of every case."""
    answers = InOrder([cassette_path])
    cases = [(real, evalset)]
    return {
        BASE: lambda: run_cases([(scripted, evalset)]),
        LOOP_FLOOR: lambda: run_cases(cases, genai_floor(answers, in_process=False)),
        IN_PROCESS_FLOOR: lambda: run_cases(cases, genai_floor(answers, in_process=True)),
        THREAD: _timed_within(lambda: replay(cassette_path), real, evalset),
        LOOP: lambda: run_cases(cases, rec_replay([cassette_path], in_process=False)),
        IN_PROCESS: lambda: run_cases(cases, rec_replay([cassette_path], in_process=True)),
    }


Figure = tuple[str, str, str, str | None]
"""A row of the per-call table: name, value, note (``goal <= N ...`` where it has one),
and the floor the figure is measured against (for its verdict)."""


def _share(rounds: Rounds, calls: int, name: str, floor: str, label: str, what: str) -> Figure:
    value = f"{own_share_ms(rounds, name, floor, calls):.2f} ms"
    return (f"rec's own share, {label}", value, f"goal <= 0.5 ms ({what})", floor)


def _figures(rounds: Rounds, calls: int) -> list[Figure]:
    """rec's own share of each path over its floor, and each path against its floor and
    the BaseLlm floor."""
    figures = [
        _share(rounds, calls, LOOP, LOOP_FLOOR, "server on the runner's loop", "`rec replay`"),
        _share(rounds, calls, IN_PROCESS, IN_PROCESS_FLOOR, "in-process", "`--in-process`"),
        _share(rounds, calls, THREAD, IN_PROCESS_FLOOR, "rec.replay()", "answered in-process"),
    ]
    for floor in (LOOP_FLOOR, IN_PROCESS_FLOOR):
        ratio = f"{rounds.ratio(floor, BASE):.2f}x"
        figures.append((f"{floor} / BaseLlm floor", ratio, "google-genai's own cost", BASE))
    for name, floor in (
        (LOOP, LOOP_FLOOR),
        (IN_PROCESS, IN_PROCESS_FLOOR),
        (THREAD, IN_PROCESS_FLOOR),
    ):
        figures.append(
            (f"{name} / its floor", f"{rounds.ratio(name, floor):.2f}x", "goal <= 1.3x", floor)
        )
        figures.append(
            (f"{name} / BaseLlm floor", f"{rounds.ratio(name, BASE):.2f}x", "goal <= 2x", BASE)
        )
    return figures


@dataclass
class _EndToEnd:
    """``replay_evalsets`` once, as ``rec replay`` runs it."""

    cases_s: float
    total_s: float
    score_s: float


def _end_to_end(evalset_path: Path, evalset: EvalSet) -> _EndToEnd:
    marks: list[float] = []
    settle_gc()
    start = now()
    [run] = replay_evalsets(
        str(TRAVEL_AGENT),
        [evalset_path],
        ReplayOptions(),  # one worker: the cases run in this process, on the timed clock
        on_case=lambda done, total: marks.append(now()),
    )
    total_s = now() - start
    assert run.result.passed, [c.failure_reasons for c in run.result.eval_case_results][:2]
    t1 = now()
    score_evalset(evalset, evalset)
    return _EndToEnd(marks[-1] - start, total_s, now() - t1)


def _report(
    rounds: Rounds, calls: int, cases: int, whole: _EndToEnd, parts: tuple[float, float, float]
) -> None:
    floor, genai = rounds.median(BASE), rounds.median(IN_PROCESS_FLOOR)
    rows = []
    for name in rounds.samples:
        seconds = rounds.median(name)
        rows.append(
            (
                name,
                f"{seconds:.2f}",
                f"{1000 * seconds / cases:.2f}",
                f"{1000 * seconds / calls:.2f}",
                f"{rounds.ratio(name, BASE):.2f}x",
            )
        )
    seconds = whole.cases_s
    rows.append(
        (
            "rec replay_evalsets (cases)",
            f"{seconds:.2f}",
            f"{1000 * seconds / cases:.2f}",
            f"{1000 * seconds / calls:.2f}",
            f"{seconds / floor:.2f}x",
        )
    )
    print(table(rows, ("model answered by", "s", "ms/case", "ms/call", "vs BaseLlm")))
    print()
    match_s, proxy_s, canned_s = parts
    figures = _figures(rounds, calls)
    rows = [(name, value, note) for name, value, note, _ in figures]
    rows += [
        ("  matching alone", f"{1000 * match_s:.2f} ms", "parse + canonical key + lookup"),
        ("  raw httpx round trip to rec's proxy", f"{1000 * proxy_s:.2f} ms", "incl. matching"),
        ("  raw httpx round trip to the canned server", f"{1000 * canned_s:.2f} ms", "no matching"),
        ("google-genai + ADK model glue", f"{1000 * (genai - floor) / calls:.2f} ms", ""),
        (
            "replay_evalsets scoring + load + setup",
            f"{whole.total_s - whole.cases_s:.2f} s",
            f"(scoring alone {whole.score_s:.2f} s)",
        ),
    ]
    print(table([_with_verdict(*row) for row in rows], ("per model call", "value", "note")))
    for name, value, note, against in figures:
        per_call = f"{against} {1000 * rounds.median(against) / calls:.2f} ms a call"
        goal = re.match(r"goal (<= ([0-9.]+) ?(ms|x)?)", note)
        if goal is None:
            verdict(name, value, per_call, None, None)
            continue
        met = float(value.split()[0].rstrip("x")) <= float(goal.group(2))
        verdict(name, value, per_call, goal.group(1), met)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--wall", action="store_true", help="time by wall, not CPU time")
    args = parser.parse_args()
    clock = time_by_wall(args.wall)
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
        real = load_agent(str(TRAVEL_AGENT))
        scripted = _scripted_agent(real, ScriptedLlm(model="scripted", responses=bodies))
        measures = _measures(cassette_path, evalset, real, scripted)
        for measure in measures.values():  # warm-up: imports, first client, caches
            measure()
        rounds = Rounds().run(measures, repeat=args.repeat)
        whole = _end_to_end(evalset_path, evalset)
        parts = _breakdown(cassette_path)
    print(
        f"{len(evalset.eval_cases)} cases x 3 turns, {len(bodies)} model calls; recording "
        f"{recording_s:.1f} s (not timed); median of {args.repeat} interleaved rounds, "
        f"{clock} time; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    _report(rounds, len(bodies), len(evalset.eval_cases), whole, parts)


if __name__ == "__main__":
    main()
