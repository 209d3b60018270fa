"""A finished recording's parts merged into the cassette finalisation writes (no I/O).

:func:`compose_recording` takes what the recording's files held
(:class:`~recorder._capture_files.CapturedRecording`, each file read once) and returns the
cassette to write: the model exchanges by id, the tools' own calls after them with their
ids continuing, the MCP, Live and reads journals' lines folded into their sections and
merged with the ones of the cassette it adds to (auto mode), and nothing
credential-shaped. The MCP section's folding and merging stay with its model
(``cassettes._mcp``): they key toolsets as replay does when it merges cassettes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cassettes._cassette import Cassette, Exchange
from cassettes._errors import SecretFound
from cassettes._live import LiveJournalLine, LiveRecording, LiveSession
from cassettes._mcp import mcp_recording_from_lines, merge_mcp_recordings
from cassettes._reads import InvocationReads, ReadsRecording
from cassettes._secret_scan import ensure_no_secrets, journal_text
from recorder._capture_files import CapturedRecording, JournalContents

__all__ = ["ComposedRecording", "compose_recording"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ComposedRecording:
    """A recording's parts, read and merged: what finalisation writes."""

    captured: CapturedRecording
    cassette: Cassette | None
    """None when nothing was recorded."""

    @property
    def new(self) -> bool:
        """Whether this recording added anything to the cassette."""
        captured = self.captured
        return bool(
            captured.journal.exchanges
            or captured.tools
            or captured.mcp
            or captured.live
            or captured.reads
        )


def compose_recording(
    captured: CapturedRecording,
    *,
    name: str,
    upstream: str | None,
    keep_existing: bool,
    recovered: bool,
    path: Path,
) -> ComposedRecording:
    """The cassette ``captured`` makes (named ``name``, written to ``path``); with
    ``keep_existing`` it holds the existing cassette's recording too. A ``recovered``
    recording none of whose journals was found makes none: finalisation had compacted and
    removed them, so the cassette in place is complete.

    Raises:
        SecretFound: the MCP, Live or reads recording, or the upstream, holds a
            credential-shaped value (an exchange that holds one is left out, and logged).
    """
    if recovered and not captured.found:
        return ComposedRecording(captured, None)
    kept = captured.existing if keep_existing else None
    live = _merged_live([kept.live if kept else None, _live_from_lines(captured.live)])
    reads = _merged_reads(kept.reads if kept else None, captured.reads)
    exchanges = _exchanges(captured, kept)
    exchanges = _without_secrets(exchanges, captured.journal, path)
    mcp = merge_mcp_recordings([kept.mcp if kept else None, mcp_recording_from_lines(captured.mcp)])
    if not exchanges and mcp is None and live is None and reads is None:
        return ComposedRecording(captured, None)
    cassette = Cassette(
        name=name, upstream=upstream, exchanges=exchanges, mcp=mcp, live=live, reads=reads
    )
    # The exchanges were scanned one by one above; the rest (mcp, live, upstream) here.
    ensure_no_secrets(cassette.model_copy(update={"exchanges": []}), path=path)
    return ComposedRecording(captured, cassette)


def _exchanges(captured: CapturedRecording, kept: Cassette | None) -> list[Exchange]:
    """The kept and journaled exchanges by id, then the tools' own calls, their ids
    continuing."""
    exchanges: list[Exchange] = []
    if kept is not None:
        exchanges.extend(kept.exchanges)
    exchanges.extend(captured.journal.exchanges)
    exchanges.sort(key=lambda e: e.id)
    next_id = max((e.id for e in exchanges), default=-1) + 1
    exchanges.extend(
        e.model_copy(update={"id": next_id + n, "origin": "tool"})
        for n, e in enumerate(captured.tools)
    )
    return exchanges


def _without_secrets(
    exchanges: list[Exchange], journal: JournalContents, cassette: Path
) -> list[Exchange]:
    """The exchanges with nothing credential-shaped; each one left out is reported.

    The recorder scans every exchange before its journal line is written, so this drops
    only what an older rec (or a hand edit) let through: one bad exchange must not keep
    the rest of the recording, and every later ``rec stop``, from being written. An
    exchange read from a journal whose header says this rec's recorder scanned it
    (``recorder._journal_header``) is kept unread; one read from another journal is
    scanned, its glance looking at the line it was read from.
    """
    scanned = {id(exchange) for exchange in journal.exchanges} if journal.scanned else set()
    pairs = zip(journal.exchanges, journal.texts, strict=False)
    read_from = {id(exchange): text for exchange, text in pairs if text is not None}
    kept = []
    for exchange in exchanges:
        if id(exchange) not in scanned:
            try:
                text = journal_text(read_from.get(id(exchange)))
                ensure_no_secrets(exchange, path=cassette, text=text)
            except SecretFound as exc:
                log.error("exchange #%d is left out of the recording: %s", exchange.id, exc)
                continue
        kept.append(exchange)
    return kept


def _live_from_lines(lines: Iterable[LiveJournalLine]) -> LiveRecording | None:
    """The Live journal's lines folded into the ``live`` section, a session per opening
    line (None when no session was opened)."""
    sessions: dict[int, LiveSession] = {}
    for line in lines:
        if line.open is not None:
            sessions[line.session] = LiveSession(
                id=line.session,
                opened_at=line.open.opened_at,
                url=line.open.url,
                headers=dict(line.open.headers),
                complete=False,
            )
            continue
        session = sessions.get(line.session)
        if session is None:
            continue  # its opening line was torn: the frames cannot be placed
        if line.frame is not None:
            session.frames.append(line.frame)
        elif line.close is not None:
            session.close_code = line.close.code
            session.close_reason = line.close.reason
            session.complete = True
    if not sessions:
        return None
    return LiveRecording(sessions=[sessions[key] for key in sorted(sessions)])


def _merged_live(recordings: Sequence[LiveRecording | None]) -> LiveRecording | None:
    """One section from several (an ``auto`` recording keeps the cassette's sessions first);
    the ids of later sessions continue after the earlier ones."""
    sessions: list[LiveSession] = []
    for recording in recordings:
        for session in recording.sessions if recording is not None else []:
            sessions.append(session.model_copy(update={"id": len(sessions)}))
    return LiveRecording(sessions=sessions) if sessions else None


def _merged_reads(
    kept: ReadsRecording | None, recorded: list[InvocationReads]
) -> ReadsRecording | None:
    """The ``reads`` section: the kept cassette's invocations, then the recorded ones (None
    when there is none)."""
    invocations = [*(kept.invocations if kept is not None else ()), *recorded]
    return ReadsRecording(invocations=invocations) if invocations else None
