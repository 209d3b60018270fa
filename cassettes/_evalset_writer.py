"""Write a recording's (or an import's) ADK EvalSet and, beside it, a default ``test_config.json``.

``<name>.evalset.json`` is rewritten atomically every time; ``test_config.json`` is written
with ADK's default criteria only when the folder has none, so a user's own config is never
overwritten. Nothing is written if the EvalSet still contains a credential-shaped value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from cassettes._atomic_write import write_atomic
from cassettes._eval_config import CONFIG_NAMES, DEFAULT_EVAL_CONFIG, dump_eval_config
from cassettes._evalset import EvalCase, EvalSet, dump_evalset, parse_evalset
from cassettes._extraction import content_text, readable_id
from cassettes._file_names import evalset_file
from cassettes._folders import locked
from cassettes._secret_scan import ensure_no_secrets, scan_for_secrets, text_clear_at_a_glance
from cassettes._secret_shapes import mask_json

__all__ = [
    "adk_capture_path",
    "adk_id",
    "checked_evalset_text",
    "eval_set_id_for",
    "finished_capture_evalset_text",
    "finished_evalset_text",
    "keep_scenarios",
    "redact_evalset",
    "with_readable_eval_ids",
    "redacted_evalset_text",
    "write_evalset_files",
    "write_evalset_text",
    "write_redacted_evalset_files",
]

_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_]+")


def adk_capture_path(out_dir: str | Path, name: str) -> Path:
    """Where a recording's ADK capture goes: ``<out_dir>/.rec/<name>.adk.jsonl``.

    rec's ADK capture plugin appends each session there while recording; the recording's
    EvalSet is then built from it (``recorder``'s ``recording_evalset_text``).
    """
    return Path(out_dir) / ".rec" / f"{name}.adk.jsonl"


def eval_set_id_for(name: str) -> str:
    """An ``eval_set_id`` ADK accepts (``[a-zA-Z0-9_]+``) derived from a recording name."""
    return adk_id(name, default="recording")


def adk_id(text: str, *, default: str) -> str:
    """``text`` as an id ADK accepts (``[a-zA-Z0-9_]+``): other runs become ``_``, the ends
    trimmed; ``default`` when nothing is left."""
    return _ID_UNSAFE.sub("_", text).strip("_") or default


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


def with_readable_eval_ids(evalset: EvalSet) -> EvalSet:
    """``evalset`` with each recorded case's ``eval_id`` a slug of its first user turn.

    The slug is the words of the turn's text, lowercase, joined by ``_`` (at most 40
    characters), unique within the set by a suffix ``_2``, ``_3``...; a case with no user
    text keeps its id (the session id a capture gave it). Cases without a conversation
    (``conversation_scenario`` cases) keep their ids, which no slug takes.
    """
    taken = {case.eval_id for case in evalset.eval_cases if not case.conversation}
    cases: list[EvalCase] = []
    for case in evalset.eval_cases:
        if not case.conversation:
            cases.append(case)
            continue
        text = content_text(case.conversation[0].user_content)
        eval_id = readable_id(text, taken, fallback=case.eval_id)
        cases.append(case.model_copy(update={"eval_id": eval_id}))
    return evalset.model_copy(update={"eval_cases": cases})


def keep_scenarios(evalset: EvalSet, scenarios: Sequence[EvalCase]) -> EvalSet:
    """``evalset`` with each recorded session of a scenario replaced by the scenario case.

    A session belongs to a ``conversation_scenario`` case when its first user text is the
    scenario's ``starting_prompt`` (the simulator's fixed first message); sessions and
    scenarios that share a starting prompt pair up in order. The scenario case keeps its
    eval id and session input, so a replay asks ADK's user simulator again, from the
    recording, instead of sending the turns it said once. Other sessions stay as they are.
    """
    waiting: dict[str, list[EvalCase]] = {}
    for case in scenarios:
        prompt = _starting_prompt(case)
        if prompt is not None:
            waiting.setdefault(prompt, []).append(case)
    cases: list[EvalCase] = []
    for case in evalset.eval_cases:
        first = case.conversation[0] if case.conversation else None
        parts = (first.user_content.parts or []) if first is not None else []
        text = "".join(p.text or "" for p in parts).strip()
        queue = waiting.get(text)
        cases.append(queue.pop(0) if queue else case)
    return evalset.model_copy(update={"eval_cases": cases})


def _starting_prompt(case: EvalCase) -> str | None:
    scenario = case.conversation_scenario
    prompt = scenario.get("starting_prompt") if isinstance(scenario, dict) else None
    if prompt is None and isinstance(scenario, dict):
        prompt = scenario.get("startingPrompt")
    if prompt is None:
        prompt = getattr(scenario, "starting_prompt", None)
    return prompt.strip() if isinstance(prompt, str) else None


def write_evalset_files(
    evalset: EvalSet, out_dir: str | Path, *, name: str, config: str | None = None
) -> list[Path]:
    """Write ``<out_dir>/<name>.evalset.json`` and, if absent, ``<out_dir>/test_config.json``.

    ``config`` is the config text to write when the folder has none (default: ADK's
    default criteria).

    Returns:
        The paths written: the EvalSet first, then the config when one was created.

    Raises:
        SecretFound: the EvalSet contains a credential-shaped value; nothing was written.
    """
    text = checked_evalset_text(evalset, path=evalset_file(out_dir, name))
    return write_evalset_text(text, out_dir, name=name, config=config)


def write_redacted_evalset_files(
    evalset: EvalSet, out_dir: str | Path, *, name: str, config: str | None = None
) -> tuple[list[Path], int]:
    """:func:`redact_evalset`, then :func:`write_evalset_files`; the text written is the one
    looked at, so an EvalSet with nothing credential-shaped is read once.

    Returns:
        The paths written, and how many places held a credential (masked).
    """
    text, hits = redacted_evalset_text(evalset, path=evalset_file(out_dir, name))
    return write_evalset_text(text, out_dir, name=name, config=config), hits


def checked_evalset_text(evalset: EvalSet, *, path: str | Path) -> str:
    """The text :func:`write_evalset_files` writes for ``evalset`` (to ``path``).

    Raises:
        SecretFound: the EvalSet contains a credential-shaped value.
    """
    text = dump_evalset(evalset)
    ensure_no_secrets(json.loads(text), path=path)
    return text


def redacted_evalset_text(evalset: EvalSet, *, path: str | Path) -> tuple[str, int]:
    """The text :func:`write_redacted_evalset_files` writes for ``evalset`` (to ``path``),
    and how many places held a credential (masked)."""
    text = dump_evalset(evalset)
    if text_clear_at_a_glance(text):
        return text, 0
    evalset, hits = redact_evalset(evalset, path=path)
    return checked_evalset_text(evalset, path=path), hits


def finished_evalset_text(
    evalset: EvalSet, scenarios: Sequence[EvalCase], *, path: str | Path
) -> str | None:
    """The text a recording's EvalSet extracted from its model traffic is written as (to
    ``path``), or None when it holds no case.

    The scenario cases the run evaluated take the place of their sessions
    (:func:`keep_scenarios`), and credential-shaped values are masked, not refused, so a
    finished recording is never kept from its EvalSet. Its cases were named as they were
    extracted.

    Raises:
        SecretFound: a credential-shaped value is left after masking.
    """
    evalset = keep_scenarios(evalset, scenarios)
    if not evalset.eval_cases:
        return None  # no conversation, or every session was left out (each with its warning)
    return redacted_evalset_text(evalset, path=path)[0]


def finished_capture_evalset_text(
    evalset: EvalSet, scenarios: Sequence[EvalCase], *, path: str | Path
) -> str | None:
    """:func:`finished_evalset_text` for an EvalSet built from rec's ADK capture, whose ids
    are session ids: once masked, its cases get readable ids, named from the masked turns
    so that an id never spells a secret.

    Raises:
        SecretFound: a credential-shaped value is left after masking.
    """
    evalset = keep_scenarios(evalset, scenarios)
    if not evalset.eval_cases:
        return None  # every session was left out (each with its warning)
    evalset, _ = redact_evalset(evalset, path=path)
    return checked_evalset_text(with_readable_eval_ids(evalset), path=path)


def write_evalset_text(
    text: str, out_dir: str | Path, *, name: str, config: str | None = None
) -> list[Path]:
    """Write an EvalSet's checked text (:func:`checked_evalset_text`) as
    :func:`write_evalset_files` writes it: the EvalSet, then the config if absent."""
    folder = Path(out_dir)
    written = [write_atomic(evalset_file(folder, name), text)]
    config_path = folder / CONFIG_NAMES[0]
    # Two recorders may finish at once.
    with locked(config_path, lock_dir=config_path.parent / ".rec"):
        if not any((folder / config_name).exists() for config_name in CONFIG_NAMES):
            chosen = config if config is not None else dump_eval_config(DEFAULT_EVAL_CONFIG)
            written.append(write_atomic(config_path, chosen))
    return written
