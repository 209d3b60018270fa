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
  round here as once per ``rec replay`` run or worker; a tree whose replay shares the
  context for every client built in its block makes the baseline rows the same path);
- **google-genai floors**: the same google-genai clients (one TLS context) answered with the
  recorded response bytes in recorded order, no matching and no rec: by a minimal HTTP
  server on the runner's loop (``bench/_canned_server.py``), the floor of ``rec replay``,
  and by an httpx transport, the floor of ``rec in-process``. What a path costs beyond its
  floor is rec's own share (``bench/_genai_floor.py`` sets both sides up alike).

Each timed run starts with earlier runs' garbage collected and the live heap frozen
(``_genai_floor.settle_gc``): a full collection of the startup heap otherwise lands on the
same measure every time and charges it 9 ms a call.

Goals: a replayed call <= 2x the in-memory model's; rec's own share <= 0.5 ms a call.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _genai_floor as floors  # noqa: E402
from _measure import Rounds, table, verdict  # noqa: E402
from bench_replay_agent import ScriptedLlm, _scripted_agent  # noqa: E402

from cassettes._cassette import JsonBody, load_cassette  # noqa: E402
from cassettes._evalset import EvalSet, load_evalset  # noqa: E402
from rec.standin.replies import FAKE_API_KEY  # noqa: E402
from replayer._agent_loading import LoadedAgent, load_agent  # noqa: E402

HOME = Path(__file__).resolve().parents[1] / "examples" / "home_assistant"
RECORDINGS = HOME / "recordings"
NAMES = ("evening_routine", "leaving_home")
CASSETTES = [RECORDINGS / f"{name}.cassette.json" for name in NAMES]


def _in_memory(sets: list[tuple[LoadedAgent, EvalSet]]) -> float:
    """:func:`run_cases` with each eval set's in-memory model from its first response."""
    for agent, _ in sets:
        agent.root_agent.model.position = 0
    return floors.run_cases(sets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--wall", action="store_true", help="time by wall, not CPU time")
    parser.add_argument("--cpu", action="store_true", help="time by CPU (the default)")
    args = parser.parse_args()
    clock = floors.time_by_wall(args.wall)
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

    answers = floors.InOrder(CASSETTES)
    loop_floor = "google-genai floor, loopback (no rec)"
    in_process_floor = "google-genai floor, in-process (no rec)"
    measures: dict[str, Callable[[], float]] = {
        "in-memory model": lambda: _in_memory(scripted),
        loop_floor: lambda: floors.run_cases(
            replayed, floors.genai_floor(answers, in_process=False)
        ),
        in_process_floor: lambda: floors.run_cases(
            replayed, floors.genai_floor(answers, in_process=True)
        ),
        "rec replay, TLS per client (baseline)": lambda: floors.run_cases(
            replayed, floors.rec_replay(CASSETTES, in_process=False, tls=False)
        ),
        "rec replay": lambda: floors.run_cases(
            replayed, floors.rec_replay(CASSETTES, in_process=False)
        ),
        "rec in-process, TLS per client (baseline)": lambda: floors.run_cases(
            replayed, floors.rec_replay(CASSETTES, in_process=True, tls=False)
        ),
        "rec in-process": lambda: floors.run_cases(
            replayed, floors.rec_replay(CASSETTES, in_process=True)
        ),
    }
    for measure in measures.values():  # warm-up: imports, first client, caches
        measure()
    rounds = Rounds().run(measures, repeat=args.repeat)
    load = os.getloadavg()[0]
    print(
        f"home_assistant: {len(NAMES)} cases, {calls} model calls; median of {args.repeat} "
        f"interleaved rounds; load average {load:.1f} on {os.cpu_count()} cores; "
        f"{clock} time"
    )
    rows = []
    for name in rounds.samples:
        ratio = rounds.ratio(name, "in-memory model")
        met_text = "" if name == "in-memory model" else ("met" if ratio <= 2 else "not met")
        rows.append(
            (
                name,
                f"{1000 * rounds.median(name) / calls:.2f}",
                f"{ratio:.2f}x",
                met_text,
            )
        )
    print(table(rows, ("model answered by", "ms/call", "vs in-memory", "goal <= 2x")))
    print()
    shares = []
    for name, floor in (("rec replay", loop_floor), ("rec in-process", in_process_floor)):
        share = floors.own_share_ms(rounds, name, floor, calls)
        shares.append(
            (f"{name} - {floor}", f"{share:.2f} ms", "met" if share <= 0.5 else "not met")
        )
    print(table(shares, ("rec's own share per call", "value", "goal <= 0.5 ms")))
    in_memory = f"in-memory model {1000 * rounds.median('in-memory model') / calls:.2f} ms a call"
    for name in rounds.samples:
        if name != "in-memory model":
            ratio = rounds.ratio(name, "in-memory model")
            floor_row = "baseline" in name or "floor" in name
            goal, met = (None, None) if floor_row else ("<= 2x", ratio <= 2)
            verdict(f"{name} / in-memory model", f"{ratio:.2f}x", in_memory, goal, met)
    for (label, share, met_text), floor in zip(shares, (loop_floor, in_process_floor), strict=True):
        per_call = f"{floor} {1000 * rounds.median(floor) / calls:.2f} ms a call"
        verdict(f"rec's own share: {label}", share, per_call, "<= 0.5 ms", met_text == "met")


if __name__ == "__main__":
    main()
