"""Run a recording in the foreground, as ``rec start`` does, until told to stop.

The recording ends when the wrapped command exits, on Ctrl-C / SIGTERM, or when
``rec stop`` posts to the proxy's control endpoint. However it ends (a command that
cannot start included) the recorder's ``async with`` block closes it: the journal is
compacted into the cassette, or, if nothing was recorded before a failure, no file is
left behind. Signals that arrive while it finalises do not interrupt it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cassettes._errors import InputError
from recorder._recorder import Recorder
from recorder._recording import FinalizeResult
from recorder._traffic import child_environment, run_server, spawn

__all__ = ["ForegroundOutcome", "run_foreground"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ForegroundOutcome:
    """How a foreground recording ended."""

    result: FinalizeResult
    exit_code: int
    """The wrapped command's exit status (0 without a command, and 0 when the command died of
    the Ctrl-C / SIGTERM / ``rec stop`` that ended the recording: the stop was asked for)."""


def run_foreground(
    recorder: Recorder,
    *,
    command: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    on_ready: Callable[[str], None] = lambda url: None,
) -> ForegroundOutcome:
    """Record until the command exits or a stop is requested; then finalise.

    Raises:
        InputError: the command cannot be started, the port is taken, or the folder
            cannot be written.
    """
    exit_code = run_server(_main(recorder, list(command), dict(env or {}), on_ready))
    assert recorder.result is not None  # a block that ended normally was finalised
    return ForegroundOutcome(result=recorder.result, exit_code=exit_code)


async def _main(
    recorder: Recorder, command: list[str], env: dict[str, str], on_ready: Callable[[str], None]
) -> int:
    loop = asyncio.get_running_loop()
    signalled: list[int] = []

    def on_signal(sig: int) -> None:
        signalled.append(sig)
        recorder.request_stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        async with recorder:
            on_ready(recorder.url)
            if not command:
                await recorder.wait_for_stop()
                return 0
            env = {**child_environment(recorder.url), **env}
            code, stopped = await _run_command(command, env, recorder.wait_for_stop())
            # A command ended by the stop (rec's SIGTERM, or the terminal's Ctrl-C reaching
            # it too) did what was asked: 0, as `rec start` without a command.
            return 0 if (stopped or signalled) and code in _STOP_CODES else code
    finally:  # only now: a signal during finalisation must not cut it short
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


_STOP_CODES = frozenset(128 + sig for sig in (signal.SIGINT, signal.SIGTERM))
"""Exit statuses of a command that died of Ctrl-C or SIGTERM (as a shell reports them)."""


async def _run_command(
    command: list[str], env: dict[str, str], stop: Coroutine[Any, Any, None]
) -> tuple[int, bool]:
    """Run ``command`` until it exits or ``stop`` returns (then end it).

    Returns:
        Its exit status (128 + N for a signal N) and whether the stop ended it.
    """
    try:
        process = await asyncio.create_subprocess_exec(*command, env=env)
    except OSError as exc:
        stop.close()
        raise InputError(
            f"cannot run {command[0]!r} ({exc.strerror or exc})",
            path="COMMAND",
            fix="Check the command after `--` (is it installed, on PATH and executable?)",
        ) from None
    waiter = spawn(process.wait(), name=f"rec-wait-{process.pid}")
    stopper = spawn(stop, name="rec-stop")
    done, _ = await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if waiter not in done:
        log.info("stopping %s", command[0])
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        try:
            await asyncio.wait_for(asyncio.shield(waiter), timeout=10)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await waiter
    stopper.cancel()
    code = process.returncode
    assert code is not None
    return (code if code >= 0 else 128 - code), waiter not in done
