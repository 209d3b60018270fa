"""Trace an ADK agent in a child process (``tests.agents.traced_run``): the OTLP JSON or
dev-server trace file it leaves, and the ADK sessions the traced run left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.agents.travel_brain import CONVERSATION
from tests.factories import FAKE_API_KEY

__all__ = ["EVENTS", "LEGACY", "SESSIONS", "SPANS", "eval_id", "trace_agent"]

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
