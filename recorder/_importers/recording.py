"""A recording's EvalSet: written when the recording finishes, re-extracted on import.

:func:`write_recording_evalset` makes it (:func:`recording_evalset_text`: from rec's ADK
capture when it was attached, else from the model traffic) and writes it; finalisation
calls it once the cassette is in place.
:func:`evalset_from_recording` re-extracts an existing recording (``rec import DIR``, after
rec's extraction improves).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cassettes._cassette import Cassette, load_cassette
from cassettes._errors import InputError
from cassettes._evalset import EvalCase, EvalSet
from cassettes._evalset_writer import (
    eval_set_id_for,
    finished_capture_evalset_text,
    finished_evalset_text,
    write_evalset_text,
)
from cassettes._extraction import evalset_from_exchanges
from cassettes._file_names import CASSETTE_SUFFIX, cassette_file, recording_name
from recorder._importers.adk_session import evalset_from_sessions, read_capture
from recorder._recording_state import RecordingPaths

__all__ = [
    "evalset_from_recording",
    "find_cassette",
    "recording_evalset_text",
    "write_recording_evalset",
]


def find_cassette(source: Path, *, name: str | None) -> Path:
    """The cassette a source names: the file itself, or the one (or ``name``) in a folder.

    Raises:
        InputError: the folder holds no cassette, or several and no name picks one.
    """
    if source.is_file():
        return source
    if name is not None and cassette_file(source, name).is_file():
        return cassette_file(source, name)
    found = sorted(source.glob(f"*{CASSETTE_SUFFIX}"))
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(
            f"no recording (*{CASSETTE_SUFFIX}) in this folder",
            path=source,
            fix="Pass a recording folder, a cassette file, a session JSON or a session database",
        )
    names = ", ".join(recording_name(p) for p in found)
    raise InputError(
        f"several recordings in this folder ({names})",
        path=source,
        fix="Pick one with --name NAME, or pass the cassette file",
    )


def evalset_from_recording(cassette_path: Path, *, eval_set_id: str) -> tuple[EvalSet, str]:
    """The EvalSet of a cassette, and the recording's name."""
    cassette = load_cassette(cassette_path)
    evalset = evalset_from_exchanges(
        cassette.exchanges, eval_set_id=eval_set_id, live=cassette.live
    )
    if not evalset.eval_cases:
        raise InputError(
            "the recording holds no model conversation (no generateContent exchange "
            "or Live session)",
            path=cassette_path,
            fix="Record a session that calls the model",
        )
    return evalset, cassette.name


def write_recording_evalset(
    cassette: Cassette,
    out_dir: str | Path,
    *,
    name: str,
    app_name: str = "rec",
    user_id: str = "user",
    initial_state: dict[str, Any] | None = None,
    scenarios: Sequence[EvalCase] = (),
    config: str | None = None,
) -> Path | None:
    """Extract the conversations of a finished recording and write its EvalSet.

    When rec's ADK capture plugin wrote ``.rec/<name>.adk.jsonl`` beside the recording, the
    EvalSet comes from those sessions (exact authors, app, user and state); otherwise it
    is extracted from the model traffic. Either way each case's ``eval_id`` is a slug of its
    first user turn (:func:`~cassettes._evalset_writer.with_readable_eval_ids`).

    Args:
        cassette: the finalised (redacted) recording.
        out_dir: the recording folder; ``<name>.evalset.json`` goes there.
        name: the recording name.
        app_name: ``session_input.app_name`` (the ADK app folder name when known).
        user_id: ``session_input.user_id``.
        initial_state: ``session_input.state`` (the session state at the start, when known).
        scenarios: the ``conversation_scenario`` cases the run evaluated (``adk eval``):
            each replaces the session it produced (:func:`keep_scenarios`).
        config: the eval config text for ``test_config.json`` when the folder has none.

    Returns:
        The EvalSet path, or ``None`` when the recording holds no model conversation
        (nothing is written then).

    Raises:
        SecretFound: a credential-shaped value would be written; nothing was written.
    """
    paths = RecordingPaths(Path(out_dir), name)
    text = recording_evalset_text(
        cassette,
        paths,
        app_name=app_name,
        user_id=user_id,
        initial_state=initial_state,
        scenarios=scenarios,
    )
    if text is None:
        return None
    return write_evalset_text(text, paths.out_dir, name=name, config=config)[0]


def recording_evalset_text(
    cassette: Cassette,
    paths: RecordingPaths,
    *,
    app_name: str = "rec",
    user_id: str = "user",
    initial_state: dict[str, Any] | None = None,
    scenarios: Sequence[EvalCase] = (),
) -> str | None:
    """The text :func:`write_recording_evalset` writes for the recording at ``paths``,
    without writing it (None: the recording holds no model conversation).

    The one place a recording's EvalSet is built: from rec's ADK capture when it holds a
    session (exact authors, app, user and state), else from the model traffic; then
    finished as every recording's is (``cassettes._evalset_writer``'s
    ``finished_evalset_text``, or ``finished_capture_evalset_text`` for a capture: the
    scenarios kept, credentials masked, readable ids).

    Raises:
        SecretFound: a credential-shaped value would be written.
    """
    sessions = read_capture(paths.capture) if paths.capture.is_file() else []
    eval_set_id = eval_set_id_for(paths.name)
    if sessions:
        captured = evalset_from_sessions(sessions, eval_set_id=eval_set_id)
        return finished_capture_evalset_text(captured, scenarios, path=paths.evalset)
    evalset = evalset_from_exchanges(
        cassette.exchanges,
        eval_set_id=eval_set_id,
        app_name=app_name,
        user_id=user_id,
        initial_state=initial_state,
        live=cassette.live,
    )
    return finished_evalset_text(evalset, scenarios, path=paths.evalset)
