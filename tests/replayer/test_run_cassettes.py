"""A `rec replay` run reads each recording from disk once, whatever needs it.

The model proxy's index, the tools' own HTTP traffic, the MCP sessions and the mock tools'
pool share one load of the cassette (not four copies of a large recording in memory).
The file opens are counted with an audit hook (``sys.addaudithook``): the interpreter's
own record of ``open()``, nothing of rec's is replaced.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from replayer._replay_run import replay_evalsets
from replayer._replay_target import ReplayOptions
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel

_OPENED: list[str] = []
_WATCHING: list[bool] = [False]


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHING[0] and event == "open" and isinstance(args[0], (str, Path)):
        _OPENED.append(str(args[0]))


sys.addaudithook(_audit)  # hooks cannot be removed: this one only counts while watching


@pytest.fixture
def opened() -> Any:
    _OPENED.clear()
    _WATCHING[0] = True
    try:
        yield _OPENED
    finally:
        _WATCHING[0] = False


def test_a_replay_run_reads_its_recording_once(tmp_path: Path, opened: list[str]) -> None:
    _WATCHING[0] = False
    evalset = record_travel(
        tmp_path, [("What's the weather in Paris?", "Find flights from Paris to Rome")]
    )
    cassette = tmp_path / "travel.cassette.json"
    _WATCHING[0] = True
    [result] = replay_evalsets(str(TRAVEL_AGENT), [evalset], ReplayOptions())
    assert result.result.passed
    assert opened.count(str(cassette)) == 1, opened


def test_a_miss_still_fails_closed_and_names_the_recording(tmp_path: Path) -> None:
    evalset = record_travel(tmp_path, [("What's the weather in Paris?",)])
    text = evalset.read_text().replace("weather in Paris", "weather in Lima")
    evalset.write_text(text)
    [result] = replay_evalsets(str(TRAVEL_AGENT), [evalset], ReplayOptions())
    assert not result.result.passed
    [failure] = result.failures
    assert failure.miss is not None and "Lima" in failure.reason
    assert str(tmp_path / "travel.cassette.json") in str(failure.miss)
