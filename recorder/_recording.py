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

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassettes._atomic_write import fsync_folder, locked
from cassettes._cassette import Cassette, Exchange, load_cassette, save_cassette
from cassettes._errors import RunError, SecretFound
from cassettes._evalset_writer import write_evalset_text
from cassettes._file_names import cassette_file
from cassettes._gc_pause import gc_paused
from cassettes._live import LiveJournalLine, live_recording_from_lines, merge_live_recordings
from cassettes._mcp import McpJournalLine, mcp_recording_from_lines, merge_mcp_recordings
from cassettes._reads import InvocationReads, ReadsRecording, merge_reads_recordings
from cassettes._redaction import ensure_no_secrets, exchange_clear_at_a_glance
from cassettes._timing import now_iso
from recorder._adk_eval_command import AdkEvalRun
from recorder._capture_files import read_json_lines
from recorder._importers.recording import recording_evalset_text
from recorder._journal import JournalContents, read_journal
from recorder._mcp_capture import read_mcp_journal
from recorder._ownership import owning
from recorder._recording_state import (
    RecorderState,
    RecordingPaths,
    orphan_journals,
    read_state,
    read_states,
    recorder_live,
)
from recorder._tool_traffic import read_tool_traffic

# RecorderState, RecordingPaths, read_states and recorder_live are re-exported: callers that
# finalise recordings find the whole lifecycle here.
__all__ = [
    "FinalizeResult",
    "RecorderState",
    "RecordingPaths",
    "finalize_recording",
    "read_states",
    "recorder_live",
    "recover_stale",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FinalizeResult:
    """What finalising a recording wrote."""

    cassette_path: Path
    exchanges: int
    """Exchanges in the cassette."""
    new_exchanges: int
    """Exchanges taken from this recording: the proxy's journal plus the tools' own calls."""
    torn_lines: int
    evalset_path: Path | None
    recovered: bool
    """True when the recorder had died and its journal was recovered."""
    set_aside: Path | None = None
    """Recovery only: where the recovered exchanges went because the cassette already
    held more (the cassette itself was kept)."""
    unchanged: bool = False
    """Recovery only: the cassette already held everything (finalisation had written it
    before the recorder died), so nothing was written."""
    new_tool_exchanges: int = 0
    """Of ``new_exchanges``, the tools' own HTTP calls captured in the agent's process (the
    proxy never sees them, so it does not echo them)."""
    live_sessions: int = 0
    """Gemini Live sessions taken from this recording's Live journal."""
    lost_exchanges: int = 0
    """Exchanges the client was answered but that could not be written (a full disk)."""
    lost_reason: str | None = None
    """Why they could not be written."""
    refused_exchanges: int = 0
    """Exchanges the client was answered but that held a credential, so were left out
    (each was reported with its place and the rule that removes it)."""
    empty: bool = False
    """Nothing was recorded (no model call reached the proxy), so nothing was written: an
    empty cassette and EvalSet would only mislead (a replay of them evaluates nothing)."""


@dataclass(frozen=True)
class _Writing:
    """How :func:`_finish` writes a composed recording (the options of
    :func:`finalize_recording`)."""

    keep_existing: bool
    recovered: bool
    write_evalset: bool
    app_name: str | None
    adk_eval: AdkEvalRun | None
    replaces_evalset: bool


def finalize_recording(
    paths: RecordingPaths,
    *,
    upstream: str | None,
    keep_existing: bool = False,
    recovered: bool = False,
    write_evalset: bool = True,
    app_name: str | None = None,
    adk_eval: AdkEvalRun | None = None,
    replaces_evalset: bool = False,
) -> FinalizeResult:
    """Compact the journal into the cassette atomically, then write the EvalSet.

    ``adk_eval`` is the ``adk eval`` command the recording ran, if it did: its scenario
    cases and eval config are kept in the EvalSet and ``test_config.json``.
    ``replaces_evalset``: without ``write_evalset``, remove the EvalSet of the recording
    this one replaced (``rec start --overwrite --no-evalset``).

    This is the cassette's one writer: the journal is read (and validated) once, here,
    and the cassette is in place before the EvalSet is written.

    The caller owns the recording (holds its owner lock). The journal and the state file
    are removed only once the cassette is on disk; the state file goes last.

    Raises:
        InputError: the existing cassette (auto mode) is corrupt, or a secret was found.
        RunError: the cassette could not be written (a full disk); the journal is kept.
    """
    how = _Writing(keep_existing, recovered, write_evalset, app_name, adk_eval, replaces_evalset)
    # Reading and writing build large acyclic structures: collections only slow them. The
    # work runs in a function of its own so that its exchanges, cassette and EvalSet are
    # freed before collections resume: the first one would otherwise walk them all (0.2 s
    # after 6,000 exchanges, bench/bench_stop.py).
    with locked(paths.cassette, lock_dir=paths.work_dir), gc_paused():
        return _finalize(paths, upstream, how)


def _finalize(paths: RecordingPaths, upstream: str | None, how: _Writing) -> FinalizeResult:
    """:func:`finalize_recording`'s work, with the lock held and collections paused."""
    if how.recovered and not any(file.exists() for file in paths.working_files[:-1]):
        # Finalisation had compacted and removed the journal: the cassette is complete.
        result = _unchanged(paths)
        _remove(paths.state)
        return result
    composed = _compose(
        paths, upstream=upstream, keep_existing=how.keep_existing, recovered=how.recovered
    )
    return _finish(paths, composed, how)


@dataclass(frozen=True)
class _Composed:
    """A recording's parts, read and merged: what finalisation writes."""

    contents: JournalContents
    tools: list[Exchange]
    mcp_lines: list[McpJournalLine]
    live_lines: list[LiveJournalLine]
    reads_lines: list[InvocationReads]
    existing: Cassette | None
    cassette: Cassette | None
    """None when nothing was recorded."""

    @property
    def new(self) -> bool:
        """Whether this recording added anything to the cassette."""
        return bool(
            self.contents.exchanges
            or self.tools
            or self.mcp_lines
            or self.live_lines
            or self.reads_lines
        )


def _compose(
    paths: RecordingPaths, *, upstream: str | None, keep_existing: bool, recovered: bool
) -> _Composed:
    """Read the recording's journals (and the cassette it adds to) and merge them into the
    cassette to write; nothing is written."""
    contents = read_journal(paths.journal)
    tools = read_tool_traffic(paths.tools)
    existing: Cassette | None = None
    if paths.cassette.exists() and (keep_existing or recovered):
        existing = load_cassette(paths.cassette)
    exchanges: list[Exchange] = []
    if keep_existing and existing is not None:
        exchanges.extend(existing.exchanges)
    exchanges.extend(contents.exchanges)
    exchanges.sort(key=lambda e: e.id)
    # The tools' own calls follow the model traffic, their ids continuing.
    next_id = max((e.id for e in exchanges), default=-1) + 1
    exchanges.extend(
        e.model_copy(update={"id": next_id + n, "origin": "tool"}) for n, e in enumerate(tools)
    )
    mcp_lines = read_mcp_journal(paths.mcp)
    kept_mcp = existing.mcp if keep_existing and existing is not None else None
    mcp = merge_mcp_recordings([kept_mcp, mcp_recording_from_lines(mcp_lines)])
    live_lines, _ = read_json_lines(paths.live, LiveJournalLine, what="Live journal")
    kept_live = existing.live if keep_existing and existing is not None else None
    live = merge_live_recordings([kept_live, live_recording_from_lines(live_lines)])
    reads_lines, _ = read_json_lines(paths.reads, InvocationReads, what="reads journal")
    kept_reads = existing.reads if keep_existing and existing is not None else None
    reads = merge_reads_recordings(
        [kept_reads, ReadsRecording(invocations=reads_lines) if reads_lines else None]
    )
    parts = (contents, tools, mcp_lines, live_lines, reads_lines, existing)
    if not exchanges and mcp is None and live is None and reads is None:
        return _Composed(*parts, cassette=None)
    # A scanned journal's exchanges passed the recorder's scan before their lines were written.
    scanned = {id(exchange) for exchange in contents.exchanges} if contents.scanned else set()
    pairs = zip(contents.exchanges, contents.texts, strict=False)
    read_from = {id(exchange): text for exchange, text in pairs if text is not None}
    exchanges = _without_secrets(exchanges, paths.cassette, read_from, scanned)
    cassette = Cassette(
        name=paths.name, upstream=upstream, exchanges=exchanges, mcp=mcp, live=live, reads=reads
    )
    # The exchanges were scanned one by one just above; the rest (mcp, live, upstream) here.
    ensure_no_secrets(cassette.model_copy(update={"exchanges": []}), path=paths.cassette)
    return _Composed(*parts, cassette=cassette)


def _finish(paths: RecordingPaths, composed: _Composed, how: _Writing) -> FinalizeResult:
    """Write what :func:`_compose` merged: the cassette, then the EvalSet; then remove the
    journals."""
    cassette = composed.cassette
    if cassette is None:
        _remove_leftovers(paths)
        return FinalizeResult(
            cassette_path=paths.cassette,
            exchanges=0,
            new_exchanges=0,
            torn_lines=composed.contents.torn_lines,
            evalset_path=None,
            recovered=how.recovered,
            empty=True,
        )
    if how.recovered and composed.existing is not None:
        if _recovered_already(composed, composed.existing):
            # The cassette was written before the death; the EvalSet perhaps not.
            if how.write_evalset and not paths.evalset.exists():
                _write_evalset(
                    composed.existing, paths, app_name=how.app_name, adk_eval=how.adk_eval
                )
            result = _unchanged(paths)
            _remove_leftovers(paths)
            return result
        if len(cassette.exchanges) < len(composed.existing.exchanges):
            cassette, set_aside = _set_aside(paths, cassette, composed.existing)
            return _written(paths, composed, cassette, how, set_aside=set_aside)
    return _written(paths, composed, cassette, how, set_aside=None)


def _recovered_already(composed: _Composed, existing: Cassette) -> bool:
    """Whether a recovered recording's every part is in the cassette already."""
    return (
        _already_in(composed.contents.exchanges, existing)
        and not composed.tools
        and (not composed.mcp_lines or existing.mcp is not None)
        and (not composed.live_lines or existing.live is not None)
        and (not composed.reads_lines or existing.reads is not None)
    )


def _set_aside(
    paths: RecordingPaths, cassette: Cassette, existing: Cassette
) -> tuple[Cassette, Path]:
    """A recovered recording smaller than the cassette it would replace, renamed to go
    beside it, and where."""
    target = _beside(paths)
    log.warning(
        "%s holds %d exchanges, more than the %d recovered: it is kept, and the "
        "recovered recording is written to %s",
        paths.cassette,
        len(existing.exchanges),
        len(cassette.exchanges),
        target,
    )
    return cassette.model_copy(update={"name": target.name[: -len(".json")]}), target


def _written(
    paths: RecordingPaths,
    composed: _Composed,
    cassette: Cassette,
    how: _Writing,
    *,
    set_aside: Path | None,
) -> FinalizeResult:
    """Write the cassette (to ``set_aside`` when given), then the EvalSet; remove the
    journals."""
    target = set_aside or paths.cassette
    contents, tools = composed.contents, composed.tools
    saves = composed.new or not paths.cassette.exists() or not how.keep_existing
    try:
        text = None
        try:
            if how.write_evalset and set_aside is None:
                text = _evalset_text(cassette, paths, app_name=how.app_name, adk_eval=how.adk_eval)
        finally:
            if saves:  # in place before the EvalSet is written, even if extracting it failed
                save_cassette(cassette, target)
        evalset_path = _write_evalset_text(text, paths, adk_eval=how.adk_eval)
        if how.replaces_evalset and saves and not how.write_evalset and set_aside is None:
            _remove_stale_evalset(paths)
    except OSError as exc:
        raise RunError(
            f"could not write the recording ({exc.strerror or exc}); its "
            f"{len(contents.exchanges) + len(tools)} exchanges are safe in {paths.journal}",
            path=exc.filename or target,
            fix=f"Free some space, then run `rec stop --out {paths.out_dir}` to finish it",
        ) from None
    _remove_leftovers(paths)
    return FinalizeResult(
        cassette_path=target,
        exchanges=len(cassette.exchanges),
        new_exchanges=len(contents.exchanges) + len(tools),
        new_tool_exchanges=len(tools),
        torn_lines=contents.torn_lines,
        evalset_path=evalset_path,
        recovered=how.recovered,
        set_aside=set_aside,
        live_sessions=sum(line.open is not None for line in composed.live_lines),
    )


def _without_secrets(
    exchanges: list[Exchange],
    cassette: Path,
    read_from: dict[int, bytes],
    scanned: set[int],
) -> list[Exchange]:
    """The exchanges with nothing credential-shaped; each one left out is reported.

    The recorder scans every exchange before its journal line is written, so this drops
    only what an older rec (or a hand edit) let through: one bad exchange must not keep
    the rest of the recording, and every later ``rec stop``, from being written.
    ``read_from`` holds the journal line of each exchange read from one, by ``id()``;
    ``scanned`` the ``id()`` of each read from a journal whose header says this rec's
    recorder scanned them (``recorder._journal_header``): they are kept unread.
    """
    kept = []
    for exchange in exchanges:
        if id(exchange) in scanned or exchange_clear_at_a_glance(
            exchange, read_from=read_from.get(id(exchange))
        ):
            kept.append(exchange)
            continue
        try:
            ensure_no_secrets(exchange, path=cassette)
        except SecretFound as exc:
            log.error("exchange #%d is left out of the recording: %s", exchange.id, exc)
            continue
        kept.append(exchange)
    return kept


def _already_in(journal: list[Exchange], cassette: Cassette) -> bool:
    """Whether every journaled exchange is in the cassette (same id and arrival time)."""
    stored = {(e.id, e.recorded_at) for e in cassette.exchanges}
    return all((e.id, e.recorded_at) in stored for e in journal)


def _unchanged(paths: RecordingPaths) -> FinalizeResult:
    count = 0
    if paths.cassette.exists():
        count = len(load_cassette(paths.cassette).exchanges)
    log.info("%s was complete already; nothing to recover", paths.cassette)
    evalset = paths.evalset if paths.evalset.exists() else None
    return FinalizeResult(
        cassette_path=paths.cassette,
        exchanges=count,
        new_exchanges=0,
        torn_lines=0,
        evalset_path=evalset,
        recovered=True,
        unchanged=True,
    )


def _beside(paths: RecordingPaths) -> Path:
    stamp = now_iso()[:19].replace(":", "").replace("-", "")
    return cassette_file(paths.out_dir, f"{paths.name}.recovered-{stamp}")


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)
    fsync_folder(path.parent)


def _remove_leftovers(paths: RecordingPaths) -> None:
    """Journals first (model, tools, MCP, Live, reads), the state file last (it says a
    recording is open)."""
    *journals, state = paths.working_files
    for leftover in journals:
        leftover.unlink(missing_ok=True)
    _remove(state)


def _remove_stale_evalset(paths: RecordingPaths) -> None:
    """Remove the EvalSet of the recording a new one replaced without writing its own
    (``--overwrite --no-evalset``): its cases were the old recording's conversations."""
    try:
        paths.evalset.unlink()
    except FileNotFoundError:
        return
    log.warning(
        "removed %s: it held the replaced recording's conversations (no EvalSet was written "
        "for the new one)",
        paths.evalset,
    )


def _write_evalset(
    cassette: Cassette,
    paths: RecordingPaths,
    *,
    app_name: str | None,
    adk_eval: AdkEvalRun | None = None,
) -> Path | None:
    text = _evalset_text(cassette, paths, app_name=app_name, adk_eval=adk_eval)
    return _write_evalset_text(text, paths, adk_eval=adk_eval)


def _write_evalset_text(
    text: str | None, paths: RecordingPaths, *, adk_eval: AdkEvalRun | None
) -> Path | None:
    """Write the EvalSet :func:`_evalset_text` made (None: there is none to write)."""
    if text is None:
        return None
    config = adk_eval.config_text() if adk_eval is not None else None
    return write_evalset_text(text, paths.out_dir, name=paths.name, config=config)[0]


def _evalset_text(
    cassette: Cassette,
    paths: RecordingPaths,
    *,
    app_name: str | None,
    adk_eval: AdkEvalRun | None = None,
) -> str | None:
    kwargs: dict[str, Any] = {"name": paths.name}
    if app_name:
        kwargs["app_name"] = app_name
    if adk_eval is not None:
        kwargs["scenarios"] = adk_eval.scenarios()
    return recording_evalset_text(cassette, paths.out_dir, **kwargs)


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
        return finalize_recording(
            paths,
            upstream=state.upstream,
            keep_existing=state.keep_existing,
            recovered=True,
            write_evalset=write_evalset,
        )
    if not paths.journal.exists():
        return None
    log.warning("found a journal without a recorder for %r; recovering it", paths.name)
    return finalize_recording(
        paths,
        upstream=None,
        keep_existing=True,
        recovered=True,
        write_evalset=write_evalset,
    )
