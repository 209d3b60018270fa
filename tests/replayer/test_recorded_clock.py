"""The frozen clock: its plan (pure: where each turn starts, where an answer moves it) and
its scope (each case its own clock, read by its own task)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from cassettes._cassette import LazyExchanges, load_cassette
from cassettes._cassette_writer import save_cassette
from cassettes._file_names import side_index_file
from replayer._recorded_clock import ClockPlan, frozen_clock, recorded_time
from tests.factories import make_cassette, make_evalset, make_exchange, make_invocation

T0 = dt.datetime(2026, 1, 15, 9, 30, tzinfo=dt.timezone.utc).timestamp()


def _at(seconds: float) -> str:
    return dt.datetime.fromtimestamp(T0 + seconds, dt.timezone.utc).isoformat()


def _case(*starts: float) -> object:
    invocations = []
    for n, start in enumerate(starts):
        invocation = make_invocation(f"turn {n}")
        invocation.creation_timestamp = T0 + start if start >= 0 else 0.0
        invocations.append(invocation)
    [case] = make_evalset([invocations]).eval_cases
    return case


def test_recorded_time_reads_the_iso_instant() -> None:
    assert recorded_time(make_exchange(recorded_at=_at(1.5))) == T0 + 1.5
    assert recorded_time(make_exchange(recorded_at="yesterday")) is None


@pytest.mark.parametrize(
    ("starts", "expected"),
    [
        pytest.param((0.0, 60.0), T0, id="the-first-turn"),
        pytest.param((-1, 60.0), T0 + 60, id="the-first-known-turn"),
        pytest.param((-1, -1), None, id="no-recorded-start-real-clock"),
    ],
)
def test_the_clock_starts_at_the_first_recorded_turn(
    starts: tuple[float, ...], expected: float | None
) -> None:
    assert ClockPlan.for_case(_case(*starts), []).start == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("turn", "now", "expected"),
    [
        pytest.param(1, T0 + 2, T0 + 60, id="forward-to-the-turn-s-start"),
        pytest.param(1, T0 + 61, None, id="never-backwards"),
        pytest.param(2, T0 + 2, None, id="a-turn-without-a-start-keeps-ticking"),
        pytest.param(5, T0 + 2, None, id="beyond-the-recorded-turns"),
    ],
)
def test_at_turn(turn: int, now: float, expected: float | None) -> None:
    plan = ClockPlan.for_case(_case(0.0, 60.0, -1), [])  # type: ignore[arg-type]
    assert plan.at_turn(turn, now) == expected


def test_an_answer_moves_the_clock_to_the_next_request_of_its_cassette() -> None:
    calls = [make_exchange(i, recorded_at=_at(s)) for i, s in enumerate((0.0, 5.0, 70.0))]
    tool = make_exchange(3, recorded_at=_at(1.0)).model_copy(update={"origin": "tool"})
    other = [make_exchange(0, recorded_at=_at(2.0))]
    plan = ClockPlan.for_case(_case(0.0, 65.0), [[*calls, tool], other])  # type: ignore[arg-type]
    assert plan.after_answer(calls[0], T0 + 0.1, turn=0) == T0 + 5.0  # not the tool's call
    assert plan.after_answer(calls[0], T0 + 6.0, turn=0) is None  # never backwards
    assert plan.after_answer(calls[1], T0 + 5.1, turn=0) == T0 + 65.0  # not past turn 2
    assert plan.after_answer(calls[2], T0 + 70.1, turn=1) is None  # the last one
    assert plan.after_answer(other[0], T0 + 2.1, turn=0) is None  # another cassette's


def test_a_lazily_loaded_cassette_plans_the_same_without_parsing(tmp_path: Path) -> None:
    calls = [make_exchange(i, recorded_at=_at(s)) for i, s in enumerate((0.0, 5.0, 70.0))]
    tool = make_exchange(3, recorded_at=_at(1.0)).model_copy(update={"origin": "tool"})
    save_cassette(make_cassette([*calls, tool]), tmp_path / "mine.cassette.json")
    save_cassette(make_cassette([make_exchange(recorded_at=_at(2.0))]), tmp_path / "other.json")
    mine = load_cassette(tmp_path / "mine.cassette.json", lazy=True).exchanges
    other = load_cassette(tmp_path / "other.json", lazy=True).exchanges
    assert isinstance(mine, LazyExchanges) and isinstance(other, LazyExchanges)
    plan = ClockPlan.for_case(_case(0.0, 65.0), [mine, other])  # type: ignore[arg-type]
    assert not any(mine.parsed(i) for i in range(len(mine)))
    assert plan.after_answer(mine[0], T0 + 0.1, turn=0) == T0 + 5.0  # not the tool's call
    assert plan.after_answer(mine[1], T0 + 5.1, turn=0) == T0 + 65.0  # not past turn 2
    assert plan.after_answer(mine[2], T0 + 70.1, turn=1) is None  # the last one
    assert plan.after_answer(other[0], T0 + 2.1, turn=0) is None  # another cassette's
    assert not mine.parsed(3)  # the tool's call was never read


def test_concurrent_cases_each_read_their_own_recorded_clock() -> None:
    """Two cases inside their clocks at once (a barrier proves both are in): each task, and
    the thread it starts, reads its own recording's time; the rest of the process the real
    time."""
    import asyncio
    import time

    import time_machine

    later = T0 + 40 * 86400.0
    seen: dict[float, list[tuple[float, dt.date, float]]] = {}

    async def run(start: float, barrier: asyncio.Barrier) -> None:
        with frozen_clock(ClockPlan.for_case(_case(start - T0), [])) as clock:  # type: ignore[arg-type]
            assert clock is not None
            for _ in range(2):
                await barrier.wait()
                here = (time.time(), dt.date.today(), await asyncio.to_thread(time.time))
                seen.setdefault(start, []).append(here)

    async def both() -> float:
        barrier = asyncio.Barrier(2)
        await asyncio.gather(run(T0, barrier), run(later, barrier))
        return time.time()

    real = asyncio.run(both())
    for start, readings in seen.items():
        day = dt.datetime.fromtimestamp(start).date()
        for wall, today, threaded in readings:
            assert start <= wall < start + 60
            assert start <= threaded < start + 60
            assert today == day
    assert sorted(seen) == [T0, later]
    assert real > later + 86400  # outside the cases: today, not a recorded day
    assert time_machine.traveller_stack == []  # unpatched once the last case is done


def test_an_answer_from_another_case_s_span_does_not_move_the_clock() -> None:
    """With ``until`` (the next case's recorded start), only this case's exchanges count."""
    mine = [make_exchange(i, recorded_at=_at(s)) for i, s in enumerate((1.0, 5.0))]
    theirs = [make_exchange(i, recorded_at=_at(s)) for i, s in enumerate((100.0, 130.0), 2)]
    plan = ClockPlan.for_case(_case(0.0), [[*mine, *theirs]], until=T0 + 90)  # type: ignore[arg-type]
    assert plan.after_answer(mine[0], T0 + 1.1, turn=0) == T0 + 5.0
    assert plan.after_answer(mine[1], T0 + 5.1, turn=0) is None  # theirs follow, not mine
    assert plan.after_answer(theirs[0], T0 + 5.1, turn=0) is None


def test_a_case_among_many_reads_the_rows_of_its_own_span(tmp_path: Path) -> None:
    """An answer moves the clock to the request read on from it in the file: the rows of
    exchanges the case never reaches are not read. The last exchange's duration is written
    as a string (valid, but not as rec writes it), so reading its row parses it."""
    calls = [make_exchange(i, recorded_at=_at(float(i))) for i in range(40)]
    path = save_cassette(make_cassette(calls), tmp_path / "many.cassette.json")
    text = path.read_text()
    last = text.rindex('"duration_ms": 120.0')
    path.write_text(f'{text[:last]}"duration_ms": "120.0"{text[last + 20 :]}')
    side_index_file(path).unlink()  # the file's lines are read instead
    exchanges = load_cassette(path, lazy=True).exchanges
    assert isinstance(exchanges, LazyExchanges)
    plan = ClockPlan.for_case(_case(0.0, 65.0), [exchanges])  # type: ignore[arg-type]
    assert plan.after_answer(exchanges[0], T0 + 0.1, turn=0) == T0 + 1.0
    assert plan.after_answer(exchanges[1], T0 + 1.1, turn=0) == T0 + 2.0
    assert not exchanges.parsed(39)  # its row was never read
    assert plan.after_answer(exchanges[38], T0 + 38.1, turn=0) == T0 + 39.0  # read when reached
    assert exchanges.parsed(39)


def test_ids_out_of_file_order_follow_the_id_order(tmp_path: Path) -> None:
    """A file whose ids do not count up (edited by hand): the next request is the next id's."""
    calls = [make_exchange(i, recorded_at=_at(s)) for i, s in ((0, 0.0), (2, 10.0), (1, 5.0))]
    cassette = make_cassette(calls)  # renumbered 0, 1, 2: given their ids back
    cassette.exchanges = [
        e.model_copy(update={"id": c.id}) for e, c in zip(cassette.exchanges, calls, strict=True)
    ]
    save_cassette(cassette, tmp_path / "shuffled.cassette.json")
    exchanges = load_cassette(tmp_path / "shuffled.cassette.json", lazy=True).exchanges
    assert isinstance(exchanges, LazyExchanges) and not exchanges.ids_count_up()
    plan = ClockPlan.for_case(_case(0.0, 65.0), [exchanges])  # type: ignore[arg-type]
    assert plan.after_answer(exchanges[0], T0 + 0.1, turn=0) == T0 + 5.0  # id 1, not id 2
    assert plan.after_answer(exchanges[2], T0 + 5.1, turn=0) == T0 + 10.0  # id 1 -> id 2
    assert plan.after_answer(exchanges[1], T0 + 10.1, turn=0) is None  # id 2 is the last
