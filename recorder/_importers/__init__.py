"""Turn existing data into ADK EvalSets: ``rec import SOURCE``.

Sources, tried in this order:

- a recording folder or ``*.cassette.json`` (re-extracted, :mod:`.recording`);
- ADK's session database: a SQLAlchemy URL or a SQLite file (:mod:`.adk_database`);
- a trace of an ADK agent, told by its content: OTLP JSON (:mod:`.otlp_json`), ADK's
  dev-server trace view (:mod:`.adk_dev_trace`) or the rows of ADK's BigQuery Agent
  Analytics plugin exported as JSON (:mod:`.bigquery_rows`), written as an EvalSet *and*
  its cassette (:mod:`.trace_import`);
- a JSON file: an ADK session (or a list of them, or ``{"sessions": [...]}``,
  :mod:`.adk_session`), or a legacy eval file (:mod:`.legacy`).

Credential-shaped values in the data are replaced by markers before anything is written,
and the written file is scanned again. The result lists where the expected reply and tool
calls sit in the file, because a case imported from a bug usually needs its expectation
corrected by hand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassettes._cassette import Cassette
from cassettes._cassette_writer import save_cassette
from cassettes._errors import InputError
from cassettes._evalset import EvalSet, IntermediateData, InvocationEvents
from cassettes._evalset_writer import adk_id, eval_set_id_for, redact_evalset, write_evalset_files
from cassettes._file_names import (
    CASSETTE_SUFFIX,
    cassette_file,
    check_recording_name,
    evalset_file,
    recording_name,
    source_name,
)
from cassettes._json_file import parse_json, read_file
from cassettes._secret_scan import ensure_no_secrets
from recorder._importers.adk_database import is_database_source, sessions_from_database
from recorder._importers.adk_dev_trace import is_dev_trace
from recorder._importers.adk_session import evalset_from_sessions, load_sessions_file
from recorder._importers.bigquery_rows import AnalyticsRow, analytics_rows
from recorder._importers.conversion import Conversion
from recorder._importers.legacy import evalset_from_legacy, is_legacy
from recorder._importers.otlp_json import otlp_documents
from recorder._importers.recording import evalset_from_recording, find_cassette
from recorder._importers.selection import select_sessions

if TYPE_CHECKING:
    from recorder._importers.trace_spans import TraceSpan

__all__ = ["ImportHint", "ImportResult", "import_source"]


@dataclass(frozen=True)
class ImportHint:
    """Where something worth checking by hand sits in the written EvalSet."""

    where: str
    """JSON path in the file, e.g. ``eval_cases[0].conversation[1].final_response``."""
    what: str
    """What is there (``expected reply: "..."``, ``tool call get_weather({...})``)."""

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass
class ImportResult:
    """What ``rec import`` wrote."""

    paths: list[Path] = field(default_factory=list)
    """Files written: the EvalSet, then test_config.json when one was created."""
    cases: int = 0
    """Eval cases written."""
    redacted: int = 0
    """Credential-shaped values replaced by markers."""
    hints: list[ImportHint] = field(default_factory=list)
    """Where the expected replies and tool calls sit in the EvalSet."""
    skipped_sessions: int = 0
    """Sessions left out because they hold no turn (nothing to replay)."""
    notes: list[str] = field(default_factory=list)
    """What the import changed beyond a plain conversion, and why (one sentence each)."""
    lacks: list[str] = field(default_factory=list)
    """What a trace lacks (one line each, naming the span and the setting to turn on)."""
    not_compared: list[str] = field(default_factory=list)
    """The request parts a trace does not hold, which replay does not compare."""


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[: limit - 1] + "…", ensure_ascii=False)


def _hints(evalset: EvalSet) -> list[ImportHint]:
    hints: list[ImportHint] = []
    for c, case in enumerate(evalset.eval_cases):
        for i, invocation in enumerate(case.conversation or []):
            base = f"eval_cases[{c}].conversation[{i}]"
            data = invocation.intermediate_data
            if isinstance(data, InvocationEvents):
                for e, event in enumerate(data.invocation_events):
                    parts = (event.content.parts or []) if event.content else []
                    for p, part in enumerate(parts):
                        if part.function_call:
                            call = part.function_call
                            hints.append(
                                ImportHint(
                                    f"{base}.intermediate_data.invocation_events[{e}]"
                                    f".content.parts[{p}].function_call",
                                    f"tool call {call.name}({json.dumps(call.args or {})})"
                                    f" by {event.author}",
                                )
                            )
            elif isinstance(data, IntermediateData):
                for t, call in enumerate(data.tool_uses):
                    hints.append(
                        ImportHint(
                            f"{base}.intermediate_data.tool_uses[{t}]",
                            f"tool call {call.name}({json.dumps(call.args or {})})",
                        )
                    )
            final = invocation.final_response
            text = " ".join(p.text for p in (final.parts or []) if p.text) if final else ""
            hints.append(
                ImportHint(
                    f"{base}.final_response" if final else f"{base}",
                    f"expected reply: {_short(text)}" if final else "no final reply recorded",
                )
            )
    return hints


def _database_stem(source: str) -> str:
    """A database's name: the SQLite file's stem, or the last part of a URL's path."""
    tail = source.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
    return adk_id(source_name(tail), default="sessions")


def _from_sessions(sessions: list[dict[str, Any]], *, source: str, stem: str) -> Conversion:
    evalset = evalset_from_sessions(sessions, eval_set_id=eval_set_id_for(stem))
    if not evalset.eval_cases:
        raise InputError(
            f"none of the {len(sessions)} session(s) selected holds a turn (nothing to replay)",
            path=source,
            fix="Pick sessions with a conversation (--session ID, or a larger --latest)",
        )
    return Conversion(evalset, stem, skipped_sessions=len(sessions) - len(evalset.eval_cases))


def _from_trace(
    spans: list[TraceSpan],
    shape: str,
    path: Path,
    stem: str,
    *,
    session_id: str | None,
    latest: int | None,
) -> Conversion:
    from recorder._importers.trace_import import convert_trace  # google-genai's converters

    return convert_trace(
        spans,
        shape=shape,
        path=path,
        name=stem,
        eval_set_id=eval_set_id_for(stem),
        session_id=session_id,
        latest=latest,
    )


def _from_rows(
    rows: list[AnalyticsRow],
    path: Path,
    stem: str,
    *,
    session_id: str | None,
    latest: int | None,
) -> Conversion:
    from recorder._importers.bigquery_rows import bigquery_sessions
    from recorder._importers.trace_import import convert_sessions

    eval_set_id = eval_set_id_for(stem)
    sessions, tools = bigquery_sessions(
        rows, path=path, eval_set_id=eval_set_id, session_id=session_id, latest=latest
    )
    return convert_sessions(
        sessions,
        tools,
        shape="BigQuery Agent Analytics rows",
        name=stem,
        eval_set_id=eval_set_id,
    )


def _evalset_for(
    source: str, *, session_id: str | None, latest: int | None, name: str | None
) -> Conversion:
    path = Path(source)
    if path.is_dir() or source.endswith(CASSETTE_SUFFIX):
        cassette = find_cassette(path, name=name)
        stem = name or recording_name(cassette)
        try:
            evalset, _ = evalset_from_recording(cassette, eval_set_id=eval_set_id_for(stem))
        except InputError as exc:  # a model call google-genai's types refuse
            exc.path = exc.path or source
            raise
        return Conversion(evalset, stem)
    if is_database_source(source):
        sessions = sessions_from_database(source, session_id=session_id, latest=latest)
        default = adk_id(session_id, default="sessions") if session_id else _database_stem(source)
        return _from_sessions(sessions, source=source, stem=name or default)
    if not path.exists():  # a FIFO or a socket exists: read_file says what it is
        raise InputError(
            "source not found",
            path=source,
            fix=(
                "Pass a session JSON, a session database, a legacy eval file, a recording, "
                "a trace (OTLP JSON or adk web's trace view) or BigQuery Agent Analytics rows"
            ),
        )
    return _from_file(path, name=name, session_id=session_id, latest=latest)


def _from_file(
    path: Path, *, name: str | None, session_id: str | None, latest: int | None
) -> Conversion:
    """A file's conversion, by what it holds: a trace (OTLP JSON, BigQuery rows, adk web's
    trace view), a legacy eval file, or ADK sessions."""
    data = read_file(path, what="source")
    stem = name or source_name(path)
    eval_set_id = eval_set_id_for(stem)
    otlp = b'"resourceSpans"' in data or b'"resourceLogs"' in data
    documents = otlp_documents(data.decode("utf-8", errors="replace")) if otlp else None
    if documents is not None:
        from recorder._importers.otlp_json import spans_from_otlp

        spans = spans_from_otlp(documents, path=path)
        return _from_trace(spans, "OTLP JSON", path, stem, session_id=session_id, latest=latest)
    rows = analytics_rows(data) if b'"event_type"' in data else None
    if rows is not None:
        return _from_rows(rows, path, stem, session_id=session_id, latest=latest)
    document = parse_json(data, path=path, fix="Check the file")
    if is_dev_trace(document):
        from recorder._importers.adk_dev_trace import spans_from_dev_trace

        spans = spans_from_dev_trace(document)
        shape = "ADK dev-server trace"
        return _from_trace(spans, shape, path, stem, session_id=session_id, latest=latest)
    if is_legacy(document) and not (
        isinstance(document, list) and document and "events" in document[0]
    ):
        migration = evalset_from_legacy(document, path=path, eval_set_id=eval_set_id)
        return Conversion(migration.evalset, stem, notes=migration.notes)
    sessions = select_sessions(
        load_sessions_file(path, document),
        lambda s: s.get("id"),
        session_id=session_id,
        latest=latest,
        path=path,
        where="file",
        fix="Check the session id",
    )
    return _from_sessions(sessions, source=str(path), stem=stem)


def _check_choice(session_id: str | None, latest: int | None, name: str | None) -> None:
    """Refuse ``--session`` with ``--latest``, a ``--latest`` under 1, or a bad ``--name``."""
    if session_id is not None and latest is not None:
        raise InputError("--session and --latest exclude each other", fix="Pass only one of them")
    if latest is not None and latest < 1:
        raise InputError("--latest must be at least 1", fix="Pass --latest 1 or more")
    if name is not None:
        check_recording_name(name)


def _save_cassette(cassette: Cassette, path: Path) -> Path:
    """Write the recording a trace converted to, once no secret is left in it."""
    ensure_no_secrets(cassette, path=path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_cassette(cassette, path)


def _refuse_replacing(path: Path, what: str, name: str) -> None:
    """Refuse to replace a file of that name without ``--overwrite``."""
    if path.exists():
        raise InputError(
            f"{what} {name!r} already exists and importing would replace it",
            path=path,
            fix="Pass --overwrite to replace it, or pick another --name",
        )


def import_source(
    source: str | Path,
    *,
    session_id: str | None = None,
    latest: int | None = None,
    out_dir: str | Path,
    name: str | None = None,
    overwrite: bool = False,
) -> ImportResult:
    """Convert a source to ``<out_dir>/<name>.evalset.json`` (+ ``test_config.json`` if absent).

    Args:
        source: a recording folder or cassette, an ADK session database (SQLite file or
            SQLAlchemy URL), an ADK session JSON file, or a legacy eval file.
        session_id: import only this session (databases and session files).
        latest: import the N most recent sessions (databases and session files).
        out_dir: where to write.
        name: the output name (default: the source's name, or the session id).
        overwrite: replace an eval set of that name already in ``out_dir`` (without it,
            such a name is refused and nothing is written).

    Raises:
        InputError: the source cannot be read or converted; the message says where and why.
        SecretFound: a credential survived redaction; nothing was written.
    """
    _check_choice(session_id, latest, name)
    converted = _evalset_for(str(source), session_id=session_id, latest=latest, name=name)
    target_name = name or converted.name
    target = evalset_file(out_dir, target_name)
    cassette = converted.cassette
    cassette_target = cassette_file(out_dir, target_name)
    if not overwrite:
        _refuse_replacing(target, "eval set", target_name)
        if cassette is not None:
            _refuse_replacing(cassette_target, "recording", target_name)
    evalset, redacted = redact_evalset(converted.evalset, path=target)
    written: list[Path] = []
    if cassette is not None:
        cassette = cassette.model_copy(update={"name": target_name})
        written.append(_save_cassette(cassette, cassette_target))
    paths = write_evalset_files(evalset, out_dir, name=target_name)
    return ImportResult(
        paths=[*paths[:1], *written, *paths[1:]],
        cases=len(evalset.eval_cases),
        redacted=redacted,
        hints=_hints(evalset),
        skipped_sessions=converted.skipped_sessions,
        notes=converted.notes,
        lacks=converted.lacks,
        not_compared=list(cassette.trace.not_compared) if cassette and cassette.trace else [],
    )
