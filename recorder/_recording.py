"""A recording on disk and its lifecycle: start, journal, finalise, recover.

Layout of a recording folder (``rec start --out DIR --name NAME``)::

    DIR/NAME.cassette.json        the cassette (written when the recording ends)
    DIR/NAME.evalset.json         the ADK EvalSet extracted from it
    DIR/test_config.json          ADK's default criteria (never overwritten)
    DIR/.rec/NAME.journal.jsonl   completed exchanges, written as each one ends (fsynced in groups)
    DIR/.rec/NAME.adk.jsonl       rec's ADK capture plugin's sessions (``adk_plugin``; masked
                                  with the capturing process's known credentials, kept after
                                  finalisation for the EvalSet of a later ``--mode auto`` run)
    DIR/.rec/NAME.tools.jsonl     the agent's tools' own httpx calls (``tool_traffic``)
    DIR/.rec/NAME.mcp.jsonl       the MCP sessions of the agent's toolsets (``mcp_capture``)
    DIR/.rec/NAME.live.jsonl      the frames of Gemini Live sessions (``live_proxy``)
    DIR/.rec/NAME.reads.jsonl     the agent's reads of the clock, randomness and ids (``reads``)
    DIR/.rec/NAME.state.json      pid, URL and control token of the running recorder (0600)
    DIR/.rec/NAME.owner.lock      held by the live recorder for its whole life (``ownership``)

Finalising compacts the journal into the cassette atomically, then removes the journal,
and the state file last. If the recorder died (SIGKILL, power loss) the journal and state
stay behind; `rec stop` or the next `rec start` on the folder finalises them and says how
many exchanges it recovered. Recovery only touches a recording whose owner lock it can
take, and it never replaces a cassette with one holding fewer exchanges: a journal that
finalisation had already compacted (or deleted) leaves the cassette as it is, and a
recovered recording smaller than the cassette it would replace is written beside it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

from cassettes._folders import fsync_folder, locked
from cassettes._gc_pause import gc_paused
from recorder._capture_files import read_recording
from recorder._composition import compose_recording
from recorder._ownership import owning
from recorder._recording_state import (
    RecorderState,
    RecordingPaths,
    orphan_journals,
    read_state,
    read_states,
    recorder_live,
)
from recorder._recording_writer import FinalizeResult, Finishing, Removal, write_recording

# FinalizeResult, Finishing, RecorderState, RecordingPaths, read_states and recorder_live
# are re-exported: callers that finalise recordings find the whole lifecycle here.
__all__ = [
    "FinalizeResult",
    "Finishing",
    "RecorderState",
    "RecordingPaths",
    "finalize_recording",
    "finalising",
    "read_states",
    "recorder_live",
    "recover_stale",
]

log = logging.getLogger(__name__)


def finalize_recording(
    paths: RecordingPaths,
    *,
    upstream: str | None,
    how: Finishing = Finishing(),  # noqa: B008 - frozen, never changed
) -> FinalizeResult:
    """Compact the journal into the cassette atomically, then write the EvalSet.

    ``how`` holds the options (auto mode, a recovery, the EvalSet and what it keeps of an
    ``adk eval`` run): see :class:`~recorder._recording_writer.Finishing`.

    One pipeline, each step once: the recording's files are read (the journal parsed and
    validated once: ``recorder._capture_files``), composed into the cassette
    (``recorder._composition``), and written by the cassette's one writer
    (``recorder._recording_writer``), the cassette in place before the EvalSet.

    The caller owns the recording (holds its owner lock); the cassette's lock is held
    throughout (:func:`finalising`). The journal and the state file are removed
    only once the cassette is on disk; the state file goes last.

    Raises:
        InputError: the existing cassette (auto mode) is corrupt, or a secret was found.
        RunError: the cassette could not be written (a full disk); the journal is kept.
    """
    # Reading and writing build large acyclic structures: collections only slow them. Each
    # step's result is let go once the next has it, so the exchanges, cassette and EvalSet
    # are freed before collections resume: the first one would otherwise walk them all
    # (0.2 s after 6,000 exchanges, bench/bench_stop.py).
    with finalising(paths) as removal, gc_paused():
        captured = read_recording(paths, existing=how.keep_existing or how.recovered)
        composed = compose_recording(
            captured,
            name=paths.name,
            upstream=upstream,
            keep_existing=how.keep_existing,
            recovered=how.recovered,
            path=paths.cassette,
        )
        del captured
        result = write_recording(paths, composed, how, removal)
        del composed
    return result


@contextlib.contextmanager
def finalising(paths: RecordingPaths) -> Iterator[Removal]:
    """Hold the cassette's lock (kept in the recording's working folder) while the recording
    is finalised; once it is written, remove its working files
    (:attr:`~recorder._recording_state.RecordingPaths.working_files`; with the
    :class:`Removal`'s ``journals`` false, the state file alone), the state file last and
    durably: while it is there, the recording is open. A finalisation that fails removes
    nothing (the journal is kept for the next try)."""
    with locked(paths.cassette, lock_dir=paths.work_dir):
        removal = Removal()
        yield removal
        for leftover in paths.working_files if removal.journals else (paths.state,):
            leftover.unlink(missing_ok=True)
        fsync_folder(paths.work_dir)


def recover_stale(
    out_dir: Path, *, write_evalset: bool = True, owned: RecordingPaths | None = None
) -> list[FinalizeResult]:
    """Finalise every recording in ``out_dir`` whose recorder is no longer running.

    A recording is recovered only while this process holds its owner lock, so a live
    recorder's journal is never touched and two recoveries never run at once. ``owned``
    is a recording whose lock the caller holds already (a recorder starting on that name).
    """
    results: list[FinalizeResult] = []
    names = {paths.name for paths, _ in read_states(out_dir)}
    names |= {paths.name for paths in orphan_journals(out_dir)}
    for name in sorted(names):
        paths = RecordingPaths(out_dir, name)
        if owned is not None and paths == owned:
            result = _recover(paths, write_evalset=write_evalset)
        else:
            with owning(paths.owner_lock) as taken:
                if not taken:
                    continue  # a live recorder owns it
                result = _recover(paths, write_evalset=write_evalset)
        if result is not None:
            results.append(result)
    return results


def _recover(paths: RecordingPaths, *, write_evalset: bool) -> FinalizeResult | None:
    """Finalise a dead recorder's files (the caller holds the owner lock)."""
    state = read_state(paths.state)  # again: another recovery may have finished it
    if state is not None:
        log.warning(
            "the recorder of %r (pid %d) did not stop cleanly; recovering its journal",
            state.name,
            state.pid,
        )
        how = Finishing(state.keep_existing, recovered=True, write_evalset=write_evalset)
        return finalize_recording(paths, upstream=state.upstream, how=how)
    if not paths.journal.exists():
        return None
    log.warning("found a journal without a recorder for %r; recovering it", paths.name)
    how = Finishing(keep_existing=True, recovered=True, write_evalset=write_evalset)
    return finalize_recording(paths, upstream=None, how=how)
