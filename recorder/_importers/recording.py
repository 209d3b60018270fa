"""A recording's EvalSet: written when the recording finishes, re-extracted on import.

:func:`recording_evalset_text` makes it as a recording is finalised (from rec's ADK capture
when it was attached, else from the model traffic), and finalisation writes it once the
cassette is in place.
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
    adk_capture_path,
    checked_evalset_text,
    eval_set_id_for,
    keep_scenarios,
    redact_evalset,
    redacted_evalset_text,
)
from cassettes._extraction import evalset_from_exchanges, with_readable_eval_ids
from cassettes._file_names import CASSETTE_SUFFIX, cassette_file, evalset_file, recording_name
from recorder._importers.adk_session import evalset_from_sessions, read_capture

__all__ = [
    "evalset_from_recording",
    "find_cassette",
    "recording_evalset_text",
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


def _captured_evalset_text(
    sessions: list[dict[str, Any]], scenarios: Sequence[EvalCase], *, name: str, target: Path
) -> str | None:
    """The EvalSet text of the sessions rec's ADK capture plugin wrote (None: every session
    was left out, each with its warning)."""
    evalset = evalset_from_sessions(sessions, eval_set_id=eval_set_id_for(name))
    evalset = keep_scenarios(evalset, scenarios)
    if not evalset.eval_cases:
        return None
    evalset, _ = redact_evalset(evalset, path=target)
    # Named from the masked turns, so an id never spells a secret.
    evalset = with_readable_eval_ids(evalset)
    return checked_evalset_text(evalset, path=target)


def recording_evalset_text(
    cassette: Cassette,
    out_dir: str | Path,
    *,
    name: str,
    app_name: str = "rec",
    user_id: str = "user",
    initial_state: dict[str, Any] | None = None,
    scenarios: Sequence[EvalCase] = (),
) -> str | None:
    """The checked text of the EvalSet of ``cassette``, a finished (redacted) recording
    named ``name`` in ``out_dir`` (None: it holds no model conversation), for the caller to
    write with :func:`~cassettes._evalset_writer.write_evalset_text`.

    When rec's ADK capture plugin wrote ``.rec/<name>.adk.jsonl`` beside the recording, the
    EvalSet comes from those sessions (exact authors, app, user and state); otherwise it is
    extracted from the model traffic, with ``app_name``, ``user_id`` and ``initial_state``
    as its ``session_input``. Each ``conversation_scenario`` case of ``scenarios`` (what
    ``adk eval`` ran) replaces the session it produced (:func:`keep_scenarios`). Each
    case's ``eval_id`` is a slug of its first user turn.

    Raises:
        SecretFound: a credential-shaped value would be written.
    """
    capture = adk_capture_path(out_dir, name)
    target = evalset_file(out_dir, name)
    sessions = read_capture(capture) if capture.is_file() else []
    if sessions:
        return _captured_evalset_text(sessions, scenarios, name=name, target=target)
    evalset = evalset_from_exchanges(
        cassette.exchanges,
        eval_set_id=eval_set_id_for(name),
        app_name=app_name,
        user_id=user_id,
        initial_state=initial_state,
        live=cassette.live,
    )
    if not evalset.eval_cases:
        return None
    evalset = keep_scenarios(evalset, scenarios)
    # The cassette was scanned exchange by exchange; text joined across exchanges and
    # events (a reply, a tool result) is masked here rather than refused, so a finished
    # recording can never be kept from its EvalSet.
    return redacted_evalset_text(evalset, path=target)[0]
