"""A composed recording written: the cassette, then its EvalSet; what is removed after.

This is the cassette's one writer (:func:`write_recording`). What it writes was read and
composed before (``recorder._capture_files``, ``recorder._composition``); it decides only
where and whether: a recovery whose cassette holds everything already writes nothing, and
one smaller than the cassette it would replace is written beside it. It says which working
files go once it is done; finalisation removes them (``recorder._recording.finalising``),
the state file last.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path

from cassettes._cassette import Cassette, Exchange
from cassettes._cassette_writer import save_cassette
from cassettes._errors import RunError
from cassettes._timing import now_iso
from recorder._adk_eval_command import AdkEvalRun
from recorder._composition import ComposedRecording
from recorder._importers.recording import write_recording_evalset
from recorder._recording_state import RecordingPaths

__all__ = ["FinalizeResult", "Finishing", "Removal", "write_recording"]

log = logging.getLogger(__name__)


@dataclass
class Removal:
    """What finalising removes once the recording is written
    (:func:`~recorder._recording.finalising`)."""

    journals: bool = True
    """Whether the journals go too (the state file always goes, last)."""


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
class Finishing:
    """How a recording is finalised: the options of
    :func:`~recorder._recording.finalize_recording`, read here by :func:`write_recording`."""

    keep_existing: bool = False
    """The cassette already there is kept and added to (auto mode, a recovered journal)."""
    recovered: bool = False
    """A dead recorder's files are being recovered."""
    write_evalset: bool = True
    app_name: str | None = None
    """``session_input.app_name`` for the EvalSet."""
    adk_eval: AdkEvalRun | None = None
    """The ``adk eval`` command the recording ran, if it did: its scenario cases and eval
    config are kept in the EvalSet and ``test_config.json``."""
    replaces_evalset: bool = False
    """Without ``write_evalset``, remove the EvalSet of the recording this one replaced
    (``rec start --overwrite --no-evalset``)."""


def write_recording(
    paths: RecordingPaths, composed: ComposedRecording, how: Finishing, removal: Removal
) -> FinalizeResult:
    """Write what :func:`~recorder._composition.compose_recording` made: the cassette, then
    the EvalSet; then say in ``removal`` whether the journals go (the state file does).

    What is written where is decided first (:func:`_plan`), then done in that order.

    Raises:
        RunError: the recording could not be written (a full disk); the journal is kept.
    """
    plan = _plan(paths, composed, how)
    written = plan.result.evalset_path
    try:
        if plan.save is not None:  # in place before the EvalSet is made, even if that fails
            save_cassette(plan.save, plan.result.cassette_path)
        if plan.evalset_of is not None:
            written = write_recording_evalset(
                plan.evalset_of,
                paths.out_dir,
                name=paths.name,
                app_name=how.app_name or "rec",
                scenarios=how.adk_eval.scenarios() if how.adk_eval is not None else (),
                config=how.adk_eval.config_text() if how.adk_eval is not None else None,
            )
        if plan.stale_evalset and paths.evalset.exists():
            paths.evalset.unlink()
            log.warning(
                "removed %s: it held the replaced recording's conversations (no EvalSet "
                "was written for the new one)",
                paths.evalset,
            )
    except OSError as exc:
        raise RunError(
            f"could not write the recording ({exc.strerror or exc}); its "
            f"{plan.result.new_exchanges} exchanges are safe in {paths.journal}",
            path=exc.filename or plan.result.cassette_path,
            fix=f"Free some space, then run `rec stop --out {paths.out_dir}` to finish it",
        ) from None
    removal.journals = plan.journals
    return dataclasses.replace(plan.result, evalset_path=written)


@dataclass(frozen=True)
class _Plan:
    """What :func:`write_recording` writes and removes, decided before it does."""

    result: FinalizeResult
    """What it reports (the EvalSet's path once that is written)."""
    journals: bool
    """Whether it removes the journals (the state file it always removes, last)."""
    save: Cassette | None = None
    """The cassette to write, to ``result.cassette_path``."""
    evalset_of: Cassette | None = None
    """The cassette whose EvalSet to write."""
    stale_evalset: bool = False
    """Whether to remove the EvalSet of the recording this one replaced."""


def _plan(paths: RecordingPaths, composed: ComposedRecording, how: Finishing) -> _Plan:
    """What to write: nothing for a recovery whose cassette is complete (perhaps its
    EvalSet) or for an empty recording; else the cassette (beside the one in place for a
    recovery smaller than it), then its EvalSet."""
    cassette, captured = composed.cassette, composed.captured
    existing = captured.existing
    if how.recovered and not captured.found:
        # Finalisation had compacted and removed the journal: the cassette is complete.
        return _Plan(_unchanged(paths, existing), journals=False)
    if cassette is None:
        empty = FinalizeResult(
            cassette_path=paths.cassette,
            exchanges=0,
            new_exchanges=0,
            torn_lines=captured.journal.torn_lines,
            evalset_path=None,
            recovered=how.recovered,
            empty=True,
        )
        return _Plan(empty, journals=True)
    set_aside = None
    if how.recovered and existing is not None:
        if _recovered_already(composed, existing):
            # The cassette was written before the death; the EvalSet perhaps not.
            missing = how.write_evalset and not paths.evalset.exists()
            return _Plan(
                _unchanged(paths, existing),
                journals=True,
                evalset_of=existing if missing else None,
            )
        if len(cassette.exchanges) < len(existing.exchanges):
            cassette, set_aside = _set_aside(paths, cassette, existing)
    saves = composed.new or not paths.cassette.exists() or not how.keep_existing
    return _Plan(
        _written(composed, cassette, set_aside or paths.cassette, how, set_aside=set_aside),
        journals=True,
        save=cassette if saves else None,
        evalset_of=cassette if how.write_evalset and set_aside is None else None,
        stale_evalset=(
            how.replaces_evalset and saves and not how.write_evalset and set_aside is None
        ),
    )


def _recovered_already(composed: ComposedRecording, existing: Cassette) -> bool:
    """Whether a recovered recording's every part is in the cassette already."""
    captured = composed.captured
    return (
        _already_in(captured.journal.exchanges, existing)
        and not captured.tools
        and (not captured.mcp or existing.mcp is not None)
        and (not captured.live or existing.live is not None)
        and (not captured.reads or existing.reads is not None)
    )


def _already_in(journal: list[Exchange], cassette: Cassette) -> bool:
    """Whether every journaled exchange is in the cassette (same id and arrival time)."""
    stored = {(e.id, e.recorded_at) for e in cassette.exchanges}
    return all((e.id, e.recorded_at) in stored for e in journal)


def _set_aside(
    paths: RecordingPaths, cassette: Cassette, existing: Cassette
) -> tuple[Cassette, Path]:
    """A recovered recording smaller than the cassette it would replace, renamed to go
    beside it, and where."""
    stamp = now_iso()[:19].replace(":", "").replace("-", "")
    target = RecordingPaths(paths.out_dir, f"{paths.name}.recovered-{stamp}").cassette
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
    composed: ComposedRecording,
    cassette: Cassette,
    target: Path,
    how: Finishing,
    *,
    set_aside: Path | None,
) -> FinalizeResult:
    """What writing ``cassette`` to ``target`` reports (its EvalSet's path once written)."""
    captured = composed.captured
    journaled, tools = captured.journal.exchanges, captured.tools
    return FinalizeResult(
        cassette_path=target,
        exchanges=len(cassette.exchanges),
        new_exchanges=len(journaled) + len(tools),
        new_tool_exchanges=len(tools),
        torn_lines=captured.journal.torn_lines,
        evalset_path=None,
        recovered=how.recovered,
        set_aside=set_aside,
        live_sessions=sum(line.open is not None for line in captured.live),
    )


def _unchanged(paths: RecordingPaths, existing: Cassette | None) -> FinalizeResult:
    """A recovery that found the cassette complete: nothing is written."""
    log.info("%s was complete already; nothing to recover", paths.cassette)
    return FinalizeResult(
        cassette_path=paths.cassette,
        exchanges=len(existing.exchanges) if existing is not None else 0,
        new_exchanges=0,
        torn_lines=0,
        evalset_path=paths.evalset if paths.evalset.exists() else None,
        recovered=True,
        unchanged=True,
    )
