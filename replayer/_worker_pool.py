"""``rec replay --workers N``: run a suite's cases in N worker processes, merge one result.

Replaying an ADK agent is CPU-bound in one process (asyncio concurrency, ``--parallel``,
buys nothing), so the cases are split over worker processes. Each worker is a process of
its own, forked from a fork server that has imported ADK and rec's replay code once, or a
spawned interpreter where there is none (:mod:`replayer._worker_start`; the parent itself is
never forked: an event loop, aiohttp sessions or the replay proxy's thread would not survive
it). A worker loads the agent once and the recordings once and replays its share of the
cases with the code of a run in one process (:func:`replayer._local_run.replay_locally_async`
with ``only`` = its cases). The parent resolves the eval sets, deals the
cases out round-robin in suite order (every run of a case goes to the same worker, so
``--num-runs`` averages as in one process), draws the progress and merges what the
workers send back into one :class:`EvalSetReplay` per eval set, with the cases in the
order a serial run gives them (:func:`replayer._sharding.merge_results` joins the
results).

A worker that dies (killed, out of memory, a crash in native code) never hangs the run:
its cases fail with the reason, the other workers' cases are reported. An error a worker
raises (an agent that cannot load, a bad config) stops the run as it would in one process.

Record and auto modes write one recording and run in one process
(:func:`replayer._replay_run.replay_evalsets` sends only the other modes here).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from cassettes._errors import InputError, RunError
from cassettes._eval_result import EvalSetResult
from cassettes._evalset import EvalCase, EvalSet
from replayer import _replay_target as replay_target
from replayer._agent_loading import LoadedAgent
from replayer._case_failure import CaseFailure
from replayer._local_run import replay_locally_async
from replayer._sharding import merge_results
from replayer._worker_start import default_workers, worker_context

__all__ = ["default_workers", "replay_in_workers"]


@dataclass
class _Worker:
    """One worker process and what it has sent so far."""

    number: int
    keys: frozenset[tuple[str, str]]
    process: Any
    conn: Connection
    replays: list[replay_target.EvalSetReplay] | None = None
    died: str | None = None
    """Why the worker ended without its results (None while it runs or once they arrived)."""


def replay_in_workers(
    agent: str | Path | LoadedAgent,
    evalsets: Sequence[str | Path | EvalSet],
    options: replay_target.ReplayOptions,
    *,
    on_case: Callable[[int, int], None] | None = None,
) -> list[replay_target.EvalSetReplay]:
    """:func:`replayer._replay_run.replay_evalsets` with the cases spread over processes.

    Falls back to one process where workers cannot help or cannot be used: a loaded agent
    (it cannot cross to another process), fewer than two cases, or eval sets that do not
    resolve (the serial run reports that error, after the agent's own, as it always does).

    Raises:
        InputError: as :func:`replayer._replay_run.replay_evalsets`.
        RunError: a worker raised something that cannot be sent back whole.
    """
    serial = replace(options, workers=1)
    if isinstance(agent, LoadedAgent):
        return _in_this_process(agent, evalsets, serial, on_case=on_case)
    spec = str(agent)
    try:
        targets = replay_target.resolve_targets(evalsets, options)
        chosen = [replay_target.selected_cases(target, options) for target in targets]
    except InputError:
        return _in_this_process(spec, evalsets, serial, on_case=on_case)
    keys = list(
        dict.fromkeys(
            (t.evalset.eval_set_id, c.eval_id)
            for t, cs in zip(targets, chosen, strict=True)
            for c in cs
        )
    )
    count = min(options.workers, len(keys))
    if count < 2:
        return _in_this_process(spec, evalsets, serial, on_case=on_case)
    shares = [frozenset(keys[i::count]) for i in range(count)]
    total = sum(len(cs) for cs in chosen) * (options.num_runs or 1)
    workers = _start(spec, evalsets, serial, shares)
    try:
        _collect(workers, total, on_case)
    finally:
        _stop(workers)
    for worker in workers:
        if worker.replays is None and worker.died is None:
            worker.died = "it stopped without sending its results"
    return [
        _merge(index, target, cases, workers)
        for index, (target, cases) in enumerate(zip(targets, chosen, strict=True))
    ]


def _in_this_process(
    agent: str | LoadedAgent,
    evalsets: Sequence[str | Path | EvalSet],
    options: replay_target.ReplayOptions,
    *,
    on_case: Callable[[int, int], None] | None,
) -> list[replay_target.EvalSetReplay]:
    return asyncio.run(replay_locally_async(agent, evalsets, options, on_case=on_case))


def _start(
    agent: str,
    evalsets: Sequence[str | Path | EvalSet],
    options: replay_target.ReplayOptions,
    shares: list[frozenset[tuple[str, str]]],
) -> list[_Worker]:
    silence = not logging.getLogger("google_adk").propagate
    context = worker_context()
    environ = dict(os.environ)  # a forked worker gets the fork server's: give it this one
    workers = []
    for number, share in enumerate(shares, start=1):
        parent, child = context.Pipe(duplex=False)
        process = context.Process(  # type: ignore[attr-defined]
            target=_worker_main,
            args=(child, agent, list(evalsets), replace(options, only=share), silence, environ),
            name=f"rec-replay-worker-{number}",
            daemon=True,
        )
        process.start()
        child.close()  # the parent keeps only its reading end: EOF when the worker is gone
        workers.append(_Worker(number, share, process, parent))
    return workers


def _collect(
    workers: list[_Worker], total: int, on_case: Callable[[int, int], None] | None
) -> None:
    """Read every worker's messages until each has sent its results or died."""
    done = 0
    running = list(workers)
    while running:
        ready = wait([w.conn for w in running])
        for worker in [w for w in running if w.conn in ready]:
            try:
                message: tuple[Any, ...] = worker.conn.recv()
            except (EOFError, OSError):
                worker.process.join()
                worker.died = _exit_text(worker.process.exitcode)
                running.remove(worker)
                continue
            if message[0] == "case":
                done += 1
                if on_case is not None:
                    on_case(done, total)
            elif message[0] == "done":
                worker.replays = message[1]
                running.remove(worker)
            else:  # "error": what the worker raised
                error: BaseException = message[1]
                raise error


def _stop(workers: list[_Worker]) -> None:
    for worker in workers:
        if worker.process.is_alive():
            worker.process.terminate()
    for worker in workers:
        worker.process.join()
        worker.conn.close()


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"it was killed by {name}"
    return f"it exited with status {code} before sending its results"


def _lost(
    target: replay_target.ReplayTarget, lost: list[EvalCase], worker: _Worker, workers: int
) -> tuple[list[CaseFailure], EvalSetResult]:
    """The failures and the failed results of the cases a dead worker never reported."""
    evalset = target.evalset
    reason = (
        f"its worker process (worker {worker.number} of {workers}) ended before "
        f"reporting its cases: {worker.died}. Run the case with --workers 1 to see it fail "
        "in one process"
    )
    broken = [replay_target.failed_result(evalset, c, [f"could not run: {reason}"]) for c in lost]
    for case_result in broken:
        case_result.eval_set_file = target.label
    result = EvalSetResult(
        eval_set_result_id=f"{evalset.eval_set_id}_worker{worker.number}",
        eval_set_id=evalset.eval_set_id,
        eval_case_results=broken,
    )
    return [CaseFailure(c.eval_id, reason) for c in lost], result


def _merge(
    index: int, target: replay_target.ReplayTarget, cases: list[EvalCase], workers: list[_Worker]
) -> replay_target.EvalSetReplay:
    """One eval set's replays from every worker, as one serial run would have given it."""
    evalset = target.evalset
    parts = [w.replays[index] for w in workers if w.replays is not None]
    results: list[EvalSetResult] = [p.result for p in parts]
    failures: list[CaseFailure] = [f for p in parts for f in p.failures]
    for worker in workers:
        lost = [c for c in cases if (evalset.eval_set_id, c.eval_id) in worker.keys]
        if worker.died is not None and lost:
            failed, broken = _lost(target, lost, worker, len(workers))
            failures.extend(failed)
            results.append(broken)
    order = {c.eval_id: i for i, c in enumerate(cases)}
    if results:
        result = merge_results(results)[0]
        result.eval_case_results.sort(key=lambda r: order.get(r.eval_id, len(order)))
        if result.multi_run_case_summaries is not None:
            result.multi_run_case_summaries.sort(key=lambda s: order.get(s.eval_id, len(order)))
    else:
        result = EvalSetResult(
            eval_set_result_id=evalset.eval_set_id, eval_set_id=evalset.eval_set_id
        )
    failures.sort(key=lambda f: order.get(f.eval_id, len(order)))
    recordings = target.recordings if not parts else parts[0].recordings
    unused_ids = {
        cassette: frozenset.intersection(*(p.unused_ids.get(cassette, frozenset()) for p in parts))
        for cassette in (recordings if parts else [])
    }
    return replay_target.EvalSetReplay(
        path=target.path,
        result=result,
        recordings=recordings,
        failures=failures,
        traffic=[e for p in parts for e in p.traffic],
        cases=cases,
        unused={c: len(ids) for c, ids in unused_ids.items()},
        unused_ids=unused_ids,
        reads={case: line for p in parts for case, line in p.reads.items()},
        not_compared={c: gaps for p in parts for c, gaps in p.not_compared.items()},
    )


def _worker_main(
    conn: Connection,
    agent: str,
    evalsets: list[str | Path | EvalSet],
    options: replay_target.ReplayOptions,
    silence_adk: bool,
    environ: dict[str, str],
) -> None:
    """A worker process: replay its share of the cases, send the replays back."""
    if os.environ != environ:
        os.environ.clear()
        os.environ.update(environ)
    # Ctrl-C reaches the whole process group: the parent alone handles it (it stops the
    # workers), so the terminal shows one interruption, not one traceback per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if silence_adk:
        adk = logging.getLogger("google_adk")
        adk.addHandler(logging.NullHandler())
        adk.propagate = False
    try:
        replays = _in_this_process(
            agent, evalsets, options, on_case=lambda done, total: conn.send(("case",))
        )
    except BaseException as exc:  # sent to the parent, which raises it
        conn.send(("error", _sendable(exc)))
    else:
        for replay in replays:
            replay.cases = []  # the parent has them (its own eval sets): less to pickle
        try:
            conn.send(("done", replays))
        except Exception as exc:  # e.g. an exception in a failure that cannot be pickled
            conn.send(("error", RunError(f"a worker could not send its results back: {exc}")))
    finally:
        conn.close()


def _sendable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a RunError with its type and message."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RunError(f"a worker process failed: {type(exc).__name__}: {exc}")
    return exc
