"""The frozen clock's plan (pure): where each turn starts, where an answer moves the clock."""

from __future__ import annotations

import datetime as dt

import pytest

from replayer._recorded_clock import ClockPlan, recorded_time
from tests.factories import make_evalset, make_exchange, make_invocation

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
