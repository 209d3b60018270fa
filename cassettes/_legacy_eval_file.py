"""ADK's two legacy eval file formats, as models (``rec check`` and ``rec import`` read them).

Both are a JSON list (``google/adk/evaluation/local_eval_sets_manager.py``,
``convert_eval_set_to_pydantic_schema``, and ``AgentEvaluator``'s legacy path):

- a flat list of turns ``[{query, expected_tool_use: [{tool_name, tool_input}], reference,
  expected_intermediate_agent_responses: [{author, text}]}]`` (one case);
- a list of cases ``[{name, data: [turns...], initial_session: {state, app_name, user_id}}]``.

ADK reads them key by key and ignores any other key; keys are snake_case only. One key that
real files carry is modelled because it matters: ``initial_state`` on a case (Google's
adk-samples have it). ADK ignores it, so that state never reaches the agent; ``rec check``
says so and ``rec import`` moves it into ``session_input.state``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "LEGACY_CASES",
    "LEGACY_TURNS",
    "LegacyCase",
    "LegacyResponse",
    "LegacySession",
    "LegacyToolUse",
    "LegacyTurn",
    "legacy_shape",
    "legacy_unknown_key",
]


class _LegacyModel(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)


class LegacyToolUse(_LegacyModel):
    """An expected tool call."""

    tool_name: str
    tool_input: dict[str, Any]
    """The call's arguments (``{}`` for none)."""


class LegacyResponse(_LegacyModel):
    """Text a sub-agent is expected to say before the final reply."""

    author: str
    text: str


class LegacyTurn(_LegacyModel):
    """One user turn and what the agent is expected to do."""

    query: str
    """What the user says."""
    expected_tool_use: list[LegacyToolUse] = Field(default_factory=list)
    reference: str | None = None
    """The expected final reply."""
    expected_intermediate_agent_responses: list[LegacyResponse] = Field(default_factory=list)


class LegacySession(_LegacyModel):
    """The session a legacy case starts in."""

    state: dict[str, Any] = Field(default_factory=dict)
    app_name: str = ""
    user_id: str = ""


class LegacyCase(_LegacyModel):
    """One case of the list-of-cases format."""

    name: str
    data: list[LegacyTurn]
    initial_session: LegacySession | None = None
    initial_state: dict[str, Any] | None = None
    """Not read by ADK (its state never reached the agent); ``rec import`` migrates it."""


_DEFERRED = ConfigDict(defer_build=True)  # built on first use, like the models
LEGACY_TURNS: TypeAdapter[list[LegacyTurn]] = TypeAdapter(list[LegacyTurn], config=_DEFERRED)
"""The flat list of turns."""
LEGACY_CASES: TypeAdapter[list[LegacyCase]] = TypeAdapter(list[LegacyCase], config=_DEFERRED)
"""The list of cases."""

_CASE_ONLY_KEYS = set(LegacyCase.model_fields) - set(LegacyTurn.model_fields)


def legacy_shape(document: list[Any]) -> Literal["legacy_turns", "legacy_cases"]:
    """Which legacy format a list is, by its first item (as ADK tells them apart)."""
    first = document[0] if document else None
    if isinstance(first, dict) and "query" not in first and set(first) & _CASE_ONLY_KEYS:
        return "legacy_cases"
    return "legacy_turns"


def legacy_unknown_key(
    model: type[BaseModel], key: str, loc: tuple[Any, ...], problem: str, fix: str
) -> tuple[str, str]:
    """What ADK does with an unknown key in a legacy file (for ``problems.validation_problems``)."""
    if key != key.lower():
        return f"{problem} (keys here are snake_case only; ADK silently ignores this one)", fix
    return f"{problem} (ADK silently ignores it)", fix
