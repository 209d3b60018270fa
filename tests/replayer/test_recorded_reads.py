"""Recorded reads: what an agent's code read of the clock, uuid4 and random is replayed.

Real ADK agents are recorded through the real proxy against the stand-in with rec's ADK
capture plugin, a day before "now" (time-machine) and in one time zone; they replay with
the stand-in stopped and no key, on today's clock and in another time zone, in worker
processes. Replay mode fails closed on any request that differs from the recording, so a
green run means every model request was the recorded one.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassettes._cassette import load_cassette
from rec.cli import main
from rec.standin.brain import RuleBrain, call
from tests.agents.adk_recording import record_adk

AGENTS = Path(__file__).resolve().parents[1] / "agents"
RECORDED_ZONE = "America/New_York"
REPLAYED_ZONE = "Asia/Tokyo"


@pytest.fixture
def zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone is put back after the test."""
    yield
    monkeypatch.undo()
    time.tzset()


def _in_zone(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("TZ", name)
    time.tzset()


def _record(folder: Path, agent_name: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Record two sessions of ``tests/agents/<agent_name>`` a day ago, in New York."""
    import importlib

    import time_machine

    agent = importlib.import_module(f"tests.agents.{agent_name}.agent")
    _in_zone(monkeypatch, RECORDED_ZONE)
    day_ago = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)
    return record_adk(
        folder,
        agent.root_agent,
        [("Please open a ticket about the printer",), ("Open a ticket about the coffee",)],
        responder=RuleBrain([call("open_ticket", {"subject": "printer"}, when="ticket")]),
        app_name=agent_name,
        capture=True,
        clock=lambda: time_machine.travel(day_ago, tick=True),
    )


def _recorded_kinds(folder: Path) -> set[str]:
    reads = load_cassette(folder / "recording.cassette.json").reads
    assert reads is not None
    return {kind for invocation in reads.invocations for kind in invocation.kinds()}


@pytest.mark.usefixtures("zone")
@pytest.mark.parametrize(
    "tools", [pytest.param((), id="mock-tools"), pytest.param(("--live-tools",), id="live-tools")]
)
def test_clock_uuid_and_random_replay_a_day_later_in_another_zone(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    loopback_only: object,
    tools: tuple[str, ...],
) -> None:
    _record(tmp_path, "reads", monkeypatch)
    assert _recorded_kinds(tmp_path) == {"clock", "uuid4", "random"}
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    _in_zone(monkeypatch, REPLAYED_ZONE)
    capsys.readouterr()

    code = main(["replay", str(AGENTS / "reads"), str(tmp_path), "--workers", "2", *tools])
    output = capsys.readouterr().out
    assert code == 0, output
    assert "2 passed" in output, output
    assert "replayed reads: clock x" in output, output

    # The same run on the live clock, ids and randomness misses at its first request.
    code = main(["replay", str(AGENTS / "reads"), str(tmp_path), "--workers", "2", "--live-clock"])
    output = capsys.readouterr().out
    assert code == 1, output
    assert "systemInstruction" in output, output


@pytest.mark.usefixtures("zone")
def test_adk_s_memory_sample_shape_replays_a_day_later_in_another_zone(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    loopback_only: object,
) -> None:
    _record(tmp_path, "memory_shape", monkeypatch)
    assert _recorded_kinds(tmp_path) == {"clock"}
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    _in_zone(monkeypatch, REPLAYED_ZONE)
    capsys.readouterr()
    code = main(["replay", str(AGENTS / "memory_shape"), str(tmp_path), "--workers", "2"])
    output = capsys.readouterr().out
    assert code == 0, output
    assert "2 passed" in output, output
    assert os.environ["TZ"] == REPLAYED_ZONE  # the recorded zone was the cases' only
