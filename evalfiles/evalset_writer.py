"""Write a recording's (or an import's) ADK EvalSet and, beside it, a default ``test_config.json``.

``<name>.evalset.json`` is rewritten atomically every time; ``test_config.json`` is written
with ADK's default criteria only when the folder has none, so a user's own config is never
overwritten. Nothing is written if the EvalSet still contains a credential-shaped value.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cassettes import Cassette, ensure_no_secrets, locked, mask, scan_for_secrets, write_atomic

from .eval_config import CONFIG_NAMES, DEFAULT_EVAL_CONFIG, dump_eval_config
from .evalset import EvalSet, dump_evalset, parse_evalset
from .extraction import evalset_from_exchanges

__all__ = [
    "adk_capture_path",
    "eval_set_id_for",
    "redact_evalset",
    "write_evalset_files",
    "write_recording_evalset",
]

_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_]+")


def adk_capture_path(out_dir: str | Path, name: str) -> Path:
    """Where a recording's ADK capture goes: ``<out_dir>/.rec/<name>.adk.jsonl``.

    rec's ADK capture plugin appends each session there while recording; the recording's
    EvalSet is then built from it (:func:`write_recording_evalset`).
    """
    return Path(out_dir) / ".rec" / f"{name}.adk.jsonl"


def eval_set_id_for(name: str) -> str:
    """An ``eval_set_id`` ADK accepts (``[a-zA-Z0-9_]+``) derived from a recording name."""
    return _ID_UNSAFE.sub("_", name).strip("_") or "recording"


def redact_evalset(evalset: EvalSet, *, path: str | Path) -> tuple[EvalSet, int]:
    """Replace credential-shaped values in an EvalSet by markers (``AIza…(redacted)``).

    Session data (tool results, state, user text) can hold keys and tokens; they are
    masked rather than refused, since the user cannot re-record a production session.

    Returns:
        The redacted EvalSet and how many places held a credential.
    """
    document = json.loads(evalset.model_dump_json(exclude_none=True))
    hits = scan_for_secrets(document)
    if not hits:
        return evalset, 0

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return mask(value)
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, dict):
            return {mask(key): walk(item) for key, item in value.items()}
        return value

    return parse_evalset(json.dumps(walk(document)), path=path), len(hits)


def write_evalset_files(evalset: EvalSet, out_dir: str | Path, *, name: str) -> list[Path]:
    """Write ``<out_dir>/<name>.evalset.json`` and, if absent, ``<out_dir>/test_config.json``.

    Returns:
        The paths written: the EvalSet first, then the config when one was created.

    Raises:
        SecretFound: the EvalSet contains a credential-shaped value; nothing was written.
    """
    folder = Path(out_dir)
    target = folder / f"{name}.evalset.json"
    text = dump_evalset(evalset)
    ensure_no_secrets(json.loads(text), path=target)
    written = [write_atomic(target, text)]
    config = folder / CONFIG_NAMES[0]
    with locked(config, lock_dir=config.parent / ".rec"):  # two recorders finishing at once
        if not any((folder / config_name).exists() for config_name in CONFIG_NAMES):
            written.append(write_atomic(config, dump_eval_config(DEFAULT_EVAL_CONFIG)))
    return written


def write_recording_evalset(
    cassette: Cassette,
    out_dir: str | Path,
    *,
    name: str,
    app_name: str = "rec",
    user_id: str = "user",
    initial_state: dict[str, Any] | None = None,
) -> Path | None:
    """Extract the conversations of a finished recording and write its EvalSet.

    When rec's ADK capture plugin wrote ``.rec/<name>.adk.jsonl`` beside the recording, the
    EvalSet comes from those sessions (exact authors, app, user and state); otherwise it
    is extracted from the model traffic.

    Args:
        cassette: the finalised (redacted) recording.
        out_dir: the recording folder; ``<name>.evalset.json`` goes there.
        name: the recording name.
        app_name: ``session_input.app_name`` (the ADK app folder name when known).
        user_id: ``session_input.user_id``.
        initial_state: ``session_input.state`` (the session state at the start, when known).

    Returns:
        The EvalSet path, or ``None`` when the recording holds no model conversation
        (nothing is written then).

    Raises:
        SecretFound: a credential-shaped value would be written; nothing was written.
    """
    capture = adk_capture_path(out_dir, name)
    if capture.is_file():
        from .importers.adk_session import evalset_from_sessions, read_capture

        sessions = read_capture(capture)
        if sessions:
            evalset = evalset_from_sessions(sessions, eval_set_id=eval_set_id_for(name))
            target = Path(out_dir) / f"{name}.evalset.json"
            evalset, _ = redact_evalset(evalset, path=target)
            return write_evalset_files(evalset, out_dir, name=name)[0]
    evalset = evalset_from_exchanges(
        cassette.exchanges,
        eval_set_id=eval_set_id_for(name),
        app_name=app_name,
        user_id=user_id,
        initial_state=initial_state,
    )
    if not evalset.eval_cases:
        return None
    # The cassette was scanned exchange by exchange; text joined across exchanges and
    # events (a reply, a tool result) is masked here rather than refused, so a finished
    # recording can never be kept from its EvalSet (issue 10 item 3).
    evalset, _ = redact_evalset(evalset, path=Path(out_dir) / f"{name}.evalset.json")
    return write_evalset_files(evalset, out_dir, name=name)[0]
