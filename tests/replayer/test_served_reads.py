"""Recorded reads served per case and per reader, side by side in one process; a read past
the recording continues from it; the frameworks' own reads stay real."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import random
import time
import uuid
from uuid import uuid4

import pytest

from cassettes._reads import InvocationReads, Read
from recorder._traffic import (
    RecordingReads,
    begin_invocation,
    end_invocation,
    enter_reader,
    enter_tool,
    leave_tool,
    reads_patched,
)
from replayer._served_reads import CaseReads, ServedReads

T0 = int(dt.datetime(2020, 2, 29, 23, 59, 59, 123456, tzinfo=dt.timezone.utc).timestamp() * 1e6)
T0_NS = T0 * 1000


def _recorded(n: int) -> InvocationReads:
    """An invocation whose model reader read the clock, a uuid and a draw, all told by
    ``n``, and whose tool read a uuid."""
    return InvocationReads(
        invocation_id=f"e-{n}",
        readers={
            "model:agent#0": [
                Read(kind="clock", value=T0_NS + n * 1_000),
                Read(kind="uuid4", value=f"{n:032x}"),
                Read(kind="random", value=n / 10),
            ],
            "tool:lookup#0": [Read(kind="uuid4", value=f"{n + 100:032x}")],
        },
    )


def test_what_is_recorded_is_what_is_served() -> None:
    recording = RecordingReads("e-1")
    with reads_patched():
        begin_invocation(recording)
        enter_reader("model:agent")
        read = (time.time_ns(), uuid.uuid4(), random.random(), random.randint(1, 6))
        end_invocation()
        case = CaseReads("case", [recording.reads])
        begin_invocation(ServedReads(recording.reads, case))
        enter_reader("model:agent")
        served = (time.time_ns(), uuid.uuid4(), random.random(), random.randint(1, 6))
        end_invocation()
    assert served == read
    # randint draws bits until one fits: once or more, as recorded
    assert case.served["clock"] == case.served["uuid4"] == case.served["random"] == 1
    assert case.served["bits"] >= 1 and not case.beyond
    assert uuid.uuid4() != read[1]  # outside an invocation: real again


def test_cases_side_by_side_each_read_their_own_recording() -> None:
    """Two cases inside their invocations at once (a barrier proves both are in): each
    task, and the thread it starts, reads its own recording."""

    def now() -> dt.datetime:  # the agent's code, run in a thread (as a sync tool may be)
        return dt.datetime.now(dt.timezone.utc)

    async def case(n: int, barrier: asyncio.Barrier) -> tuple[object, ...]:
        begin_invocation(ServedReads(_recorded(n), CaseReads(f"case{n}", [])))
        enter_reader("model:agent")
        await barrier.wait()
        read = await asyncio.to_thread(now)
        await barrier.wait()
        return read, uuid4(), random.random()

    async def both() -> list[tuple[object, ...]]:
        barrier = asyncio.Barrier(2)
        return list(await asyncio.gather(case(1, barrier), case(2, barrier)))

    with reads_patched():
        first, second = asyncio.run(both())
    for n, seen in ((1, first), (2, second)):
        at = dt.datetime.fromtimestamp((T0_NS + n * 1_000) / 1e9, dt.timezone.utc)
        assert seen == (at, uuid.UUID(int=n), n / 10)


def test_a_tool_that_never_runs_does_not_shift_the_others() -> None:
    """Mock mode: the tool's reads never happen, the model reader still gets its own."""
    case = CaseReads("case", [_recorded(3)])
    with reads_patched():
        begin_invocation(ServedReads(_recorded(3), case))
        enter_tool("lookup")
        leave_tool()  # answered from the recording: nothing read
        enter_reader("model:agent")
        assert time.time_ns() == T0_NS + 3_000
        assert uuid.uuid4() == uuid.UUID(int=3)
        end_invocation()
    assert case.summary() == "replayed reads: clock x1, uuid4 x1"


def test_a_reader_past_its_recording_continues_from_the_last_recorded_clock() -> None:
    case = CaseReads("case", [_recorded(4)])
    with reads_patched():
        begin_invocation(ServedReads(_recorded(4), case))
        enter_reader("model:agent")
        served = (time.time_ns(), uuid.uuid4(), random.random())
        more = [time.time_ns() for _ in range(3)]
        fresh = uuid.uuid4()
        end_invocation()
    assert served == (T0_NS + 4_000, uuid.UUID(int=4), 0.4)
    assert T0_NS + 4_000 <= more[0] <= more[1] <= more[2] < T0_NS + 3_600 * 10**9
    assert fresh != uuid.UUID(int=4)  # a real one: ids must not repeat
    assert case.beyond == {"clock": 3, "uuid4": 1}
    summary = case.summary()
    assert summary is not None and "clock x3, uuid4 x1 beyond the recording" in summary, summary


def test_a_read_out_of_order_is_real_and_said() -> None:
    case = CaseReads("case", [_recorded(5)])
    with reads_patched():
        begin_invocation(ServedReads(_recorded(5), case))
        enter_reader("model:agent")
        drawn = random.random()  # the recording read the clock first
        end_invocation()
    assert drawn != 0.5
    assert case.beyond == {"random": 1}


def test_the_frameworks_own_reads_stay_real(caplog: pytest.LogCaptureFixture) -> None:
    """A read by the standard library's machinery (here logging's record time) is never
    served, and never takes a recorded value from the agent."""
    case = CaseReads("case", [_recorded(6)])
    with reads_patched():
        begin_invocation(ServedReads(_recorded(6), case))
        enter_reader("model:agent")
        record = logging.makeLogRecord({"msg": "x"})
        assert time.time_ns() == T0_NS + 6_000
        end_invocation()
    assert record.created > T0 / 1e6 + 86_400 * 365
    assert case.served == {"clock": 1}
