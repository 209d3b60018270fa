"""Migrate ADK's legacy eval files to an EvalSet.

Two shapes exist (``google/adk/evaluation/local_eval_sets_manager.py``,
``convert_eval_set_to_pydantic_schema``, and ``AgentEvaluator``'s legacy path):

- a flat list of turns ``[{query, expected_tool_use: [{tool_name, tool_input}], reference,
  expected_intermediate_agent_responses: [{author, text}]}]`` (one case; ADK names it after
  the file; its session comes from a separate ``initial.session.json`` when there is one);
- a list of cases ``[{name, data: [turns...], initial_session: {state, app_name, user_id}}]``.

The migration is ADK's, with three differences: the file is checked strictly first (ADK
fails with ``KeyError``s), ids are deterministic (not ``uuid4``), and a call with no
arguments has no ``args`` (rec's rule; ``{}`` would not equal a real call's missing args).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cassettes import InputError
from evalfiles import _genai_types as genai_types
from evalfiles.checking import check_document, detect_kind
from evalfiles.evalset import EvalCase, EvalSet, IntermediateData, Invocation, SessionInput

__all__ = ["evalset_from_legacy", "is_legacy"]

_UNSAFE = re.compile(r"[^a-zA-Z0-9_]+")


def is_legacy(document: object) -> bool:
    """True for either legacy shape (a JSON list of turns or of cases)."""
    return isinstance(document, list) and all(isinstance(item, dict) for item in document)


def _invocation(turn: dict[str, Any], invocation_id: str) -> Invocation:
    calls = [
        genai_types.FunctionCall(name=use["tool_name"], args=use["tool_input"] or None)
        for use in turn.get("expected_tool_use", [])
    ]
    responses = [
        (item["author"], [genai_types.Part(text=item["text"])])
        for item in turn.get("expected_intermediate_agent_responses", [])
    ]
    return Invocation(
        invocation_id=invocation_id,
        user_content=genai_types.Content(role="user", parts=[genai_types.Part(text=turn["query"])]),
        final_response=genai_types.Content(
            role="model", parts=[genai_types.Part(text=turn.get("reference", ""))]
        ),
        intermediate_data=IntermediateData(tool_uses=calls, intermediate_responses=responses),
    )


def _initial_session(path: Path) -> dict[str, Any]:
    beside = path.parent / "initial.session.json"
    if not beside.is_file():
        return {}
    try:
        document = json.loads(beside.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(
            f"cannot read the initial session ({exc})",
            path=beside,
            fix="Fix or remove initial.session.json",
        ) from None
    return document if isinstance(document, dict) else {}


def evalset_from_legacy(document: object, *, path: Path, eval_set_id: str) -> EvalSet:
    """Convert a legacy eval file's parsed JSON to an EvalSet.

    Raises:
        InputError: the file is not valid in its legacy shape; names the first problem
            (``rec check`` lists all of them).
    """
    errors = [
        p for p in check_document(document, path=path, kind="legacy_turns") if p.severity == "error"
    ]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more; run `rec check {path}`)" if len(errors) > 1 else ""
        raise InputError(first.problem + more, path=path, where=first.where, fix=first.fix)
    assert isinstance(document, list)
    if document and detect_kind(path, document) == "legacy_cases":
        cases = document
    else:
        cases = [{"name": path.name, "data": document, "initial_session": _initial_session(path)}]
    eval_cases: list[EvalCase] = []
    taken: set[str] = set()
    for case in cases:
        base = _UNSAFE.sub("_", str(case["name"]).removesuffix(".json")).strip("_") or "case"
        eval_id, n = base, 2
        while eval_id in taken:
            eval_id, n = f"{base}_{n}", n + 1
        taken.add(eval_id)
        session = case.get("initial_session") or {}
        eval_cases.append(
            EvalCase(
                eval_id=eval_id,
                conversation=[
                    _invocation(turn, f"{eval_id}-{index}")
                    for index, turn in enumerate(case["data"])
                ],
                session_input=(
                    SessionInput(
                        app_name=session.get("app_name", ""),
                        user_id=session.get("user_id", ""),
                        state=session.get("state", {}),
                    )
                    if session
                    else None
                ),
            )
        )
    return EvalSet(eval_set_id=eval_set_id, name=eval_set_id, eval_cases=eval_cases)
