"""The JSON-lines files rec's capture appends to while a recording runs, and their reader.

The model exchanges go to the journal (``recorder._journal``), the tools' own HTTP calls,
the MCP sessions and the agent's reads to files named after the ADK capture file
``.rec/NAME.adk.jsonl``, which is the one path rec's ADK plugin is told, and the Live
frames to the Live journal: ``recorder._recording_state.RecordingPaths`` names them all.
Each file holds one pydantic model per line, appended and flushed as it completes
(:func:`append_json_line`), and is read back with a line torn by a crash skipped
(:func:`read_json_lines`; the journal by :func:`read_journal`, which also puts a large
body written in pieces back together).

:func:`read_recording` is the one reader of a finished recording's files: each is parsed
(and validated) once, there, into the :class:`CapturedRecording` finalisation composes.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cassettes._bodies import stored_body
from cassettes._cassette import Cassette, Exchange, load_cassette
from cassettes._errors import InputError
from cassettes._folders import file_mode, private_folder
from cassettes._live import LiveJournalLine
from cassettes._mcp import McpJournalLine
from cassettes._reads import InvocationReads
from recorder._journal_header import JournalHeader, scan_rules
from recorder._journal_lines import CHUNK_LINE, HEADER_LINE
from recorder._recording_state import RecordingPaths

__all__ = [
    "CapturedRecording",
    "ChunkedExchange",
    "JournalContents",
    "append_json_line",
    "append_text",
    "read_journal",
    "read_json_lines",
    "read_json_lines_and_text",
    "read_recording",
    "read_tool_traffic",
]

log = logging.getLogger(__name__)

_Line = TypeVar("_Line", bound=BaseModel)


def append_json_line(path: Path, line: BaseModel, *, what: str) -> bool:
    """Append ``line`` as one JSON line and flush it; False (and a warning) if it failed.

    A capture file that cannot be written never breaks the user's agent or tool: the
    failure is logged, naming ``what`` the file holds, and the caller counts the loss.
    """
    return append_text(path, line.model_dump_json(exclude_none=True) + "\n", what=what)


def append_text(path: Path, text: str, *, what: str) -> bool:
    """Append ``text`` to ``path`` in one write; False (and a warning) if it failed.

    A capture file holds prompts, answers and session state, so it is created private like
    every file rec writes (``0600`` or ``REC_FILE_MODE``, in private folders); a file that
    exists keeps its mode.
    """
    try:
        private_folder(path.parent)
        created = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, file_mode())
        try:
            if created:
                os.fchmod(fd, file_mode())  # the umask filtered os.open's mode
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
    except (OSError, InputError) as exc:
        log.warning("rec: cannot write the %s %s (%s)", what, path, exc)
        return False
    return True


def read_json_lines(path: str | Path, model: type[_Line], *, what: str) -> tuple[list[_Line], int]:
    """The lines of ``path`` as ``model`` (missing file: none), and how many were torn.

    A line that does not validate (cut short by a crash mid-write) is skipped with a
    warning naming the file, the line number and ``what`` the file holds.
    """
    lines, torn = read_json_lines_and_text(path, model, what=what)
    return [line for line, _ in lines], torn


def read_json_lines_and_text(
    path: str | Path, model: type[_Line], *, what: str
) -> tuple[list[tuple[_Line, bytes]], int]:
    """:func:`read_json_lines`, each line with the JSON text it was read from."""
    file = Path(path)
    if not file.exists():
        return [], 0
    lines: list[tuple[_Line, bytes]] = []
    torn = 0
    with open(file, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                lines.append((model.model_validate_json(line), line))
            except ValidationError:
                torn += 1
                log.warning("%s:%d: skipped an incomplete %s line", file, number, what)
    return lines, torn


# -- the journal ----------------------------------------------------------------------------


class _ChunkHead(BaseModel):
    model_config = ConfigDict(extra="forbid")

    body_chunk: int
    length: int = Field(ge=0)


class ChunkedExchange(BaseModel):
    """An exchange whose response body is the :class:`BodyChunk` lines before it."""

    model_config = ConfigDict(extra="forbid")

    body_chunks: int
    """How many pieces the body has (fewer on disk: the exchange is incomplete)."""
    exchange: Exchange
    """The exchange, redacted and scanned, without its response body."""


_CHUNKED_LINE = b'{"body_chunks":'


@dataclass(frozen=True)
class JournalContents:
    """What a journal holds: the complete exchanges and how many lines were torn."""

    exchanges: list[Exchange]
    torn_lines: int
    texts: list[bytes | None] = field(default_factory=list)
    """The JSON line each exchange was read from, in the same order (None for one whose
    body was put together from pieces, and for every one of a :attr:`scanned` journal)."""
    scanned: bool = False
    """The journal opens with a header naming this rec's secret scan rules
    (``recorder._journal_header``): its exchanges passed the recorder's scan."""


def read_journal(path: str | Path) -> JournalContents:
    """Read every complete exchange from a journal (missing file: empty).

    A line that does not parse (torn by a crash mid-write) is skipped and counted, and so
    is a chunked exchange whose pieces are not all there. A header line is not an exchange;
    as the first line, naming this rec's scan rules, it marks the exchanges as scanned.
    """
    file = Path(path)
    if not file.exists():
        return JournalContents([], 0, [])
    reading = _Reading()
    with open(file, "rb") as handle:
        number = 0
        while line := handle.readline():
            number += 1
            if not line.strip():
                continue
            try:
                reading.take(line, number, handle)
            except ValueError:  # ValidationError is one
                reading.torn += 1
                log.warning("%s:%d: skipped an incomplete journal line", file, number)
    exchanges = reading.exchanges
    for number, record in reading.chunked:
        exchange = _reassembled(record, reading.pieces.pop(record.exchange.id, []))
        if exchange is None:
            reading.torn += 1
            log.warning("%s:%d: skipped an exchange whose body is incomplete", file, number)
        else:
            exchanges.append((exchange, None))  # its line holds no body to glance at
    exchanges.sort(key=lambda pair: pair[0].id)
    return JournalContents(
        [e for e, _ in exchanges],
        reading.torn,
        [text for _, text in exchanges],
        scanned=reading.scanned,
    )


@dataclass
class _Reading:
    """What :func:`read_journal` has read so far."""

    exchanges: list[tuple[Exchange, bytes | None]] = field(default_factory=list)
    pieces: dict[int, list[bytes]] = field(default_factory=dict)
    chunked: list[tuple[int, ChunkedExchange]] = field(default_factory=list)
    torn: int = 0
    scanned: bool = False

    def take(self, line: bytes, number: int, handle: Any) -> None:
        """Read line ``number`` (and, for a body's piece, its bytes from ``handle``).

        Raises:
            ValueError: the line is torn.
        """
        if line.startswith(CHUNK_LINE):
            head = _ChunkHead.model_validate_json(line)
            data = handle.read(head.length)  # then its newline (not copied off it)
            if len(data) != head.length or handle.read(1) != b"\n":
                raise ValueError("a torn piece")
            self.pieces.setdefault(head.body_chunk, []).append(data)
        elif line.startswith(HEADER_LINE):
            header = JournalHeader.model_validate_json(line)
            self.scanned = number == 1 and header.scan_rules == scan_rules()
        elif line.startswith(_CHUNKED_LINE):
            self.chunked.append((number, ChunkedExchange.model_validate_json(line)))
        else:
            # A scanned journal's lines are not glanced at: not kept either.
            text = None if self.scanned else line
            self.exchanges.append((Exchange.model_validate_json(line), text))


def _reassembled(record: ChunkedExchange, pieces: list[bytes]) -> Exchange | None:
    """The exchange of ``record`` with its body put back together (None: pieces missing).

    ``pieces`` is emptied once joined: a body is held once, not twice, while it is parsed.
    """
    if len(pieces) != record.body_chunks:
        return None
    data = b"".join(pieces)
    pieces.clear()
    response = record.exchange.response
    body = stored_body(
        data, content_type=response.headers.get("content-type"), content_encoding=None
    )
    return record.exchange.model_copy(
        update={"response": response.model_copy(update={"body": body})}
    )


# -- a finished recording ----------------------------------------------------------------


def read_tool_traffic(path: str | Path) -> list[Exchange]:
    """The tool exchanges captured in ``path`` (missing file: none; torn lines skipped)."""
    return read_json_lines(path, Exchange, what="tool-traffic")[0]


@dataclass(frozen=True)
class CapturedRecording:
    """What a recording's working files hold, each read once: what finalisation composes."""

    journal: JournalContents
    """The model exchanges (``.rec/NAME.journal.jsonl``)."""
    tools: list[Exchange]
    """The tools' own HTTP calls, in the order they were captured."""
    mcp: list[McpJournalLine]
    live: list[LiveJournalLine]
    reads: list[InvocationReads]
    existing: Cassette | None
    """The cassette in place, when it was asked for and is there."""
    found: bool
    """Whether any of the journals was there (a recovery finds none when finalisation had
    compacted and removed them)."""


def read_recording(paths: RecordingPaths, *, existing: bool) -> CapturedRecording:
    """Read every working file of a recording (a missing one holds nothing), and, with
    ``existing``, the cassette in place (the one an auto-mode recording adds to).

    Raises:
        InputError: the existing cassette is corrupt.
    """
    found = any(file.exists() for file in paths.working_files[:-1])
    tools = read_tool_traffic(paths.tools)
    mcp, _ = read_json_lines(paths.mcp, McpJournalLine, what="MCP journal")
    live, _ = read_json_lines(paths.live, LiveJournalLine, what="Live journal")
    reads, _ = read_json_lines(paths.reads, InvocationReads, what="reads journal")
    journal = read_journal(paths.journal)
    in_place = load_cassette(paths.cassette) if existing and paths.cassette.exists() else None
    return CapturedRecording(journal, tools, mcp, live, reads, in_place, found)
