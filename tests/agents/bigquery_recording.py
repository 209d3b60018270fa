"""Run an agent with ADK's BigQuery Agent Analytics plugin in a child process
(``tests.agents.bigquery_run``): the rows it exported, and the ADK sessions the run left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rec.standin.brain import RuleBrain, Turn
from tests.agents.traced_recording import SESSIONS
from tests.agents.travel_brain import travel_rules
from tests.factories import FAKE_API_KEY

__all__ = ["PlainBrain", "export_rows"]

ROOT = Path(__file__).resolve().parents[2]


class PlainBrain(RuleBrain):
    """The travel brain with replies that open with a word, not ``[``: the plugin takes
    text that opens like a JSON array for a JSON blob and writes ``[UNPARSEABLE_JSON_BLOB]``
    in its place (flagging the row ``is_truncated``)."""

    def __init__(self) -> None:
        super().__init__(travel_rules())

    @staticmethod
    def prefix(turn: Turn) -> str:
        return f"{turn.agent or 'model'} {turn.tag}:"


def export_rows(
    out: Path,
    standin_url: str,
    *,
    sessions: Sequence[Sequence[str]] = SESSIONS,
    flags: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Run the agent with the plugin (``env`` may name another agent, or streaming); its
    rows go to ``out``. Returns the ADK sessions the run left (JSON)."""
    child = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "OTEL_", "ADK_", "GEMINI_"))
    }
    child.update(GOOGLE_API_KEY=FAKE_API_KEY, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    child.update(env or {}, NO_PROXY="127.0.0.1")
    command = [sys.executable, "-m", "tests.agents.bigquery_run", str(out), standin_url]
    command += [json.dumps([list(s) for s in sessions]), *flags]
    subprocess.run(command, env=child, cwd=ROOT, check=True, timeout=600, capture_output=True)
    done: list[dict[str, Any]] = json.loads(Path(f"{out}.sessions.json").read_text())
    return done
