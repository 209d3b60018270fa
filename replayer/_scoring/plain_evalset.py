"""EvalSets read for scoring without pydantic, when the quick check finds the file clean.

``rec score A B`` runs in loops and pre-commit hooks, like ``rec check``, and importing
pydantic and building the EvalSet models costs several times a bare ``python``. A
document that :func:`cassettes._evalset_quick.certainly_clean` accepts loads through the
models without a problem and without any value changed, so reading the few fields scoring
and the console report use straight from the parsed JSON gives what the models would hold.
Anything else (a file the quick check is not sure of, a conversation scenario) answers
None, and the caller loads the models (:func:`cassettes._evalset.load_evalset`), which
report each problem.

The classes answer the Protocols of :mod:`replayer._scoring.views` as the models do, so the
scorers and the console report read either; ``tests/replayer/test_plain_scoring.py``
compares both paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from cassettes._evalset_quick import clean_evalset_document
from cassettes._secret_shapes import mask, mask_json

__all__ = [
    "PlainContent",
    "PlainEvalCase",
    "PlainEvalSet",
    "PlainFunctionCall",
    "PlainInvocation",
    "PlainPart",
    "read_plain_evalset",
]


# NamedTuples, not dataclasses: making a dataclass costs a fraction of a millisecond
# each, and these exist to start fast. They are read-only, as scoring and reports read them.


class PlainFunctionCall(NamedTuple):
    """A tool call's name and arguments."""

    name: str | None
    args: dict[str, Any] | None

    def masked(self) -> PlainFunctionCall:
        """Every string masked, as the reports mask a result."""
        return PlainFunctionCall(
            None if self.name is None else mask(self.name),
            None if self.args is None else mask_json(self.args),
        )


class PlainPart(NamedTuple):
    """A part's text (the only field of a part scoring reads)."""

    text: str | None


class PlainContent(NamedTuple):
    """A message's parts."""

    parts: list[PlainPart] | None

    def masked(self) -> PlainContent:
        """Every text masked."""
        if self.parts is None:
            return self
        return PlainContent(
            [PlainPart(None if p.text is None else mask(p.text)) for p in self.parts]
        )


class PlainInvocation(NamedTuple):
    """One turn: what the user said, the final reply and the tool calls between."""

    user_content: PlainContent
    final_response: PlainContent | None
    tool_calls: list[PlainFunctionCall]

    def masked(self) -> PlainInvocation:
        """Every string masked, as the reports mask a result."""
        return PlainInvocation(
            self.user_content.masked(),
            None if self.final_response is None else self.final_response.masked(),
            [call.masked() for call in self.tool_calls],
        )


class PlainSessionInput(NamedTuple):
    """The session a case starts in (only the user scoring reports)."""

    user_id: str


class PlainEvalCase(NamedTuple):
    """One eval case with its conversation (never a scenario: those take the models)."""

    eval_id: str
    conversation: list[PlainInvocation]
    session_input: PlainSessionInput | None
    final_session_state: dict[str, Any] | None


class PlainEvalSet(NamedTuple):
    """An eval set's id and cases."""

    eval_set_id: str
    eval_cases: list[PlainEvalCase]


def _get(data: dict[str, Any], snake: str, camel: str | None = None) -> Any:
    """A field by either spelling (a clean document uses one)."""
    if snake in data:
        return data[snake]
    return data.get(camel) if camel else None


def _content(data: dict[str, Any] | None) -> PlainContent | None:
    if data is None:
        return None
    parts = _get(data, "parts")
    return PlainContent(None if parts is None else [PlainPart(_get(p, "text")) for p in parts])


def _call(data: dict[str, Any]) -> PlainFunctionCall:
    return PlainFunctionCall(_get(data, "name"), _get(data, "args"))


def _tool_calls(data: dict[str, Any] | None) -> list[PlainFunctionCall]:
    """``invocation_tool_calls``: ``intermediate_data`` is InvocationEvents when it names
    their field (the models' discriminator), else IntermediateData."""
    if data is None:
        return []
    if "invocation_events" in data or "invocationEvents" in data:
        calls = []
        for event in _get(data, "invocation_events", "invocationEvents") or []:
            content = _get(event, "content")
            for part in (_get(content, "parts") or []) if content else []:
                call = _get(part, "function_call", "functionCall")
                if call:
                    calls.append(_call(call))
        return calls
    return [_call(call) for call in _get(data, "tool_uses", "toolUses") or []]


def _invocation(data: dict[str, Any]) -> PlainInvocation:
    user = _content(_get(data, "user_content", "userContent"))
    assert user is not None  # required: the quick check saw it
    return PlainInvocation(
        user,
        _content(_get(data, "final_response", "finalResponse")),
        _tool_calls(_get(data, "intermediate_data", "intermediateData")),
    )


def _case(data: dict[str, Any]) -> PlainEvalCase:
    session = _get(data, "session_input", "sessionInput")
    return PlainEvalCase(
        eval_id=_get(data, "eval_id", "evalId"),
        conversation=[_invocation(i) for i in _get(data, "conversation")],
        session_input=None
        if session is None
        else PlainSessionInput(_get(session, "user_id", "userId")),
        final_session_state=_get(data, "final_session_state", "finalSessionState"),
    )


def read_plain_evalset(path: str | Path) -> PlainEvalSet | None:
    """The eval set at ``path`` if the quick check finds it certainly clean, else None
    (the caller then loads the models, which name every problem)."""
    file = Path(path)
    document = clean_evalset_document(file)
    if document is None:
        return None
    return PlainEvalSet(
        eval_set_id=document["eval_set_id"],
        eval_cases=[_case(case) for case in document["eval_cases"]],
    )
