"""A recording on disk and its lifecycle: start, journal, finalise, recover.

Layout of a recording folder (``rec start --out DIR --name NAME``)::

    DIR/NAME.cassette.json        the cassette (written when the recording ends)
    DIR/NAME.evalset.json         the ADK EvalSet extracted from it
    DIR/test_config.json          ADK's default criteria (never overwritten)
    DIR/.rec/NAME.journal.jsonl   completed exchanges, fsynced one by one while recording
    DIR/.rec/NAME.tools.jsonl     the agent's tools' own httpx calls (``tool_traffic``)
    DIR/.rec/NAME.state.json      pid and URL of the running recorder (for `rec stop`/`status`)

Finalising compacts the journal into the cassette atomically and removes the journal and
the state file. If the recorder died (SIGKILL, power loss) the journal and state stay
behind; `rec stop` or the next `rec start` on the folder finalises them and says how many
exchanges it recovered.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from cassettes import (
    Cassette,
    Exchange,
    InputError,
    ensure_no_secrets,
    load_cassette,
    locked,
    save_cassette,
    write_atomic,
)
from evalfiles import write_recording_evalset

from .journal import read_journal
from .tool_traffic import read_tool_traffic

__all__ = [
    "FinalizeResult",
    "RecorderState",
    "RecordingPaths",
    "finalize_recording",
    "pid_alive",
    "read_states",
    "recover_stale",
]

log = logging.getLogger(__name__)

Mode = Literal["record", "auto"]


@dataclass(frozen=True)
class RecordingPaths:
    """Where a recording's files live."""

    out_dir: Path
    name: str

    @property
    def cassette(self) -> Path:
        return self.out_dir / f"{self.name}.cassette.json"

    @property
    def evalset(self) -> Path:
        return self.out_dir / f"{self.name}.evalset.json"

    @property
    def journal(self) -> Path:
        return self.out_dir / ".rec" / f"{self.name}.journal.jsonl"

    @property
    def capture(self) -> Path:
        """rec's ADK capture plugin's session log (see ``recorder.adk_plugin``)."""
        return self.out_dir / ".rec" / f"{self.name}.adk.jsonl"

    @property
    def tools(self) -> Path:
        """The tools' own HTTP calls captured in-process (see ``recorder.tool_traffic``)."""
        return self.out_dir / ".rec" / f"{self.name}.tools.jsonl"

    @property
    def state(self) -> Path:
        return self.out_dir / ".rec" / f"{self.name}.state.json"


class RecorderState(BaseModel):
    """What a running recorder leaves in ``.rec/NAME.state.json``."""

    name: str
    pid: int
    url: str
    mode: Mode
    upstream: str
    started_at: str
    keep_existing: bool = False
    """Whether the finished cassette keeps the exchanges of an existing one (auto mode)."""
    id_offset: int = 0


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (and is not a zombie we own)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as dead
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return True


def write_state(paths: RecordingPaths, state: RecorderState) -> None:
    """Record that a recorder is running on this folder."""
    write_atomic(paths.state, state.model_dump_json(indent=2) + "\n")


def read_states(out_dir: Path) -> list[tuple[RecordingPaths, RecorderState]]:
    """Every recorder state file in ``out_dir`` (running or stale).

    Raises:
        InputError: a state file is corrupt (names it and how to fix it).
    """
    found: list[tuple[RecordingPaths, RecorderState]] = []
    folder = out_dir / ".rec"
    if not folder.is_dir():
        return found
    for file in sorted(folder.glob("*.state.json")):
        try:
            state = RecorderState.model_validate_json(file.read_bytes())
        except (ValidationError, OSError) as exc:
            raise InputError(
                f"corrupt recorder state ({type(exc).__name__})",
                path=file,
                fix="Delete it; the journal beside it is kept and `rec stop` recovers it",
            ) from None
        found.append((RecordingPaths(out_dir, state.name), state))
    return found


def orphan_journals(out_dir: Path) -> list[RecordingPaths]:
    """Journals without a state file (the recorder died before writing state, or after)."""
    folder = out_dir / ".rec"
    if not folder.is_dir():
        return []
    out: list[RecordingPaths] = []
    for file in sorted(folder.glob("*.journal.jsonl")):
        name = file.name[: -len(".journal.jsonl")]
        if not (folder / f"{name}.state.json").exists():
            out.append(RecordingPaths(out_dir, name))
    return out


@dataclass(frozen=True)
class FinalizeResult:
    """What finalising a recording wrote."""

    cassette_path: Path
    exchanges: int
    """Exchanges in the cassette."""
    new_exchanges: int
    """Exchanges taken from this recording's journal."""
    torn_lines: int
    evalset_path: Path | None
    recovered: bool
    """True when the recorder had died and its journal was recovered."""


def finalize_recording(
    paths: RecordingPaths,
    *,
    upstream: str | None,
    keep_existing: bool = False,
    recovered: bool = False,
    write_evalset: bool = True,
    app_name: str | None = None,
) -> FinalizeResult:
    """Compact the journal into the cassette atomically, then write the EvalSet.

    Raises:
        InputError: the existing cassette (auto mode) is corrupt, or a secret was found.
    """
    with locked(paths.cassette, lock_dir=paths.out_dir / ".rec"):
        contents = read_journal(paths.journal)
        exchanges: list[Exchange] = []
        if keep_existing and paths.cassette.exists():
            exchanges.extend(load_cassette(paths.cassette).exchanges)
        exchanges.extend(contents.exchanges)
        exchanges.sort(key=lambda e: e.id)
        # The tools' own calls follow the model traffic, their ids continuing.
        tools = read_tool_traffic(paths.tools)
        next_id = max((e.id for e in exchanges), default=-1) + 1
        exchanges.extend(
            e.model_copy(update={"id": next_id + n, "origin": "tool"}) for n, e in enumerate(tools)
        )
        cassette = Cassette(name=paths.name, upstream=upstream, exchanges=exchanges)
        ensure_no_secrets(cassette, path=paths.cassette, known_secrets=())
        new = contents.exchanges or tools
        if new or not paths.cassette.exists() or not keep_existing:
            save_cassette(cassette, paths.cassette)
        evalset_path = None
        if write_evalset:
            evalset_path = _write_evalset(cassette, paths, app_name=app_name)
        for leftover in (paths.journal, paths.tools, paths.state):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass
    return FinalizeResult(
        cassette_path=paths.cassette,
        exchanges=len(exchanges),
        new_exchanges=len(contents.exchanges) + len(tools),
        torn_lines=contents.torn_lines,
        evalset_path=evalset_path,
        recovered=recovered,
    )


def _write_evalset(
    cassette: Cassette, paths: RecordingPaths, *, app_name: str | None
) -> Path | None:
    kwargs: dict[str, Any] = {"name": paths.name}
    if app_name:
        kwargs["app_name"] = app_name
    written = write_recording_evalset(cassette, paths.out_dir, **kwargs)
    return Path(written) if written is not None else None


def recover_stale(out_dir: Path, *, write_evalset: bool = True) -> list[FinalizeResult]:
    """Finalise every recording in ``out_dir`` whose recorder is no longer running."""
    results: list[FinalizeResult] = []
    for paths, state in read_states(out_dir):
        if pid_alive(state.pid) and state.pid != os.getpid():
            continue
        log.warning(
            "the recorder of %r (pid %d) did not stop cleanly; recovering its journal",
            state.name,
            state.pid,
        )
        results.append(
            finalize_recording(
                paths,
                upstream=state.upstream,
                keep_existing=state.keep_existing,
                recovered=True,
                write_evalset=write_evalset,
            )
        )
    for paths in orphan_journals(out_dir):
        log.warning("found a journal without a recorder for %r; recovering it", paths.name)
        results.append(
            finalize_recording(
                paths,
                upstream=None,
                keep_existing=True,
                recovered=True,
                write_evalset=write_evalset,
            )
        )
    return results
