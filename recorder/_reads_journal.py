"""The reads journal of a recording: each invocation's reads of the clock, randomness and
ids (recorded by the traffic floor's read patches), appended beside the ADK capture file
and merged into the cassette's ``reads`` section when the recording ends."""

from __future__ import annotations

from pathlib import Path

from recorder._capture_files import append_json_line
from recorder._recording_state import CaptureFiles
from recorder._traffic import RecordingReads

__all__ = ["reads_journal_path", "write_reads"]


def reads_journal_path(capture: str | Path) -> Path:
    """The reads journal beside an ADK capture file (``X.adk.jsonl`` -> ``X.reads.jsonl``)."""
    return CaptureFiles(Path(capture)).reads


def write_reads(path: Path, session: RecordingReads) -> None:
    """Append the invocation's reads to the journal (nothing when none was read)."""
    if session.reads.readers:
        append_json_line(path, session.reads, what="reads journal")
