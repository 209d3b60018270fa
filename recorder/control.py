"""``rec stop`` and ``rec status``: talk to recorders running on a folder, or recover them.

A running recorder is found through its state file and asked over loopback
(``/__rec__/status``, ``/__rec__/stop``); if it does not answer it gets SIGTERM. A recorder
that died (SIGKILL) is recovered from its journal here.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from cassettes import InputError
from loopback import CONTROL_PREFIX

from .recording import (
    FinalizeResult,
    RecorderState,
    orphan_journals,
    pid_alive,
    read_states,
    recover_stale,
)

__all__ = ["RecorderStatus", "StopReport", "recorder_statuses", "stop_recorders"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecorderStatus:
    """One recorder found in a folder."""

    state: RecorderState
    running: bool
    counters: dict[str, Any]
    """What the live recorder reports (exchanges recorded, streams in flight...)."""
    journal_exchanges: int
    """Completed exchanges in its journal so far."""


@dataclass(frozen=True)
class StopReport:
    """What `rec stop` did for one recording."""

    name: str
    result: FinalizeResult | None
    """The finalised files when rec stop recovered the recording itself."""
    stopped_pid: int | None
    """The pid of a live recorder that was asked to stop (it finalised itself)."""


def _journal_lines(path: Path) -> int:
    try:
        with open(path, "rb") as handle:
            return sum(1 for line in handle if line.strip())
    except FileNotFoundError:
        return 0


def recorder_statuses(out_dir: str | Path) -> list[RecorderStatus]:
    """The recorders (live or dead) that left state in ``out_dir``."""
    folder = Path(out_dir)
    found: list[RecorderStatus] = []
    for paths, state in read_states(folder):
        running = pid_alive(state.pid)
        counters: dict[str, Any] = {}
        if running:
            try:
                counters = httpx.get(
                    state.url + CONTROL_PREFIX + "status", timeout=2.0, trust_env=False
                ).json()
            except (httpx.HTTPError, ValueError):
                counters = {}
        found.append(RecorderStatus(state, running, counters, _journal_lines(paths.journal)))
    return found


def stop_recorders(out_dir: str | Path, *, timeout: float = 30.0) -> list[StopReport]:
    """Stop every recorder on ``out_dir`` and recover any that died.

    Raises:
        InputError: nothing is recording in ``out_dir`` and there is nothing to recover.
    """
    folder = Path(out_dir)
    states = read_states(folder)
    if not states and not orphan_journals(folder):
        raise InputError(
            "no recorder is running here and there is nothing to recover",
            path=folder,
            fix="Pass the folder given to `rec start --out`",
        )
    reports: list[StopReport] = []
    for paths, state in states:
        if not pid_alive(state.pid):
            continue
        try:
            httpx.post(state.url + CONTROL_PREFIX + "stop", timeout=5.0, trust_env=False)
        except httpx.HTTPError:
            os.kill(state.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while paths.state.exists() and pid_alive(state.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        reports.append(StopReport(state.name, None, state.pid))
    for result in recover_stale(folder):
        name = result.cassette_path.name.removesuffix(".cassette.json")
        reports.append(StopReport(name, result, None))
    return reports
