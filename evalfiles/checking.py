"""Strict validation of the files rec reads: every problem in a file, each with its place and fix.

ADK's loaders stop at the first error, ignore misspelled keys, and hide a broken EvalSet
behind the legacy-format fallback (``KeyError: 'data'``, ``string indices must be
integers``). :func:`check_file` instead walks the whole document and reports every problem
it finds as a :class:`Problem` (file, JSON path, what is wrong, how to fix it). It knows:

- EvalSets (``*.evalset.json``, also ``*.test.json``),
- the two legacy eval formats (a list of turns; a list of cases with ``data``), which are
  recognised with a note and checked,
- eval configs (``test_config.json``, ``eval_config.json``), with a check that custom
  metric functions can be imported, and
- cassettes (``*.cassette.json``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from cassettes import Cassette, pydantic_error_location

from . import _genai_types as genai_types
from ._config_checking import check_eval_config
from .problems import Problem, Walker, type_name

__all__ = ["FileKind", "Problem", "check_document", "check_file", "check_paths", "detect_kind"]

FileKind = Literal["evalset", "legacy_turns", "legacy_cases", "eval_config", "cassette", "unknown"]

_CONFIG_NAMES = ("test_config.json", "eval_config.json")

# Allowed keys per object (snake_case; camelCase accepted below the top level, as ADK does).
_EVALSET_KEYS = {"eval_set_id", "name", "description", "eval_cases", "creation_timestamp"}
_CASE_KEYS = {
    "eval_id",
    "conversation",
    "conversation_scenario",
    "session_input",
    "creation_timestamp",
    "rubrics",
    "final_session_state",
}
_INVOCATION_KEYS = {
    "invocation_id",
    "user_content",
    "final_response",
    "intermediate_data",
    "creation_timestamp",
    "duration",
    "model_duration",
    "tool_duration",
    "rubrics",
    "app_details",
}
_TRAJECTORY_KEYS = {"tool_uses", "tool_responses", "intermediate_responses"}
_EVENTS_KEYS = {"invocation_events"}
_EVENT_KEYS = {"author", "content", "grounding_metadata", "usage_metadata", "model_version"}
_SESSION_KEYS = {"app_name", "user_id", "session_id", "state"}
_LEGACY_TURN_KEYS = {
    "query",
    "expected_tool_use",
    "reference",
    "expected_intermediate_agent_responses",
}
_LEGACY_CASE_KEYS = {"name", "data", "initial_session"}
_LEGACY_TOOL_KEYS = {"tool_name", "tool_input"}
_LEGACY_SESSION_KEYS = {"state", "app_name", "user_id"}


def detect_kind(path: str | Path, document: object) -> FileKind:
    """What kind of rec/ADK file a parsed document is (by name first, then by shape)."""
    name = Path(path).name
    if name in _CONFIG_NAMES:
        return "eval_config"
    if name.endswith(".cassette.json"):
        return "cassette"
    if isinstance(document, list):
        first = document[0] if document else None
        if isinstance(first, dict) and "query" not in first and set(first) & _LEGACY_CASE_KEYS:
            return "legacy_cases"
        return "legacy_turns"
    if isinstance(document, dict):
        keys = set(document)
        if keys & {"eval_cases", "eval_set_id", "evalCases", "evalSetId"}:
            return "evalset"
        if keys & {"criteria", "custom_metrics", "customMetrics"}:
            return "eval_config"
        if keys & {"exchanges", "format_version"}:
            return "cassette"
    return "unknown"


def check_document(
    document: object, *, path: str | Path, kind: FileKind | None = None
) -> list[Problem]:
    """Every problem in a parsed document (notes included; see :attr:`Problem.severity`)."""
    file = str(path)
    kind = kind or detect_kind(path, document)
    walker = Walker(file)
    if kind == "evalset":
        _check_evalset(walker, document)
    elif kind in ("legacy_turns", "legacy_cases"):
        _check_legacy(walker, document)
    elif kind == "eval_config":
        return check_eval_config(document, path=file)
    elif kind == "cassette":
        _check_cassette(walker, document)
    else:
        walker.error(
            "",
            "not a file rec knows (an EvalSet, a legacy eval file, an eval config or a cassette)",
            "Check the path; EvalSets have eval_set_id and eval_cases, configs have criteria",
        )
    return walker.problems


def check_file(path: str | Path) -> list[Problem]:
    """Read one file and return every problem in it."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [Problem(str(file), "", "file not found", "Check the path")]
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem(str(file), "", f"cannot read the file ({exc})", "Save it as UTF-8 JSON")]
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        return [
            Problem(
                str(file),
                f"line {exc.lineno} column {exc.colno}",
                f"not valid JSON ({exc.msg})",
                "Fix the JSON syntax",
            )
        ]
    return check_document(document, path=file)


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for pattern in ("*.evalset.json", "*.test.json", "*.cassette.json", *_CONFIG_NAMES):
                files.extend(sorted(path.rglob(pattern)))
        else:
            files.append(path)
    seen: set[Path] = set()
    return [f for f in files if not (f in seen or seen.add(f))]  # type: ignore[func-returns-value]


def check_paths(paths: Iterable[str | Path]) -> tuple[list[Path], list[Problem]]:
    """Check files and folders (searched for eval files, configs and cassettes).

    Returns:
        The files checked and every problem found, in file order.
    """
    files = _expand(paths)
    problems: list[Problem] = []
    for file in files:
        problems.extend(check_file(file))
    return files, problems


# -- EvalSet -------------------------------------------------------------------------------


def _check_evalset(walker: Walker, document: object) -> None:
    top = walker.obj(document, "", "the eval set")
    if top is None:
        return
    for key in top:
        if key not in _EVALSET_KEYS:
            walker.unknown_key("", key, _EVALSET_KEYS, camel_ok=False, what="the eval set")
    walker.require(top, "", "eval_set_id", str, camel_ok=False)
    cases = walker.require(top, "", "eval_cases", list, camel_ok=False)
    for key in ("name", "description"):
        walker.optional(top, "", key, str, camel_ok=False)
    walker.optional(top, "", "creation_timestamp", (int, float), camel_ok=False)
    for index, case in enumerate(cases or []):
        _check_case(walker, case, f"eval_cases[{index}]")


def _check_case(walker: Walker, raw: object, where: str) -> None:
    case = walker.keys(raw, where, _CASE_KEYS, what="an eval case")
    if case is None:
        return
    walker.require(case, where, "eval_id", str)
    conversation = walker.get(case, "conversation")
    scenario = walker.get(case, "conversation_scenario")
    if conversation is None and scenario is None:
        walker.error(
            where,
            "the eval case has neither conversation nor conversation_scenario",
            'Add "conversation": [{"user_content": ..., "final_response": ...}]',
        )
    elif conversation is not None and scenario is not None:
        walker.error(
            where,
            "the eval case has both conversation and conversation_scenario",
            "Keep exactly one of them",
        )
    turns = walker.optional(case, where, "conversation", list)
    for index, invocation in enumerate(turns or []):
        _check_invocation(walker, invocation, f"{where}.conversation[{index}]")
    walker.optional(case, where, "conversation_scenario", dict)
    session = walker.optional(case, where, "session_input", dict)
    if session is not None:
        inner = f"{where}.session_input"
        walker.keys(session, inner, _SESSION_KEYS, what="session_input")
        walker.require(session, inner, "app_name", str)
        walker.require(session, inner, "user_id", str)
        walker.optional(session, inner, "session_id", str)
        walker.optional(session, inner, "state", dict)
    walker.optional(case, where, "final_session_state", dict)
    walker.optional(case, where, "creation_timestamp", (int, float))
    walker.optional(case, where, "rubrics", list)


def _check_invocation(walker: Walker, raw: object, where: str) -> None:
    # ADK's Invocation and IntermediateData forbid unknown keys (its loader then falls back
    # to the legacy format and reports KeyError: 'data'); the other models ignore or keep them.
    invocation = walker.keys(raw, where, _INVOCATION_KEYS, what="an invocation", adk_rejects=True)
    if invocation is None:
        return
    walker.optional(invocation, where, "invocation_id", str)
    user = walker.require(invocation, where, "user_content", dict)
    if user is not None:
        _check_model(
            walker,
            genai_types.Content,
            user,
            f"{where}.{walker.key_of(invocation, 'user_content')}",
        )
    final = walker.optional(invocation, where, "final_response", dict)
    if final is not None:
        _check_model(
            walker,
            genai_types.Content,
            final,
            f"{where}.{walker.key_of(invocation, 'final_response')}",
        )
    for key in ("creation_timestamp", "duration", "model_duration", "tool_duration"):
        walker.optional(invocation, where, key, (int, float))
    data = walker.optional(invocation, where, "intermediate_data", dict)
    if data is not None:
        _check_intermediate(
            walker, data, f"{where}.{walker.key_of(invocation, 'intermediate_data')}"
        )


def _check_intermediate(walker: Walker, data: dict[str, Any], where: str) -> None:
    canonical = {walker.canonical(k, _TRAJECTORY_KEYS | _EVENTS_KEYS) for k in data}
    if canonical & _TRAJECTORY_KEYS and canonical & _EVENTS_KEYS:
        walker.error(
            where,
            "intermediate_data mixes invocation_events with tool_uses/tool_responses",
            "Use one shape: either invocation_events, or tool_uses + tool_responses",
        )
    walker.keys(
        data, where, _TRAJECTORY_KEYS | _EVENTS_KEYS, what="intermediate_data", adk_rejects=True
    )
    uses = walker.optional(data, where, "tool_uses", list)
    for index, call in enumerate(uses or []):
        _check_model(walker, genai_types.FunctionCall, call, f"{where}.tool_uses[{index}]")
    responses = walker.optional(data, where, "tool_responses", list)
    for index, response in enumerate(responses or []):
        _check_model(
            walker, genai_types.FunctionResponse, response, f"{where}.tool_responses[{index}]"
        )
    walker.optional(data, where, "intermediate_responses", list)
    events = walker.optional(data, where, "invocation_events", list)
    for index, raw in enumerate(events or []):
        inner = f"{where}.invocation_events[{index}]"
        event = walker.keys(raw, inner, _EVENT_KEYS, what="an invocation event")
        if event is None:
            continue
        walker.require(event, inner, "author", str)
        walker.optional(event, inner, "model_version", str)
        content = walker.optional(event, inner, "content", dict)
        if content is not None:
            _check_model(walker, genai_types.Content, content, f"{inner}.content")


def _check_model(walker: Walker, model: type[BaseModel], raw: object, where: str) -> None:
    """Validate a google.genai value, with "did you mean" for unknown keys."""
    if not isinstance(raw, dict):
        walker.error(
            where, f"must be an object, got {type_name(raw)}", f"Write a {model.__name__} object"
        )
        return
    fields = set(model.model_fields)
    bad_keys = False
    for key in raw:
        if walker.canonical(key, fields) is None:
            walker.unknown_key(where, key, fields, what=f"a {model.__name__}")
            bad_keys = True
    if model is genai_types.Content:
        parts = raw.get("parts")
        for index, part in enumerate(parts if isinstance(parts, list) else []):
            if isinstance(part, dict):
                part_fields = set(genai_types.Part.model_fields)
                for key in part:
                    if walker.canonical(key, part_fields) is None:
                        walker.unknown_key(
                            f"{where}.parts[{index}]", key, part_fields, what="a Part"
                        )
                        bad_keys = True
    if bad_keys:
        return
    try:
        model.model_validate(raw)
    except ValidationError as exc:
        for error in exc.errors():
            loc = pydantic_error_location(tuple(error["loc"]))
            place = f"{where}.{loc}" if loc != "(top level)" else where
            walker.error(place, error["msg"], "Fix that value")


# -- legacy formats ------------------------------------------------------------------------


def _check_legacy(walker: Walker, document: object) -> None:
    """Check a legacy eval file (flat list of turns or list of cases), noting its format."""
    if not isinstance(document, list):
        walker.error("", f"a legacy eval file is a list, got {type_name(document)}", "Write a list")
        return
    kind = detect_kind("x.json", document)
    if kind == "legacy_cases":
        walker.note(
            "",
            "legacy ADK eval format (a list of cases with data); ADK still loads it",
            "Convert it to an EvalSet with `rec import FILE`",
        )
        for index, raw in enumerate(document):
            where = f"[{index}]"
            case = walker.keys(raw, where, _LEGACY_CASE_KEYS, what="a legacy case", camel_ok=False)
            if case is None:
                continue
            walker.require(case, where, "name", str, camel_ok=False)
            data = walker.require(case, where, "data", list, camel_ok=False)
            for turn_index, turn in enumerate(data or []):
                _check_legacy_turn(walker, turn, f"{where}.data[{turn_index}]")
            session = walker.optional(case, where, "initial_session", dict, camel_ok=False)
            if session:
                walker.keys(
                    session,
                    f"{where}.initial_session",
                    _LEGACY_SESSION_KEYS,
                    what="initial_session",
                    camel_ok=False,
                )
        return
    walker.note(
        "",
        "legacy ADK eval format (a flat list of turns); ADK still loads it",
        "Convert it to an EvalSet with `rec import FILE`",
    )
    if not document:
        walker.error("", "the list of turns is empty", 'Add {"query": ..., "reference": ...}')
    for index, turn in enumerate(document):
        _check_legacy_turn(walker, turn, f"[{index}]")


def _check_legacy_turn(walker: Walker, raw: object, where: str) -> None:
    turn = walker.keys(raw, where, _LEGACY_TURN_KEYS, what="a legacy turn", camel_ok=False)
    if turn is None:
        return
    walker.require(turn, where, "query", str, camel_ok=False)
    walker.optional(turn, where, "reference", str, camel_ok=False)
    uses = walker.optional(turn, where, "expected_tool_use", list, camel_ok=False)
    for index, raw_use in enumerate(uses or []):
        inner = f"{where}.expected_tool_use[{index}]"
        use = walker.keys(
            raw_use, inner, _LEGACY_TOOL_KEYS, what="an expected tool use", camel_ok=False
        )
        if use is None:
            continue
        walker.require(use, inner, "tool_name", str, camel_ok=False)
        walker.require(use, inner, "tool_input", dict, camel_ok=False)
    responses = walker.optional(
        turn, where, "expected_intermediate_agent_responses", list, camel_ok=False
    )
    for index, raw_response in enumerate(responses or []):
        inner = f"{where}.expected_intermediate_agent_responses[{index}]"
        response = walker.keys(
            raw_response, inner, {"author", "text"}, what="a response", camel_ok=False
        )
        if response is not None:
            walker.require(response, inner, "author", str, camel_ok=False)
            walker.require(response, inner, "text", str, camel_ok=False)


# -- cassette ------------------------------------------------------------------------------


def _check_cassette(walker: Walker, document: object) -> None:
    if isinstance(document, dict) and document.get("format_version") not in (None, 1):
        walker.error(
            "format_version",
            f"cassette format_version {document.get('format_version')!r} is not supported",
            "Upgrade rec, or re-record the cassette with this version",
        )
        return
    try:
        Cassette.model_validate(document)
    except ValidationError as exc:
        for error in exc.errors():
            walker.error(
                pydantic_error_location(tuple(error["loc"])),
                error["msg"],
                "Fix that field, or re-record the cassette",
            )
