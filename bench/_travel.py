"""The travel agent of the tests (tools, state, a sub-agent) as benchmark workload.

``conversations(n)`` gives n three-turn conversations (weather, flights, weather);
``record_travel`` records them against the stand-in Gemini server through rec's
recording proxy and returns the EvalSet (cassette beside it).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.agents.travel_recording import TRAVEL_AGENT, record_travel  # noqa: E402

__all__ = ["TRAVEL_AGENT", "conversations", "record_travel"]

CITIES = ["Paris", "Rome", "Tokyo", "Berlin", "Madrid", "Lisbon", "Vienna", "Oslo"]


def conversations(count: int) -> list[tuple[str, str, str]]:
    """``count`` distinct three-turn conversations."""
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
