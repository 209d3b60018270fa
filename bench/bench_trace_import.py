"""``rec import`` of a production trace, per 1,000 spans, beside ``rec import`` of a session.

    python bench/bench_trace_import.py [--copies 20] [--repeat 5]

The travel agent (tests/agents/travel: two agents, transfers, parallel tools) runs its
four-turn conversation against the stand-in model, traced by the real OpenTelemetry SDK
under each of ADK's telemetry schemas and written through the real OTLP encoder
(tests/agents/traced_run.py); its ADK session is kept too. Each file is then repeated
``--copies`` times under new session ids (a trace of that many sessions, and a session
file of as many sessions), and the imports run interleaved, in process, ``--repeat``
rounds (medians). Both write the EvalSet; the trace import also rebuilds and writes the
cassette.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import Rounds, table, verdict  # noqa: E402

from rec.standin.server import StandinGemini  # noqa: E402
from recorder._importers import import_source  # noqa: E402
from tests.agents.rates_api import STANDIN_ROUTES  # noqa: E402
from tests.agents.traced_recording import EVENTS, LEGACY, SPANS, trace_agent  # noqa: E402
from tests.agents.travel_brain import CONVERSATION, travel_brain  # noqa: E402

SETUPS = {
    "legacy (call_llm spans)": LEGACY,
    "semconv, content on spans": SPANS,
    "semconv, content in log records": EVENTS,
}


def _copies(text: str, session_id: str, copies: int) -> list[str]:
    return [text.replace(session_id, f"{session_id}-{n}") for n in range(copies)]


def _trace_file(folder: Path, url: str, env: dict[str, str], copies: int) -> tuple[Path, int]:
    """A trace of ``copies`` sessions (one traced run, repeated); and its span count."""
    out = folder / "one.otlp.jsonl"
    (session,) = trace_agent(out, url, env, sessions=[CONVERSATION])
    lines = out.read_text().splitlines()
    spans = sum(
        len(scope.get("spans", []))
        for line in lines
        for resource in json.loads(line).get("resourceSpans", [])
        for scope in resource.get("scopeSpans", [])
    )
    many = folder / "many.otlp.jsonl"
    many.write_text("\n".join(c for line in lines for c in _copies(line, session["id"], copies)))
    return many, spans * copies


def _session_file(folder: Path, url: str, copies: int) -> Path:
    out = folder / "session.otlp.jsonl"
    (session,) = trace_agent(out, url, LEGACY, sessions=[CONVERSATION])
    text = json.dumps(session)
    many = folder / "sessions.json"
    many.write_text("[" + ",".join(_copies(text, session["id"], copies)) + "]")
    return many


def _timed(source: Path, out: Path) -> float:
    started = time.perf_counter()
    import_source(source, out_dir=out, name="bench", overwrite=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=20, help="sessions in each file")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as standin,
    ):
        root = Path(tmp)
        files: dict[str, tuple[Path, int]] = {}
        for n, (label, env) in enumerate(SETUPS.items()):
            folder = root / f"trace{n}"
            folder.mkdir()
            files[label] = _trace_file(folder, standin.url, env, args.copies)
        sessions = _session_file(root, standin.url, args.copies)
        measures = {
            label: (lambda p=path, o=root / f"out-{n}": _timed(p, o))
            for n, (label, (path, _)) in enumerate(files.items())
        }
        measures["ADK session JSON"] = lambda: _timed(sessions, root / "out-session")
        rounds = Rounds().run(measures, repeat=args.repeat)
    rows = []
    for label, (_, spans) in files.items():
        seconds = rounds.median(label)
        rows.append(
            (
                f"trace: {label}",
                args.copies,
                spans,
                f"{seconds * 1000:.0f}",
                f"{seconds / spans * 1e6:.0f}",
            )
        )
    session_seconds = rounds.median("ADK session JSON")
    rows.append(("ADK session JSON", args.copies, "-", f"{session_seconds * 1000:.0f}", "-"))
    print(table(rows, ("rec import of", "sessions", "spans", "ms", "ms per 1,000 spans")))
    spread = {k: statistics.pstdev(v) * 1000 for k, v in rounds.samples.items()}
    print("spread (ms, pstdev over rounds):", {k: round(v) for k, v in spread.items()})
    floor = f"ADK session JSON {session_seconds * 1000:.0f} ms"
    for label, (_, spans) in files.items():
        per_spans = f"{rounds.median(label) / spans * 1e6:.0f} ms"
        verdict(f"trace: {label}, per 1,000 spans", per_spans, floor, None, None)


if __name__ == "__main__":
    main()
