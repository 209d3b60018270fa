"""ADK-compatible EvalSet models (``*.evalset.json``).

These mirror ``google.adk.evaluation.eval_set.EvalSet`` field for field so that what rec
writes loads in ADK and what ADK writes loads here, without importing ADK (rec's
recorder must not need it) or google-genai: contents, parts and calls are the lean copies
of ``google.genai.types`` in :mod:`cassettes._genai_types`, generated from google-genai and
validating and serialising exactly as it does. Below the top level both camelCase and
snake_case keys load; rec writes snake_case like ADK (indent 2, UTF-8, nulls and defaults
dropped, a call with no arguments has no ``args``).

Validation here is ADK's (lenient where ADK is lenient). ``rec check`` adds the strict
pass that reports misspelled keys.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.alias_generators import to_camel

from cassettes import _genai_types as genai_types
from cassettes._errors import InputError
from cassettes._file_names import EVALSET_SUFFIX
from cassettes._json_file import parse_json, read_file, refuse_deep_nesting
from cassettes._problems import field_keys, validation_problems
from cassettes._validation import invalid

__all__ = [
    "RUNNABLE",
    "EvalCase",
    "EvalModel",
    "EvalSet",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "SessionInput",
    "dump_evalset",
    "invocation_tool_calls",
    "invocation_tool_responses",
    "load_evalset",
    "parse_evalset",
    "save_evalset",
]


RUNNABLE = {"rec_runnable": True}
"""Validation context for EvalSets that are to be run: every rule that a replay needs holds
(an invocation's user turn has something to send). Files rec reads and ``rec check`` use it;
models built in code (extraction, imports) are checked when their file is read."""


def _must_run(info: ValidationInfo) -> bool:
    return bool((info.context or {}).get("rec_runnable"))


_Timestamp = Annotated[float, Field(ge=0, le=1e13, allow_inf_nan=False)]
"""Seconds since 1970 (or milliseconds, as some tools write): finite, and a date a clock
can show (1e300 overflows every date function)."""
_Seconds = Annotated[float, Field(ge=0, le=1e9, allow_inf_nan=False)]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""Characters no XML report (JUnit) can hold, nor most file names."""


def _reportable(value: str, info: ValidationInfo) -> str:
    if _must_run(info) and _CONTROL.search(value):
        raise invalid(
            "id_control_character",
            "the id holds a control character (a NUL or another byte below 0x20): the "
            "JUnit report and the results file named after it cannot hold it",
            "Remove the control character from the id",
        )
    return value


_Id = Annotated[str, AfterValidator(_reportable)]
"""An eval set or eval case id: it names report entries and result files."""


class EvalModel(BaseModel):
    """The base of the EvalSet file's models (and of the result's, which hold invocations)."""

    # ADK's unknown-key behaviour per model (forbid / ignore / allow) is kept, so what loads
    # in ADK loads here; `rec check` validates with extra="forbid" to report every unknown key.
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        defer_build=True,
    )


class IntermediateData(EvalModel):
    """Tool calls, tool responses and sub-agent text of one invocation (the older shape)."""

    tool_uses: list[genai_types.FunctionCall] = Field(default_factory=list)
    """Tool calls in call order."""
    tool_responses: list[genai_types.FunctionResponse] = Field(default_factory=list)
    """Tool responses in the order they were produced."""
    intermediate_responses: list[tuple[str, list[genai_types.Part]]] = Field(default_factory=list)
    """(author, parts) of text emitted before the final response."""


class InvocationEvent(EvalModel):
    """One event of an invocation (the richer shape, which keeps token usage)."""

    model_config = ConfigDict(extra="ignore")
    author: str
    """The agent (or ``user``) that produced the event."""
    content: genai_types.Content | None = None
    grounding_metadata: genai_types.GroundingMetadata | None = None
    usage_metadata: genai_types.GenerateContentResponseUsageMetadata | None = None
    """Token usage reported by the model for this event."""
    model_version: str | None = None
    """The model version that served the call."""


class InvocationEvents(EvalModel):
    """Events of one invocation in order."""

    invocation_events: list[InvocationEvent] = Field(default_factory=list)


def _intermediate_shape(value: Any) -> str | None:
    """Which of ADK's two intermediate shapes a value is (None when it mixes them)."""
    if value is None:
        return "None"
    if isinstance(value, BaseModel):
        return type(value).__name__
    if not isinstance(value, dict):
        return "IntermediateData"  # reported as "must be an object"
    events = any(key in value for key in field_keys(InvocationEvents))
    trajectory = any(key in value for key in field_keys(IntermediateData))
    if events and trajectory:
        return None
    return "InvocationEvents" if events else "IntermediateData"


Intermediate = Annotated[
    Annotated[IntermediateData, Tag("IntermediateData")]
    | Annotated[InvocationEvents, Tag("InvocationEvents")]
    | Annotated[None, Tag("None")],
    Discriminator(
        _intermediate_shape,
        custom_error_type="intermediate_data_shape",
        custom_error_message=(
            "intermediate_data mixes invocation_events with tool_uses/tool_responses"
        ),
        custom_error_context={
            "fix": "Use one shape: either invocation_events, or tool_uses + tool_responses"
        },
    ),
]
"""ADK's ``IntermediateDataType`` (or null): the shape is told by its keys, as ADK's union
tells it, and a mix of both shapes is named as such."""


_NOT_PAYLOAD = frozenset({"thought", "thought_signature"})


def _dumps_empty(value: Any) -> bool:
    """Whether a part's field is nothing to send: ``""``, ``{}`` or ``[]`` once dumped without
    nulls (a model with no field set dumps as ``{}``). Read off the objects: dumping would
    build the Part serializer, which loading an EvalSet does not otherwise need."""
    if isinstance(value, BaseModel):
        return all(getattr(value, name) is None for name in type(value).model_fields)
    return value is None or value in ("", {}, [])


def _has_payload(content: genai_types.Content) -> bool:
    """Whether a user turn carries something to send (ADK refuses a message without parts)."""
    for part in content.parts or []:
        fields = type(part).model_fields
        if any(not _dumps_empty(getattr(part, f)) for f in fields if f not in _NOT_PAYLOAD):
            return True
    return False


class Invocation(EvalModel):
    """One user turn and everything the agent did to answer it."""

    invocation_id: str = ""
    user_content: genai_types.Content
    """What the user said."""
    final_response: genai_types.Content | None = None
    """The agent's final reply."""
    intermediate_data: Intermediate = None
    """Tool calls, responses and intermediate text."""
    creation_timestamp: _Timestamp = 0.0
    duration: _Seconds | None = None
    model_duration: _Seconds | None = None
    tool_duration: _Seconds | None = None
    rubrics: list[Any] | None = None
    app_details: Any | None = None

    @property
    def tool_calls(self) -> list[genai_types.FunctionCall]:
        """Every tool call in order, from either intermediate shape."""
        return invocation_tool_calls(self)

    @model_validator(mode="after")
    def _user_turn_can_be_sent(self, info: ValidationInfo) -> Invocation:
        if not _must_run(info):
            return self
        if not _has_payload(self.user_content):
            raise invalid(
                "empty_user_turn",
                "the user turn is empty (no text and no data in user_content.parts): "
                "ADK cannot send it, so this eval case cannot run",
                'Write what the user says, e.g. "user_content": {"role": "user", "parts": '
                '[{"text": "..."}]}, or remove this invocation',
            )
        if any(part.function_response for part in self.user_content.parts or []):
            raise invalid(
                "resume_user_turn",
                "the user turn is a function response (it resumes a long-running tool): "
                "ADK's eval sends it as a new message, and the call it answers has a new id "
                "in every run, so ADK drops it (without an id) or fails with 'Function call "
                "not found for function response ids' (with one); this eval case cannot run",
                "End the eval case before this turn (remove this invocation and the ones "
                "after it) and test the approval flow in code; `rec start` and `rec import` "
                "end such cases there themselves",
            )
        return self


class SessionInput(EvalModel):
    """How to create the session an eval case runs in."""

    model_config = ConfigDict(extra="allow")
    app_name: str
    user_id: str
    session_id: str | None = None
    """A fixed session id, when the case needs one."""
    state: dict[str, Any] = Field(default_factory=dict)
    """The session state at the start."""


class EvalCase(EvalModel):
    """One conversation to replay and score."""

    model_config = ConfigDict(extra="allow")
    eval_id: _Id
    conversation: list[Invocation] | None = None
    """The recorded turns (exactly one of this and ``conversation_scenario``)."""
    conversation_scenario: Any | None = None
    """A user-simulator scenario (ADK); rec carries it but does not run it."""
    session_input: SessionInput | None = None
    creation_timestamp: _Timestamp = 0.0
    rubrics: list[Any] | None = None
    final_session_state: dict[str, Any] | None = Field(default_factory=dict)
    """The session state expected at the end."""

    @model_validator(mode="after")
    def _exactly_one_conversation(self, info: ValidationInfo) -> EvalCase:
        if self.conversation is None and self.conversation_scenario is None:
            raise invalid(
                "conversation_count",
                "the eval case has neither conversation nor conversation_scenario "
                "(exactly one is required)",
                'Add "conversation": [{"user_content": ..., "final_response": ...}]',
            )
        if self.conversation is not None and self.conversation_scenario is not None:
            raise invalid(
                "conversation_count",
                "the eval case has both conversation and conversation_scenario "
                "(exactly one is allowed)",
                "Keep exactly one of them",
            )
        if _must_run(info) and self.conversation == []:
            raise invalid(
                "empty_conversation",
                "the eval case has no turns (its conversation is empty), so there is nothing "
                "to replay and every metric would be 'not evaluated'",
                "Add the turns of the conversation, or remove this eval case",
            )
        return self


class EvalSet(BaseModel):
    """A set of eval cases (top-level keys are snake_case only, unknown ones dropped, as ADK)."""

    model_config = ConfigDict(defer_build=True)

    eval_set_id: _Id
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase]
    creation_timestamp: _Timestamp = 0.0

    @model_validator(mode="after")
    def _unique_eval_ids(self) -> EvalSet:
        seen: dict[str, int] = {}
        for index, case in enumerate(self.eval_cases):
            if case.eval_id in seen:
                raise invalid(
                    "duplicate_eval_id",
                    "eval_cases[{index}] has the eval_id '{eval_id}' of eval_cases[{first}]: "
                    "results, reports and recordings are keyed by it",
                    "Give each eval case its own eval_id",
                    index=index,
                    eval_id=case.eval_id,
                    first=seen[case.eval_id],
                )
            seen[case.eval_id] = index
        return self


def invocation_tool_calls(invocation: Invocation) -> list[genai_types.FunctionCall]:
    """Every tool call of an invocation in order, from either intermediate shape."""
    data = invocation.intermediate_data
    if isinstance(data, IntermediateData):
        return list(data.tool_uses)
    return [part.function_call for part in _event_parts(data) if part.function_call]


def invocation_tool_responses(invocation: Invocation) -> list[genai_types.FunctionResponse]:
    """Every tool response of an invocation in order, from either intermediate shape."""
    data = invocation.intermediate_data
    if isinstance(data, IntermediateData):
        return list(data.tool_responses)
    return [part.function_response for part in _event_parts(data) if part.function_response]


def _event_parts(data: InvocationEvents | None) -> list[genai_types.Part]:
    """Every part of every event's content, in order (none without events)."""
    if data is None:
        return []
    return [
        part
        for event in data.invocation_events
        if event.content is not None
        for part in event.content.parts or []
    ]


def parse_evalset(data: bytes | str, *, path: str | Path = "<evalset>") -> EvalSet:
    """Validate EvalSet JSON as ADK does, reporting the real error (not ADK's legacy fallback).

    Unknown keys load where ADK loads them (``rec check`` reports them); what cannot run
    (an empty user turn) does not.

    Raises:
        InputError: not JSON, a legacy file or a cassette, or not a valid EvalSet; names
            the JSON path and the fix.
    """
    raw = parse_json(data, path=path)
    refuse_deep_nesting(data, path)
    if isinstance(raw, list):
        raise InputError(
            "this is a legacy ADK eval file (a list), not an EvalSet",
            path=path,
            where="(top level)",
            fix=f"Convert it with `rec import {path}`",
        )
    if isinstance(raw, dict) and "exchanges" in raw and "eval_cases" not in raw:
        raise InputError(
            "this is a cassette (a recording of model traffic), not an eval set",
            path=path,
            fix=f"Pass the eval set (NAME{EVALSET_SUFFIX}) or the folder that holds both; "
            "the recording beside an eval set is found by its name",
        )
    try:
        return EvalSet.model_validate(raw, context=RUNNABLE)
    except ValidationError as exc:
        problems = validation_problems(exc, path=path, model=EvalSet, document=raw)
        first = problems[0]
        more = f" (and {len(problems) - 1} more; run `rec check {path}`)" if problems[1:] else ""
        raise InputError(
            first.problem + more, path=path, where=first.where, fix=first.fix
        ) from None


def load_evalset(path: str | Path) -> EvalSet:
    """Read and validate an EvalSet file.

    Raises:
        InputError: missing, unreadable or invalid file.
    """
    file = Path(path)
    return parse_evalset(read_file(file, what="eval set"), path=file)


def dump_evalset(evalset: EvalSet) -> str:
    """Serialise as ADK does: snake_case, indent 2, UTF-8, nulls and defaults dropped."""
    return evalset.model_dump_json(indent=2, exclude_none=True, exclude_defaults=True) + "\n"


def save_evalset(evalset: EvalSet, path: str | Path) -> Path:
    """Write an EvalSet atomically."""
    from cassettes._atomic_write import write_atomic  # filelock: only when writing

    return write_atomic(path, dump_evalset(evalset))
