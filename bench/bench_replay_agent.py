"""Replay of an ADK agent from cassettes vs the same agent on an in-memory scripted model.

    /work/venv/bin/python bench/bench_replay_agent.py [--cases 200]

1. Records CASES conversations x 3 turns of the travel agent (tests/agents/travel: tools,
   state, a sub-agent) against the stand-in Gemini server (not timed).
2. floor: the same cases through rec's ADK case runner (Runner, mock tools, ADK's event
   converter) with the model replaced by a ``BaseLlm`` subclass that returns the recorded
   responses from memory, in recorded order: ADK's own cost.
3. rec: ``replay_evalsets`` on the recording (loopback replay proxy, google-genai HTTP
   client, matching), scoring excluded by timing the case runs through the progress hook.

The difference per model call is rec's overhead (HTTP round trip on loopback + request
canonicalisation + lookup); scoring is reported apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models import BaseLlm, LlmRequest, LlmResponse  # noqa: E402
from google.genai import types  # noqa: E402

from cassettes import JsonBody, load_cassette
from evalfiles import load_evalset
from replayer.adk_runner import run_adk_case  # noqa: E402
from replayer.agent_loading import LoadedAgent, load_agent  # noqa: E402
from replayer.mock_tools import ToolResponseBook, recorded_tool_calls  # noqa: E402
from replayer.replay_run import ReplayOptions, replay_evalsets  # noqa: E402
from replayer.score import score_evalset  # noqa: E402
from tests.replayer.test_replay_agent import TRAVEL_AGENT, record_travel  # noqa: E402

CITIES = ["Paris", "Rome", "Tokyo", "Berlin", "Madrid", "Lisbon", "Vienna", "Oslo"]


class ScriptedLlm(BaseLlm):  # type: ignore[misc]
    """Returns recorded responses from memory in order (the floor: no HTTP, no matching)."""

    responses: list[Any] = []
    position: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        body = self.responses[self.position]
        self.position += 1
        yield LlmResponse.create(types.GenerateContentResponse.model_validate(body))


def _conversations(count: int) -> list[tuple[str, str, str]]:
    out = []
    for i in range(count):
        a, b = CITIES[i % len(CITIES)], CITIES[(i + 3) % len(CITIES)]
        out.append(
            (
                f"What's the weather in {a}?",
                f"Find flights from {a} to {b} on 2025-05-{1 + i % 28:02d}",
                f"And the weather in {b}?",
            )
        )
    return out


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


def _breakdown(cassette_path: Path) -> tuple[float, float]:
    """Time rec's own share per model call: matching alone, and a raw HTTP round trip."""
    import httpx

    from cassettes import MatchIndex, RecordedRequest, body_from_bytes
    from replayer import replay

    cassette = load_cassette(cassette_path)
    index = MatchIndex(cassette.exchanges)
    start = time.perf_counter()
    for exchange in cassette.exchanges:
        body = json.dumps(exchange.request.body.value).encode()  # type: ignore[union-attr]
        request = RecordedRequest(
            method="POST", url=exchange.request.url, body=body_from_bytes(body, "application/json")
        )
        assert index.lookup(request) is not None
    match_s = time.perf_counter() - start
    with replay(cassette_path, point_clients=False) as served:
        with httpx.Client(base_url=served.url, trust_env=False) as client:
            start = time.perf_counter()
            for exchange in cassette.exchanges:
                path = "/" + exchange.request.url.split("/", 3)[3]
                body = json.dumps(exchange.request.body.value)  # type: ignore[union-attr]
                client.post(path, content=body, headers={"content-type": "application/json"})
            proxy_s = time.perf_counter() - start
    return match_s, proxy_s


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        evalset_path = record_travel(folder, _conversations(args.cases))
        recording_s = time.perf_counter() - t0
        evalset = load_evalset(evalset_path)
        cassette = load_cassette(folder / "travel.cassette.json")
        bodies = [
            e.response.body.value
            for e in cassette.exchanges
            if isinstance(e.response.body, JsonBody)
        ]
        calls = len(bodies)
        real = load_agent(str(TRAVEL_AGENT))

        async def floor() -> float:
            model = ScriptedLlm(model="scripted", responses=bodies)
            agent = _scripted_agent(real, model)
            start = time.perf_counter()
            for case in evalset.eval_cases:
                book = ToolResponseBook([recorded_tool_calls(i) for i in case.conversation or []])
                out = await run_adk_case(agent, case, book=book)
                assert isinstance(out, list), out
            return time.perf_counter() - start

        floor_s = asyncio.run(floor())

        marks: list[float] = []
        start = time.perf_counter()
        [run] = replay_evalsets(
            str(TRAVEL_AGENT),
            [evalset_path],
            ReplayOptions(),
            on_case=lambda done, total: marks.append(time.perf_counter()),
        )
        total_s = time.perf_counter() - start
        cases_s = marks[-1] - start
        assert run.result.passed, [c.failure_reasons for c in run.result.eval_case_results][:2]
        t1 = time.perf_counter()
        score_evalset(evalset, evalset)
        score_s = time.perf_counter() - t1
        match_s, proxy_s = _breakdown(folder / "travel.cassette.json")

    n = len(evalset.eval_cases)
    rows = [
        ("cases x turns", f"{n} x 3", ""),
        ("model calls", str(calls), ""),
        ("recording (not timed)", f"{recording_s:.2f} s", ""),
        ("floor: scripted BaseLlm", f"{floor_s:.2f} s", f"{1000 * floor_s / n:.2f} ms/case"),
        ("rec: replay case runs", f"{cases_s:.2f} s", f"{1000 * cases_s / n:.2f} ms/case"),
        ("ratio rec / floor", f"{cases_s / floor_s:.2f}x", "goal <= 1.3x"),
        (
            "overhead per model call",
            f"{1000 * (cases_s - floor_s) / calls:.2f} ms",
            "= the three rows below",
        ),
        ("  rec matching", f"{1000 * match_s / calls:.2f} ms", "parse + canonical key + lookup"),
        (
            "  rec proxy round trip",
            f"{1000 * (proxy_s - match_s) / calls:.2f} ms",
            "loopback HTTP to the replay proxy and back (raw httpx, no SDK)",
        ),
        (
            "  google-genai + ADK model glue",
            f"{1000 * (cases_s - floor_s - proxy_s) / calls:.2f} ms",
            "SDK request building, response parsing, client (the rest)",
        ),
        (
            "scoring + load + setup",
            f"{total_s - cases_s:.2f} s",
            f"(scoring alone {score_s:.2f} s)",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    for label, value, note in rows:
        print(f"{label:<{width}}  {value:>10}  {note}")


if __name__ == "__main__":
    main()
