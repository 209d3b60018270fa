"""Migrate ADK's legacy eval files to an EvalSet.

Two shapes exist (``google/adk/evaluation/local_eval_sets_manager.py``,
``convert_eval_set_to_pydantic_schema``, and ``AgentEvaluator``'s legacy path):

- a flat list of turns ``[{query, expected_tool_use: [{tool_name, tool_input}], reference,
  expected_intermediate_agent_responses: [{author, text}]}]`` (one case; ADK names it after
  the file; its session comes from a separate ``initial.session.json`` when there is one);
- a list of cases ``[{name, data: [turns...], initial_session: {state, app_name, user_id}}]``.

The migration is ADK's, with four differences: the file is validated first (ADK fails
with ``KeyError``s), ids are deterministic (not ``uuid4``), a call with no arguments has no
``args`` (rec's rule; ``{}`` would not equal a real call's missing args), and a case's
``initial_state``, which ADK silently ignores, becomes ``session_input.state`` (reported in
:attr:`LegacyMigration.notes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cassettes import _genai_types as genai_types
from cassettes._errors import InputError
from cassettes._evalset import EvalCase, EvalSet, IntermediateData, Invocation, SessionInput
from cassettes._evalset_writer import adk_id
from cassettes._json_file import parse_json, read_file
from cassettes._legacy_eval_file import (
    LEGACY_CASES,
    LEGACY_TURNS,
    LegacyCase,
    LegacySession,
    LegacyTurn,
    legacy_shape,
    legacy_unknown_key,
)
from cassettes._problems import first_problem, validation_problems

__all__ = ["LegacyMigration", "evalset_from_legacy", "is_legacy"]


@dataclass
class LegacyMigration:
    """A legacy file as an EvalSet, and what the migration did beyond ADK's."""

    evalset: EvalSet
    notes: list[str] = field(default_factory=list)
    """One sentence per change the user should know about (``initial_state`` moved)."""


def is_legacy(document: object) -> bool:
    """True for either legacy shape (a JSON list of turns or of cases)."""
    return isinstance(document, list) and all(isinstance(item, dict) for item in document)


def _invocation(turn: LegacyTurn, invocation_id: str) -> Invocation:
    calls = [
        genai_types.FunctionCall(name=use.tool_name, args=use.tool_input or None)
        for use in turn.expected_tool_use
    ]
    responses = [
        (item.author, [genai_types.Part(text=item.text)])
        for item in turn.expected_intermediate_agent_responses
    ]
    return Invocation(
        invocation_id=invocation_id,
        user_content=genai_types.Content(role="user", parts=[genai_types.Part(text=turn.query)]),
        final_response=genai_types.Content(
            role="model", parts=[genai_types.Part(text=turn.reference or "")]
        ),
        intermediate_data=IntermediateData(tool_uses=calls, intermediate_responses=responses),
    )


def _initial_session(path: Path) -> LegacySession | None:
    beside = path.parent / "initial.session.json"
    if not beside.exists():
        return None
    document = parse_json(read_file(beside, what="initial session"), path=beside)
    try:
        return LegacySession.model_validate(document)
    except (OSError, ValueError) as exc:  # ValidationError is a ValueError
        raise InputError(
            f"cannot read the initial session ({str(exc).splitlines()[0]})",
            path=beside,
            fix="Fix or remove initial.session.json",
        ) from None


def _cases(document: list[Any], *, path: Path) -> list[LegacyCase]:
    # Strict, like `rec check`: a misspelled key would otherwise drop an expectation silently.
    cases = legacy_shape(document) == "legacy_cases"
    try:
        if cases:
            return LEGACY_CASES.validate_python(document, extra="forbid")
        turns = LEGACY_TURNS.validate_python(document, extra="forbid")
    except ValidationError as exc:
        model = list[LegacyCase] if cases else list[LegacyTurn]
        problems = validation_problems(
            exc, path=path, model=model, document=document, describe_unknown=legacy_unknown_key
        )
        raise first_problem(problems) from None
    if not turns:
        raise InputError(
            "the list of turns is empty", path=path, fix='Add {"query": ..., "reference": ...}'
        )
    return [LegacyCase(name=path.name, data=turns, initial_session=_initial_session(path))]


def _session(case: LegacyCase, where: str, notes: list[str]) -> SessionInput | None:
    session = case.initial_session
    if session is not None and not session.model_fields_set:
        session = None  # `"initial_session": {}` sets nothing, as ADK reads it
    state = dict(session.state) if session else {}
    if case.initial_state:
        clash = sorted(k for k, v in case.initial_state.items() if k in state and state[k] != v)
        if clash:
            raise InputError(
                f"initial_state and initial_session.state disagree on {', '.join(clash)}",
                where=f"{where}.initial_state",
                fix="Keep one value for each key (ADK reads only initial_session.state)",
            )
        state = {**case.initial_state, **state}
        notes.append(where)
    if session is None and not case.initial_state:
        return None
    return SessionInput(
        app_name=session.app_name if session else "",
        user_id=session.user_id if session else "",
        state=state,
    )


def evalset_from_legacy(document: object, *, path: Path, eval_set_id: str) -> LegacyMigration:
    """Convert a legacy eval file's parsed JSON to an EvalSet.

    Raises:
        InputError: the file is not valid in its legacy shape; names the first problem
            (``rec check`` lists all of them).
    """
    if not isinstance(document, list):
        raise InputError("a legacy eval file is a list", path=path, fix="Write a list")
    notes: list[str] = []
    eval_cases: list[EvalCase] = []
    taken: set[str] = set()
    for index, case in enumerate(_cases(document, path=path)):
        base = adk_id(case.name.removesuffix(".json"), default="case")
        eval_id, n = base, 2
        while eval_id in taken:
            eval_id, n = f"{base}_{n}", n + 1
        taken.add(eval_id)
        try:
            session = _session(case, f"[{index}]", notes)
        except InputError as exc:
            raise InputError(exc.problem, path=path, where=exc.where, fix=exc.fix) from None
        eval_cases.append(
            EvalCase(
                eval_id=eval_id,
                conversation=[
                    _invocation(turn, f"{eval_id}-{number}")
                    for number, turn in enumerate(case.data)
                ],
                session_input=session,
            )
        )
    evalset = EvalSet(eval_set_id=eval_set_id, name=eval_set_id, eval_cases=eval_cases)
    if notes:  # one line for the whole file
        notes = [
            f"moved initial_state into session_input.state for {len(notes)} case(s) "
            f"({', '.join(notes)}): ADK ignores initial_state, so with ADK this state never "
            "reached the agent"
        ]
    return LegacyMigration(evalset, notes)
