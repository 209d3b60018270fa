"""``rec replay``: run eval cases against an agent whose model (and tools) are replayed, then score.

For each eval set: find its recording (``<name>.cassette.json`` beside it, or
``--recording``), run its cases in this process (:mod:`replayer._local_run`) or, with
``--workers N``, in N worker processes (:mod:`replayer._worker_pool`), and score them
with the eval config. What a run is asked and gives back is in :mod:`replayer._replay_target`.

Example::

    results = replay_evalsets("agents/travel", ["agents/travel/travel.evalset.json"])
    assert all(r.result.passed for r in results)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from cassettes._errors import InputError
from cassettes._evalset import EvalSet
from cassettes._record_mode import RecordMode
from replayer._agent_loading import LoadedAgent
from replayer._local_run import replay_locally_async
from replayer._prices import load_prices
from replayer._replay_target import EvalSetReplay, ReplayOptions
from replayer._worker_pool import replay_in_workers

__all__ = ["replay_evalsets", "replay_evalsets_async"]


async def replay_evalsets_async(
    agent: str | LoadedAgent,
    evalsets: Sequence[str | Path | EvalSet],
    options: ReplayOptions = ReplayOptions(),
    *,
    on_case: Callable[[int, int], None] | None = None,
) -> list[EvalSetReplay]:
    """Async :func:`replay_evalsets`."""
    _check(options)
    if _in_workers(agent, options):
        return await asyncio.to_thread(replay_in_workers, agent, evalsets, options, on_case=on_case)
    return await replay_locally_async(agent, evalsets, options, on_case=on_case)


def replay_evalsets(
    agent: str | LoadedAgent,
    evalsets: Sequence[str | Path | EvalSet],
    options: ReplayOptions = ReplayOptions(),
    *,
    on_case: Callable[[int, int], None] | None = None,
) -> list[EvalSetReplay]:
    """Replay and score eval sets against AGENT (what ``rec replay`` runs).

    Args:
        agent: an ADK agent folder or module, ``module:function``, or a loaded agent.
        evalsets: eval set files or folders of them, or in-memory :class:`EvalSet` objects
            (their recording is ``options.recording``).
        options: the flags (see :class:`ReplayOptions`).
        on_case: progress callback, (case runs done, case runs in total).

    Returns:
        One :class:`EvalSetReplay` per eval set; ``.result.passed`` is the verdict.

    Raises:
        InputError: an agent, eval set, recording or config cannot be used.
    """
    _check(options)
    if _in_workers(agent, options):
        return replay_in_workers(agent, evalsets, options, on_case=on_case)
    return asyncio.run(replay_locally_async(agent, evalsets, options, on_case=on_case))


def _check(options: ReplayOptions) -> None:
    if options.num_runs is not None and options.num_runs < 1:
        raise InputError("must be at least 1", path="--num-runs", fix="Pass --num-runs 1 or more")
    load_prices(options.prices)  # a bad price table is said before any case runs


def _in_workers(agent: str | LoadedAgent, options: ReplayOptions) -> bool:
    """Whether this run goes to worker processes (see :mod:`replayer._worker_pool`)."""
    return (
        options.workers > 1
        and not isinstance(agent, LoadedAgent)
        and options.mode not in (RecordMode.RECORD, RecordMode.AUTO)
        and options.otlp is None  # the spans are collected in this process
    )
