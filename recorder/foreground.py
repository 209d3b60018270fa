"""Run a recording in the foreground, as ``rec start`` does, until told to stop.

The recording ends when the wrapped command exits, on Ctrl-C / SIGTERM, or when
``rec stop`` posts to the proxy's control endpoint. Either way the journal is compacted
into the cassette before this returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from cassettes import InputError

from .client_env import child_environment
from .recorder import Recorder
from .recording import FinalizeResult

__all__ = ["ForegroundOutcome", "run_foreground"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ForegroundOutcome:
    """How a foreground recording ended."""

    result: FinalizeResult
    exit_code: int
    """The wrapped command's exit status (0 without a command)."""


def run_foreground(
    recorder: Recorder,
    *,
    command: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    on_ready: Callable[[str], None] = lambda url: None,
) -> ForegroundOutcome:
    """Record until the command exits or a stop is requested; then finalise.

    Raises:
        InputError: the command cannot be started, or the port is taken.
    """
    exit_code = asyncio.run(_main(recorder, list(command), dict(env or {}), on_ready))
    result = recorder.finish()
    return ForegroundOutcome(result=result, exit_code=exit_code)


async def _main(
    recorder: Recorder, command: list[str], env: dict[str, str], on_ready: Callable[[str], None]
) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def request_stop() -> None:
        loop.call_soon_threadsafe(stop.set)

    server = recorder.prepare(on_stop=request_stop)
    async with server:
        recorder.announce()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            on_ready(server.url)
            if not command:
                await stop.wait()
                return 0
            return await _run_command(command, {**child_environment(server.url), **env}, stop)
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)


async def _run_command(command: list[str], env: dict[str, str], stop: asyncio.Event) -> int:
    try:
        process = await asyncio.create_subprocess_exec(*command, env=env)
    except (FileNotFoundError, PermissionError) as exc:
        raise InputError(
            f"cannot run {command[0]!r} ({exc.strerror})",
            path="COMMAND",
            fix="Check the command after `--` (is it installed and on PATH?)",
        ) from None
    waiter = asyncio.ensure_future(process.wait())
    stopper = asyncio.ensure_future(stop.wait())
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
    return code if code >= 0 else 128 - code
