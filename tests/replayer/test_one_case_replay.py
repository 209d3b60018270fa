"""Replaying one case of a long recording parses that case's exchanges and no others.

A recording session of many conversations is one cassette; a case replayed from it uses
a few of its exchanges. The run's other needs (the tools' own traffic, the mock tools'
pool, the completion order of concurrent calls, the frozen clock, what nothing played)
are read without parsing the rest: each exchange of the lazily loaded file says whether
it was parsed (``LazyExchanges.parsed``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import cassettes._cassette as cassette_module
from cassettes._cassette import LazyExchanges, load_cassette
from cassettes._cassette_writer import save_cassette
from replayer._local_run import replay_locally_async
from replayer._replay_target import ReplayOptions
from replayer._run_cassettes import RunCassettes
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel
from tests.factories import make_exchange

CONVERSATIONS = [
    ("What's the weather in Paris?", "Find flights from Paris to Rome on 2025-05-01"),
    ("What's the weather in Tokyo?",),
]
OTHERS = 300


def _recording(folder: Path) -> tuple[Path, Path]:
    """(eval set, cassette): the travel agent's two conversations, then many other
    exchanges of the same session (a long recording)."""
    evalset = record_travel(folder, CONVERSATIONS)
    path = folder / "travel.cassette.json"
    cassette = load_cassette(path)
    first = len(cassette.exchanges)
    cassette.exchanges.extend(make_exchange(first + i) for i in range(OTHERS))
    save_cassette(cassette, path)
    return evalset, path


def _replay_tokyo(evalset: Path, path: Path) -> tuple[Any, LazyExchanges]:
    """Replay the Tokyo case alone; (its result, the lazy exchanges of ``path``)."""
    recordings = RunCassettes()
    options = ReplayOptions(cases=("what_s_the_weather_in_tokyo",))
    [replayed] = asyncio.run(
        replay_locally_async(str(TRAVEL_AGENT), [evalset], options, recordings=recordings)
    )
    assert replayed.result.passed, replayed.failures
    exchanges = recordings.get(path).exchanges
    assert isinstance(exchanges, LazyExchanges)
    return replayed, exchanges


def test_one_case_of_a_long_recording_parses_only_its_own_exchanges(tmp_path: Path) -> None:
    evalset, path = _recording(tmp_path)
    replayed, exchanges = _replay_tokyo(evalset, path)
    parsed = {exchanges[i].id for i in range(len(exchanges)) if exchanges.parsed(i)}
    served = {e.id for e in replayed.traffic}
    assert served and parsed == served
    # What nothing played is counted all the same: every exchange but the case's.
    assert replayed.unused[path] == len(exchanges) - len(served)


def test_one_case_reads_the_bytes_of_only_its_own_exchanges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows (times, origins), the search for the case's streaming mode and the index
    read no other exchange's bytes through the file's map: its pages would count in
    memory, as much as the whole file for a long recording."""
    evalset, path = _recording(tmp_path)
    read: set[int] = set()
    raw_file = cassette_module._RawFile
    for name in ("bytes_of", "span_of"):
        real = getattr(raw_file, name)

        def spying(self: object, position: int, real: object = real) -> object:
            read.add(position)
            return real(self, position)  # type: ignore[operator]

        monkeypatch.setattr(raw_file, name, spying)
    replayed, exchanges = _replay_tokyo(evalset, path)
    assert read == {i for i in range(len(exchanges)) if exchanges.parsed(i)}
    assert {exchanges[i].id for i in read} == {e.id for e in replayed.traffic}


def test_the_whole_recording_replays_as_when_loaded_eagerly(tmp_path: Path) -> None:
    evalset, path = _recording(tmp_path)
    [replayed] = asyncio.run(replay_locally_async(str(TRAVEL_AGENT), [evalset], ReplayOptions()))
    assert replayed.result.passed, replayed.failures
    assert [c.eval_id for c in replayed.cases] == [
        "what_s_the_weather_in_paris",
        "what_s_the_weather_in_tokyo",
    ]
    assert replayed.unused[path] == OTHERS
    assert replayed.unused_ids[path] == frozenset(
        range(len(replayed.traffic), len(replayed.traffic) + OTHERS)
    )
