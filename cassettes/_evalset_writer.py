"""Write a recording's (or an import's) ADK EvalSet and, beside it, a default ``test_config.json``.

``<name>.evalset.json`` is rewritten atomically every time; ``test_config.json`` is written
with ADK's default criteria only when the folder has none, so a user's own config is never
overwritten. Nothing is written if the EvalSet still contains a credential-shaped value.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from cassettes._atomic_write import locked, write_atomic
from cassettes._eval_config import CONFIG_NAMES, DEFAULT_EVAL_CONFIG, dump_eval_config
from cassettes._evalset import EvalSet, dump_evalset, parse_evalset
from cassettes._file_names import evalset_file
from cassettes._redaction import ensure_no_secrets, scan_for_secrets
from cassettes._secret_shapes import mask_json

__all__ = [
    "adk_capture_path",
    "eval_set_id_for",
    "redact_evalset",
    "write_evalset_files",
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

    return parse_evalset(json.dumps(mask_json(document)), path=path), len(hits)


def write_evalset_files(evalset: EvalSet, out_dir: str | Path, *, name: str) -> list[Path]:
    """Write ``<out_dir>/<name>.evalset.json`` and, if absent, ``<out_dir>/test_config.json``.

    Returns:
        The paths written: the EvalSet first, then the config when one was created.

    Raises:
        SecretFound: the EvalSet contains a credential-shaped value; nothing was written.
    """
    folder = Path(out_dir)
    target = evalset_file(folder, name)
    text = dump_evalset(evalset)
    ensure_no_secrets(json.loads(text), path=target)
    written = [write_atomic(target, text)]
    config = folder / CONFIG_NAMES[0]
    with locked(config, lock_dir=config.parent / ".rec"):  # two recorders finishing at once
        if not any((folder / config_name).exists() for config_name in CONFIG_NAMES):
            written.append(write_atomic(config, dump_eval_config(DEFAULT_EVAL_CONFIG)))
    return written
