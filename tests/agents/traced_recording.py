"""Trace an ADK agent in a child process (``tests.agents.traced_run``): the OTLP JSON or
dev-server trace file it leaves, and the ADK sessions the traced run left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cassettes._evalset import Invocation
from tests.agents.travel_brain import CONVERSATION
from tests.factories import FAKE_API_KEY

__all__ = [
    "replay_offline",
    "results_of",
    "EVENTS",
    "LEGACY",
    "SESSIONS",
    "SPANS",
    "Traces",
    "calls_and_replies",
    "eval_id",
    "model_calls",
    "trace_agent",
]

ROOT = Path(__file__).resolve().parents[2]

SESSIONS: tuple[tuple[str, ...], ...] = (CONVERSATION, ("What's the weather in Tokyo?",))
"""Two sessions: the travel agent's four-turn conversation, and one turn."""

LEGACY = {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"}
"""ADK's legacy telemetry schema (``call_llm`` spans, content on by default)."""
SPANS = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}
"""The default schema with message content on the spans."""
EVENTS = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY"}
"""The default schema with message content in log records beside the spans."""


def eval_id(session: dict[str, Any]) -> str:
    """The eval case id ``rec import`` gives a traced session."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in session["id"])


def trace_agent(
    out: Path,
    standin_url: str,
    env: dict[str, str],
    *,
    sessions: Sequence[Sequence[str]] = SESSIONS,
    flags: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Run and trace the agent (``env`` picks the schema, the capture and ``TRACED_AGENT``);
    the trace goes to ``out``. Returns the ADK sessions the run left (JSON)."""
    child = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "OTEL_", "ADK_", "GEMINI_"))
    }
    child.update(env, GOOGLE_API_KEY=FAKE_API_KEY, PYTHONPATH=str(ROOT), NO_PROXY="127.0.0.1")
    command = [sys.executable, "-m", "tests.agents.traced_run", str(out), standin_url]
    command += [json.dumps([list(s) for s in sessions]), *flags]
    subprocess.run(command, env=child, cwd=ROOT, check=True, timeout=600, capture_output=True)
    done: list[dict[str, Any]] = json.loads(Path(f"{out}.sessions.json").read_text())
    return done


class Traces:
    """Trace files per telemetry set-up (a label), each traced once (a module fixture)."""

    def __init__(self, standin_url: str, folder: Callable[[str], Path]) -> None:
        self._url = standin_url
        self._folder = folder
        self._made: dict[str, tuple[Path, list[dict[str, Any]]]] = {}

    def __call__(
        self, label: str, env: dict[str, str], **options: Any
    ) -> tuple[Path, list[dict[str, Any]]]:
        """The trace file of ``label`` and the ADK sessions its run left."""
        if label not in self._made:
            out = self._folder(label) / "prod.otlp.jsonl"
            self._made[label] = (out, trace_agent(out, self._url, env, **options))
        return self._made[label]


def calls_and_replies(invocations: Sequence[Invocation]) -> list[tuple[list[Any], str]]:
    """Per turn: every tool call (name, args) in order, and the final reply's text."""
    found = []
    for invocation in invocations:
        events = getattr(invocation.intermediate_data, "invocation_events", [])
        calls = [
            (p.function_call.name, p.function_call.args)
            for e in events
            for p in ((e.content.parts or []) if e.content else [])
            if p.function_call
        ]
        final = invocation.final_response
        found.append((calls, "".join(p.text or "" for p in (final.parts or [])) if final else ""))
    return found


def model_calls(session: dict[str, Any]) -> int:
    """The model responses a session's events record (not the tools' response events)."""
    return sum(
        1
        for e in session["events"]
        if e["author"] != "user"
        and not any("functionResponse" in p for p in (e.get("content") or {}).get("parts", []))
    )


def replay_offline(agent: Path, folder: Path, results: Path, monkeypatch: Any) -> int:
    """``rec replay AGENT FOLDER --results RESULTS`` with no credential and no base URL to
    any model."""
    from rec.cli import main

    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return main(["replay", str(agent), str(folder), "--results", str(results)])


def results_of(folder: Path) -> list[dict[str, Any]]:
    """The case results of the one results file in ``folder``."""
    (written,) = list(folder.glob("*.json"))
    cases: list[dict[str, Any]] = json.loads(written.read_text())["eval_case_results"]
    return cases
