"""Per-call overhead of recording and replaying OpenAI-wire calls, beside Gemini's.

The stand-in serves both wires (Gemini ``generateContent`` and OpenAI chat completions) on
loopback; the real clients (google-genai, and the openai SDK that LiteLLM uses) each make
the same one-turn call over and over:

- ``direct``: the client talks to the stand-in;
- ``record``: through ``rec.record`` (forwarded, teed, journaled with an fsync);
- ``replay``: served by ``rec.replay`` from the cassette just recorded (no upstream).

Each figure is the median of per-call times over interleaved rounds (see ``_measure.py``);
the overhead is the median per-round difference from ``direct``. Unary and ``stream``
calls (Gemini ``streamGenerateContent``, OpenAI ``"stream": true``; a stream call is timed
to its last chunk). Then the time to the first chunk of a paced stream, direct and
through the recording proxy, for both wires (the goal: +5 ms at most).

Run::

    python bench/bench_openai_wire.py            # 7 rounds of 30 calls
    python bench/bench_openai_wire.py --quick    # 3 rounds of 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import Rounds, table, verdict  # noqa: E402

import rec  # noqa: E402
from rec.standin.replies import FAKE_API_KEY, Reply, ScriptedResponder  # noqa: E402
from rec.standin.server import StandinGemini  # noqa: E402

PROMPT = "What's the weather in Rome?"
ANSWER = "Cloudy in Rome, 19 degrees, with a light wind from the west all afternoon."
FAKE_OPENAI_KEY = "rec-bench-fake-openai-key"

Call = Callable[[], object]


def _gemini(base_url: str, *, stream: bool) -> Call:
    from google import genai
    from google.genai import types

    client = genai.Client(api_key=FAKE_API_KEY, http_options=types.HttpOptions(base_url=base_url))

    def call() -> object:
        if stream:
            return [
                c.text
                for c in client.models.generate_content_stream(
                    model="gemini-2.0-flash", contents=PROMPT
                )
            ]
        return client.models.generate_content(model="gemini-2.0-flash", contents=PROMPT).text

    return call


def _openai(base_url: str, *, stream: bool) -> Call:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=FAKE_OPENAI_KEY, max_retries=0)
    messages: Any = [{"role": "user", "content": PROMPT}]

    def call() -> object:
        if stream:
            chunks = client.chat.completions.create(
                model="gpt-4o-mini",
                messages=messages,
                stream=True,
            )
            return [c.choices[0].delta.content for c in chunks if c.choices]
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        return reply.choices[0].message.content

    return call


def _per_call_ms(call: Call, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 10 calls")
    args = parser.parse_args(argv)
    rounds_n, calls = (3, 10) if args.quick else (7, 30)
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    responder = ScriptedResponder([Reply.text(ANSWER, chunks=3)], repeat_last=True)
    rows = []
    with StandinGemini(responder) as api, tempfile.TemporaryDirectory() as folder:
        os.environ["OPENAI_BASE_URL"] = f"{api.url}/v1"  # the recorder's OpenAI upstream
        with rec.record(
            folder, name="bench", upstream=api.url, point_clients=False, capture_tools=False
        ) as recording:
            proxy = recording.url
            paths = {
                "direct": (api.url, f"{api.url}/v1"),
                "record": (proxy, f"{proxy}/openai"),
            }
            clients = {
                (wire, stream, path): maker(base[index], stream=stream)
                for path, base in paths.items()
                for index, (wire, maker) in enumerate((("gemini", _gemini), ("openai", _openai)))
                for stream in (False, True)
            }
            for call in clients.values():
                call()  # connections open, the recording holds every request
            recorded = Rounds().run(
                {f"{w}/{s}/{p}": _bound(c, calls) for (w, s, p), c in clients.items()},
                repeat=rounds_n,
            )
        assert recording.result is not None
        cassette = recording.result.cassette_path
        with rec.replay(cassette, point_clients=False) as replaying:
            replayed_clients = {
                ("gemini", stream): _gemini(replaying.url, stream=stream)
                for stream in (False, True)
            } | {
                ("openai", stream): _openai(f"{replaying.url}/openai", stream=stream)
                for stream in (False, True)
            }
            direct = {key: clients[(*key, "direct")] for key in replayed_clients}
            for call in replayed_clients.values():
                call()
            replayed = Rounds().run(
                {
                    **{
                        f"{w}/{s}/replay": _bound(c, calls)
                        for (w, s), c in replayed_clients.items()
                    },
                    **{f"{w}/{s}/direct": _bound(c, calls) for (w, s), c in direct.items()},
                },
                repeat=rounds_n,
            )
            assert not replaying.misses, replaying.misses[0]
    for wire in ("gemini", "openai"):
        for stream in (False, True):
            key = f"{wire}/{stream}"
            base = recorded.median(f"{key}/direct")
            rows.append(
                (
                    f"{wire} {'stream' if stream else 'unary'}",
                    f"{base:.2f}",
                    f"{recorded.median(f'{key}/record'):.2f}",
                    f"{_difference(recorded, key, 'record'):+.2f}",
                    f"{replayed.median(f'{key}/replay'):.2f}",
                    f"{_difference(replayed, key, 'replay'):+.2f}",
                )
            )
    header = ("wire, call", "direct ms", "record ms", "record +ms", "replay ms", "replay +ms")
    print(f"median per call, {rounds_n} interleaved rounds of {calls} calls")
    print(table(rows, header))
    for name, direct_ms, _, record_more, _, replay_more in rows:
        floor = f"direct {direct_ms} ms"
        more = float(record_more)
        verdict(f"{name}: record - direct", f"{record_more} ms", floor, "<= 5 ms", more <= 5)
        verdict(f"{name}: replay - direct", f"{replay_more} ms", floor, None, None)
    first_chunks(rounds_n * 2)


def _first_chunk_ms(base_url: str, wire: str) -> float:
    """Milliseconds from the call to its first streamed text chunk (client made beforehand)."""
    stream: Any
    if wire == "gemini":
        from google import genai
        from google.genai import types

        client = genai.Client(
            api_key=FAKE_API_KEY, http_options=types.HttpOptions(base_url=base_url)
        )
        start = time.perf_counter()
        stream = client.models.generate_content_stream(model="gemini-2.0-flash", contents=PROMPT)
    else:
        import openai

        chat = openai.OpenAI(base_url=base_url, api_key=FAKE_OPENAI_KEY, max_retries=0)
        messages: Any = [{"role": "user", "content": PROMPT}]
        start = time.perf_counter()
        stream = chat.chat.completions.create(model="gpt-4o-mini", messages=messages, stream=True)
    first = 0.0
    for index, _ in enumerate(stream):
        if index == 0 or (wire == "openai" and index == 1):  # OpenAI's first event is the role
            first = (time.perf_counter() - start) * 1000.0
    return first


def first_chunks(runs: int) -> None:
    """Time to first chunk of a stream of 5 events 100 ms apart, direct and through record."""
    responder = ScriptedResponder([Reply.text(ANSWER, chunks=5, delay_s=0.1)], repeat_last=True)
    with StandinGemini(responder) as api, tempfile.TemporaryDirectory() as folder:
        os.environ["OPENAI_BASE_URL"] = f"{api.url}/v1"
        with rec.record(
            folder, name="ttfc", upstream=api.url, point_clients=False, capture_tools=False
        ) as recording:
            bases = {
                ("gemini", "direct"): api.url,
                ("gemini", "record"): recording.url,
                ("openai", "direct"): f"{api.url}/v1",
                ("openai", "record"): f"{recording.url}/openai",
            }
            rounds = Rounds().run(
                {f"{w}/{p}": _first(base, w) for (w, p), base in bases.items()}, repeat=runs
            )
    rows = [
        (
            wire,
            f"{rounds.median(f'{wire}/direct'):.2f}",
            f"{rounds.median(f'{wire}/record'):.2f}",
            f"{_difference(rounds, wire, 'record'):+.2f}",
        )
        for wire in ("gemini", "openai")
    ]
    print(f"\ntime to first chunk (5 events 100 ms apart), median of {runs} runs")
    print(table(rows, ("wire", "direct ms", "record ms", "record +ms (goal <= 5)")))
    for wire, direct_ms, _, more in rows:
        floor = f"direct {direct_ms} ms"
        label = f"{wire} first chunk: record - direct"
        verdict(label, f"{more} ms", floor, "<= 5 ms", float(more) <= 5)


def _first(base_url: str, wire: str) -> Callable[[], float]:
    return lambda: _first_chunk_ms(base_url, wire)


def _bound(call: Call, calls: int) -> Callable[[], float]:
    return lambda: _per_call_ms(call, calls)


def _difference(rounds: Rounds, key: str, path: str) -> float:
    """Median over rounds of (path - direct), in ms."""
    pairs = zip(rounds.samples[f"{key}/{path}"], rounds.samples[f"{key}/direct"], strict=True)
    return statistics.median(a - b for a, b in pairs)


if __name__ == "__main__":
    main()
