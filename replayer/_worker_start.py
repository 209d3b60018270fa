"""How ``rec replay --workers N`` starts its worker processes, cheaply and early.

A worker pays for google-adk, google-genai and rec's replay code (~1,000 modules, about a
second of CPU on an idle core, several on a loaded one) before its first case. On Linux
the workers fork from a ``forkserver`` that imports those modules once (:data:`PRELOAD`),
started by :func:`start_workers_early` before the parent imports anything heavy, so the import
runs beside the parent's own work and each worker starts already loaded. The fork server
imports modules only: none of them starts a thread at import
(``tests/replayer/test_worker_pool.py`` checks it), so forking from it is safe. Each
worker still runs in a fresh process of its own (its event loop, sessions and proxy
thread are created after the fork). Elsewhere (no ``forkserver``) the workers are
spawned fresh interpreters.

This module imports the standard library only: ``rec replay`` calls :func:`start_workers_early`
before it imports ``replayer``'s replay code.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.context
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "PRELOAD",
    "default_workers",
    "may_split",
    "start_workers_early",
    "stop_workers_early",
    "worker_context",
]

PRELOAD = [
    # rec's replay code
    "replayer._worker_pool",
    "replayer._replay_run",
    "replayer._local_run",
    "replayer._replay_target",
    "replayer._adk_runner",
    "replayer._in_process",
    "replayer._mcp_replay",
    "replayer._mock_tools",
    "replayer._model_backend",
    "replayer._program_runner",
    "replayer._run_cassettes",
    "replayer._score",
    "replayer._tool_replay",
    # what a replayed ADK agent's run imports (measured on the travel agent)
    "google.adk.agents",
    "google.adk.apps",
    "google.adk.artifacts",
    "google.adk.auth.auth_schemes",
    "google.adk.auth.oauth2_credential_util",
    "google.adk.cli.utils.envs",
    "google.adk.evaluation.agent_evaluator",
    "google.adk.evaluation.eval_metrics",
    "google.adk.evaluation.evaluation_generator",
    "google.adk.flows.llm_flows.auto_flow",
    "google.adk.memory",
    "google.adk.models.google_llm",
    "google.adk.runners",
    "google.adk.sessions",
    "google.adk.workflow",
    # what rec imports on first use in a replay: tools' traffic, the frozen clock, scoring
    "aioresponses",
    "requests",
    "responses",
    "time_machine",
    "rouge_score.tokenize",
]
"""What every worker imports before its first case, imported once in the fork server
(a module that fails to import there is skipped: the worker imports it itself)."""


def default_workers() -> int:
    """The cores this process may run on (``--workers``' default)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _use_forkserver() -> bool:
    return sys.platform == "linux" and "forkserver" in multiprocessing.get_all_start_methods()


def worker_context() -> multiprocessing.context.BaseContext:
    """The start method of the workers: a preloaded fork server on Linux, else spawn."""
    if not _use_forkserver():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)  # no effect once the server runs
    return context


def start_workers_early() -> None:
    """Start the fork server now (it imports :data:`PRELOAD` while the caller goes on).

    Idempotent; does nothing where the workers are spawned.
    """
    if not _use_forkserver():
        return
    worker_context()
    from multiprocessing import forkserver

    forkserver.ensure_running()


def may_split(paths: Sequence[str | Path], *, cases: Sequence[str] = ()) -> bool:
    """Whether a run of these eval sets can go to two workers or more: two cases at least
    (read with the standard library's JSON, no models); True when that cannot be told."""
    from cassettes._errors import InputError  # light: no models
    from cassettes._file_names import EVALSET_SUFFIXES
    from cassettes._json_file import read_file

    if cases:
        return len(set(cases)) > 1
    found = 0
    try:
        for given in paths:
            path = Path(given)
            files = (
                [p for p in path.rglob("*.json") if p.name.endswith(EVALSET_SUFFIXES)]
                if path.is_dir()
                else [path]
            )
            for file in files:
                data = json.loads(read_file(file, what="eval set"))  # a FIFO never hangs
                listed = data.get("eval_cases") if isinstance(data, dict) else data
                found += len(listed) if isinstance(listed, list) else 2
                if found > 1:
                    return True
    except (OSError, ValueError, RecursionError, InputError):
        return True  # the run says what is wrong with it
    return False


def stop_workers_early() -> None:
    """Stop the fork server :func:`start_workers_early` started, if it runs.

    Once serving, the fork server leaves when this process does, but while it still imports
    :data:`PRELOAD` it does not look, and the resource tracker it started leaves only after
    this process has: without this both would outlive ``rec replay`` (by seconds, for a
    short run). The workers it forked have been joined by then.
    """
    if not _use_forkserver():
        return
    from replayer._compat import stop_forkserver, stop_resource_tracker

    if stop_forkserver():
        # The resource tracker the fork server started leaves on EOF, once every holder of
        # its pipe has gone: closed and waited for here, so it does not outlive this process.
        stop_resource_tracker()
