"""Where a recording's files live and what its running recorder leaves behind.

``rec status`` and ``rec stop`` read only this: the folder layout (``RecordingPaths``), the
state file a running recorder writes (``RecorderState``) and whether it is live. The
capture seams (tools' HTTP calls, MCP sessions) and the finalising code, which holds the
cassette's lock and removes the working files, stay in ``recorder._recording``; the paths
they own are imported when asked for, so reading a folder's state never loads httpx,
respx, pydantic or the cassette models.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassettes._atomic_write import write_atomic
from cassettes._errors import InputError
from cassettes._file_names import cassette_file, evalset_file
from cassettes._record_mode import RecordMode
from recorder._ownership import owned_by_someone

__all__ = [
    "WORK_FOLDER",
    "CaptureFiles",
    "RecorderState",
    "RecordingPaths",
    "orphan_journals",
    "read_state",
    "read_states",
    "recorder_live",
    "write_state",
]


WORK_FOLDER = ".rec"
"""The folder, inside a recording's folder, of its working files."""
_JOURNAL = ".journal.jsonl"
_STATE = ".state.json"


@dataclass(frozen=True)
class CaptureFiles:
    """The files the agent's own process appends to, named after rec's ADK capture file
    (the one path its capture plugin is told): ``X.adk.jsonl`` -> ``X.<kind>.jsonl``."""

    capture: Path

    def companion(self, kind: str) -> Path:
        """The ``kind`` file beside the capture file."""
        from cassettes._evalset_writer import adk_capture_path

        suffix = adk_capture_path(".", "").name  # ".adk.jsonl"
        name = self.capture.name
        stem = name.removesuffix(suffix) if name.endswith(suffix) else self.capture.stem
        return self.capture.with_name(f"{stem}.{kind}.jsonl")

    @property
    def tools(self) -> Path:
        """The tools' own HTTP calls captured in-process (see ``recorder._tool_traffic``)."""
        return self.companion("tools")

    @property
    def mcp(self) -> Path:
        """The MCP sessions of the agent's toolsets (see ``recorder._mcp_capture``)."""
        return self.companion("mcp")

    @property
    def reads(self) -> Path:
        """The agent's reads of the clock, randomness and ids (``recorder._reads_journal``)."""
        return self.companion("reads")


@dataclass(frozen=True)
class RecordingPaths:
    """Where a recording's files live: the one place that names each of them, the
    working files in :data:`WORK_FOLDER` included."""

    out_dir: Path
    name: str

    @property
    def work_dir(self) -> Path:
        """The recording's working files' folder (``.rec``)."""
        return self.out_dir / WORK_FOLDER

    def _work_file(self, suffix: str) -> Path:
        return self.work_dir / f"{self.name}{suffix}"

    @property
    def cassette(self) -> Path:
        return cassette_file(self.out_dir, self.name)

    @property
    def evalset(self) -> Path:
        return evalset_file(self.out_dir, self.name)

    @property
    def journal(self) -> Path:
        return self._work_file(_JOURNAL)

    @property
    def capture(self) -> Path:
        """rec's ADK capture plugin's session log (see ``recorder._adk_plugin``)."""
        from cassettes._evalset_writer import adk_capture_path

        return adk_capture_path(self.out_dir, self.name)

    @property
    def capture_files(self) -> CaptureFiles:
        return CaptureFiles(self.capture)

    @property
    def tools(self) -> Path:
        return self.capture_files.tools

    @property
    def mcp(self) -> Path:
        return self.capture_files.mcp

    @property
    def reads(self) -> Path:
        return self.capture_files.reads

    @property
    def live(self) -> Path:
        """The frames of the Live sessions, journaled (see ``recorder._live_proxy``)."""
        return self._work_file(".live.jsonl")

    @property
    def state(self) -> Path:
        return self._work_file(_STATE)

    @property
    def owner_lock(self) -> Path:
        """Held by the live recorder for its whole life (see ``recorder._ownership``)."""
        return self._work_file(".owner.lock")

    @property
    def working_files(self) -> tuple[Path, ...]:
        """The journals finalisation removes, the state file last (it says a recording
        is open)."""
        return (self.journal, self.tools, self.mcp, self.live, self.reads, self.state)


@dataclass(frozen=True)
class RecorderState:
    """What a running recorder leaves in ``.rec/NAME.state.json``.

    A plain dataclass read by :meth:`from_json`: ``rec status`` reads it and must start
    at once, without pydantic.
    """

    name: str
    pid: int
    url: str
    mode: RecordMode
    upstream: str
    started_at: str
    keep_existing: bool = False
    """Whether the finished cassette keeps the exchanges of an existing one (auto mode)."""
    id_offset: int = 0
    process_started: str | None = None
    """When the recorder's process started (``ownership.process_start``): with ``pid`` it
    names the process, so a reused pid is never taken for the recorder."""
    control_token: str | None = None
    """The secret the recorder's control endpoints (``/__rec__/``) require. The state file
    is private (0600): only its owner can stop the recorder or read its status."""

    def to_json(self) -> str:
        fields = dataclasses.asdict(self)
        fields["mode"] = self.mode.value
        return json.dumps(fields, indent=2)

    @classmethod
    def from_json(cls, data: bytes | str) -> RecorderState:
        """The state in ``data``; unknown keys are ignored.

        Raises:
            ValueError: not a JSON object, a field is missing or of the wrong type.
        """
        raw = json.loads(data)
        if not isinstance(raw, dict):
            raise ValueError(f"expected a JSON object, got {type(raw).__name__}")
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            if field.name not in raw:
                if field.default is dataclasses.MISSING:
                    raise ValueError(f"{field.name!r} is missing")
                continue
            value = raw[field.name]
            expected = _FIELD_TYPES[field.name]
            if value is None and field.default is None:
                values[field.name] = None
            elif field.name == "mode" and isinstance(value, str):
                values[field.name] = RecordMode(value)  # ValueError names the value
            elif type(value) is expected:  # bool is not an int here, nor an int a bool
                values[field.name] = value
            else:
                raise ValueError(
                    f"{field.name!r} is {type(value).__name__}, expected {expected.__name__}"
                )
        return cls(**values)


_FIELD_TYPES: dict[str, type] = {
    "name": str,
    "pid": int,
    "url": str,
    "mode": str,
    "upstream": str,
    "started_at": str,
    "keep_existing": bool,
    "id_offset": int,
    "process_started": str,
    "control_token": str,
}
"""The JSON type of each field of the state file (``mode`` is the mode's name)."""


def recorder_live(paths: RecordingPaths) -> bool:
    """Whether a live recorder owns this recording (it holds the owner lock)."""
    return owned_by_someone(paths.owner_lock)


def write_state(paths: RecordingPaths, state: RecorderState) -> None:
    """Record that a recorder is running on this folder."""
    write_atomic(paths.state, state.to_json() + "\n")


def read_states(out_dir: Path) -> list[tuple[RecordingPaths, RecorderState]]:
    """Every recorder state file in ``out_dir`` (running or stale).

    Raises:
        InputError: a state file is corrupt (names it and how to fix it).
    """
    found: list[tuple[RecordingPaths, RecorderState]] = []
    folder = out_dir / WORK_FOLDER
    if not folder.is_dir():
        return found
    for file in sorted(folder.glob(f"*{_STATE}")):
        state = read_state(file)
        if state is not None:  # None: finalised meanwhile
            found.append((RecordingPaths(out_dir, file.name[: -len(_STATE)]), state))
    return found


def read_state(file: Path) -> RecorderState | None:
    """The state in ``file``, or None if it is gone (the recording was finalised).

    Raises:
        InputError: the file is corrupt (names it and how to fix it).
    """
    try:
        return RecorderState.from_json(file.read_bytes())
    except FileNotFoundError:
        return None
    except (ValueError, OSError) as exc:  # JSONDecodeError and UnicodeDecodeError too
        raise InputError(
            f"corrupt recorder state ({type(exc).__name__}: {exc})",
            path=file,
            fix="Delete it; the journal beside it is kept and `rec stop` recovers it",
        ) from None


def orphan_journals(out_dir: Path) -> list[RecordingPaths]:
    """Journals without a state file (the recorder died before writing state, or after)."""
    folder = out_dir / WORK_FOLDER
    if not folder.is_dir():
        return []
    out: list[RecordingPaths] = []
    for file in sorted(folder.glob(f"*{_JOURNAL}")):
        paths = RecordingPaths(out_dir, file.name[: -len(_JOURNAL)])
        if not paths.state.exists():
            out.append(paths)
    return out
