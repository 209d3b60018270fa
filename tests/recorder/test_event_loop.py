"""`rec start` and `rec serve` run their loop on uvloop where it is installed, else on
asyncio's own (recorder/_traffic/_event_loop.py); tests/recorder/test_cli_recording.py asks the
running commands which one they are on."""

from __future__ import annotations

import asyncio
import sys

import pytest

from recorder._traffic import run_server
from recorder._traffic._event_loop import SWITCH_INTERVAL, loop_kind


async def _kind() -> str:
    return loop_kind(asyncio.get_running_loop())


def test_a_server_runs_on_uvloop_where_it_is_installed() -> None:
    pytest.importorskip("uvloop")
    assert run_server(_kind()) == "uvloop"


def test_a_server_runs_on_asyncio_where_uvloop_is_not_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert run_server(_kind()) == "asyncio"


def test_a_server_loop_returns_what_its_coroutine_returns_and_raises_what_it_raises() -> None:
    async def fails() -> None:
        raise LookupError("from the loop")

    assert run_server(asyncio.sleep(0, result=7)) == 7
    with pytest.raises(LookupError, match="from the loop"):
        run_server(fails())


async def _switch_interval() -> float:
    return sys.getswitchinterval()


def test_a_server_loop_runs_with_rec_s_switch_interval_and_puts_the_process_s_back() -> None:
    before = sys.getswitchinterval()
    assert before != SWITCH_INTERVAL
    assert run_server(_switch_interval()) == SWITCH_INTERVAL
    assert sys.getswitchinterval() == before
