"""``rec stop`` and ``rec status``: talk to recorders running on a folder, or recover them.

A recorder is live while it holds its recording's owner lock (``recorder._ownership``); a
pid alone never decides it, since a dead recorder's pid may belong to another process by
now. A live recorder is asked over loopback (``/__rec__/status``, ``/__rec__/stop``, with
the control token from its private state file). Only if it does not answer, and only if
its pid still names the process that wrote the state file, does it get SIGTERM. A
recorder that died (SIGKILL) is recovered from its journal here.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import signal
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassettes._errors import InputError
from cassettes._file_names import recording_name
from recorder._journal_lines import exchange_lines
from recorder._ownership import same_process
from recorder._recording_state import (
    RecorderState,
    RecordingPaths,
    orphan_journals,
    read_states,
    recorder_live,
)
from recorder._traffic import CONTROL_PREFIX, CONTROL_TOKEN_HEADER

if TYPE_CHECKING:
    from recorder._recording import FinalizeResult

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
    failure: str | None = None
    """Why a live recorder could not be stopped (it still runs; `rec stop` exits 1)."""


_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Talks to the recorder directly: a proxy from the environment never sees the token."""

_UNANSWERED = (OSError, http.client.HTTPException)
"""The recorder did not answer (refused, reset, timed out, closed mid-reply)."""


def _control(state: RecorderState, command: str, *, timeout: float) -> bytes:
    """Send a control command; the body of the recorder's answer.

    Raises:
        urllib.error.HTTPError: the recorder answered with an error status.
        OSError, http.client.HTTPException: it did not answer.
    """
    headers = {CONTROL_TOKEN_HEADER: state.control_token} if state.control_token else {}
    url = state.url + CONTROL_PREFIX + command
    data = None if command == "status" else b""
    request = urllib.request.Request(url, data=data, headers=headers)
    with _LOOPBACK.open(request, timeout=timeout) as response:
        body: bytes = response.read()
    return body


def recorder_statuses(out_dir: str | Path) -> list[RecorderStatus]:
    """The recorders (live or dead) that left state in ``out_dir``."""
    folder = Path(out_dir)
    found: list[RecorderStatus] = []
    for paths, state in read_states(folder):
        running = recorder_live(paths)
        counters: dict[str, Any] = {}
        if running:
            try:
                answer = json.loads(_control(state, "status", timeout=5.0))
            except (*_UNANSWERED, ValueError):
                answer = None
            counters = answer if isinstance(answer, dict) else {}
        found.append(RecorderStatus(state, running, counters, exchange_lines(paths.journal)))
    return found


STOP_WAIT_S = 240.0
"""How long `rec stop` waits for a recorder to finish: it lets responses and Live sessions
still in flight finish (up to 60 s), may wait on a build worker that stopped answering
(the last round trip and the worker's exit, each bounded at 60 s: ``recorder._build_worker``),
then finalises (a minute is ample for a large recording)."""


def stop_recorders(out_dir: str | Path, *, timeout: float = STOP_WAIT_S) -> list[StopReport]:
    """Stop every recorder on ``out_dir`` and recover any that died.

    A recorder lets responses still in flight finish (up to 60 s) before it finalises, and
    its waits on its build worker are bounded: the default ``timeout``
    (:data:`STOP_WAIT_S`) waits longer than all of them together.

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
    reports = [_stopped(paths, state, timeout) for paths, state in states if recorder_live(paths)]
    if not read_states(folder) and not orphan_journals(folder):
        return reports  # every recorder finished its own recording: nothing to recover
    from recorder._recording import recover_stale  # the finalising code: only when needed

    for result in recover_stale(folder):
        name = recording_name(result.cassette_path)
        reports.append(StopReport(name, result, None))
    return reports


def _stopped(paths: RecordingPaths, state: RecorderState, timeout: float) -> StopReport:
    """Ask a live recorder to stop (a signal if it does not answer and is surely it), and
    wait for it to finish its recording."""
    try:
        _control(state, "stop", timeout=5.0)
    except urllib.error.HTTPError as exc:  # it answered: alive, and says why it won't stop
        failure = f"does not stop on request: {_message(exc)}"
        log.error("the recorder of %r (pid %d) %s", state.name, state.pid, failure)
        return StopReport(state.name, None, None, failure=failure)
    except _UNANSWERED as exc:
        # It may be finalising already (the proxy is closed by then): give it time.
        log.info("the recorder of %r did not answer (%s)", state.name, type(exc).__name__)
        if _wait_until_released(paths, timeout):
            return StopReport(state.name, None, state.pid)
        if not same_process(state.pid, state.process_started):
            log.error(
                "the recorder of %r does not answer and pid %d cannot be confirmed to be "
                "it; not sending a signal. Stop it yourself, then run `rec stop` again",
                state.name,
                state.pid,
            )
            return StopReport(state.name, None, None, failure="does not answer")
        os.kill(state.pid, signal.SIGTERM)
    if not _wait_until_released(paths, timeout):
        log.error("the recorder of %r (pid %d) is still running", state.name, state.pid)
        return StopReport(state.name, None, None, failure="is still running")
    return StopReport(state.name, None, state.pid)


def _wait_until_released(paths: RecordingPaths, timeout: float) -> bool:
    """Wait for a recorder to finish (it gives its owner lock back last)."""
    deadline = time.monotonic() + timeout
    while recorder_live(paths):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _message(error: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(error.read())["error"]["message"])
    except (*_UNANSWERED, ValueError, KeyError, TypeError):
        return f"HTTP {error.code}"
