"""Import an ADK session (JSON from ADK's API server or saved from ``adk web``) as eval cases.

The conversion is ADK's own (``EvaluationGenerator.convert_events_to_eval_invocations`` in
``google/adk/evaluation/evaluation_generator.py``), re-implemented over plain JSON so the
recorder does not need ADK installed: events are grouped by invocation id; the user event
gives ``user_content``; the last final-response event gives ``final_response`` (and keeps no
content in the event list); every other event with a call, a response, text, inline data or
grounding is kept with its author, usage metadata and model version.

The session's ``state`` is its state at the end. The state at the start is that state minus
every key an event changed (``actions.stateDelta``) and minus ``temp:`` keys.

A session is validated against :class:`AdkSession` (the parts of ADK's ``Session`` JSON the
conversion reads, in either casing; other keys are ignored as ADK adds them) before it is
converted, so a broken file is one error naming the place, not a traceback.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from cassettes import _genai_types as genai_types
from cassettes._errors import InputError
from cassettes._evalset import EvalCase, EvalSet, Invocation, InvocationEvent, InvocationEvents
from cassettes._extraction import RESUME_REASON, recorded_case
from cassettes._problems import first_problem, validation_problems

log = logging.getLogger(__name__)

__all__ = [
    "ABORTED_REASON",
    "EARLIER_TURNS_KEY",
    "AdkSession",
    "SessionActions",
    "SessionEvent",
    "evalset_from_sessions",
    "validated_sessions",
    "read_capture",
    "invocations_from_events",
    "resume_index",
    "is_adk_session",
    "load_sessions_file",
]


EARLIER_TURNS_KEY = "recEarlierTurns"
"""Key rec's capture plugin adds to a session that had turns before the recording saw it."""
_ABORTED = "INVOCATION_ABORTED"
"""``error_code`` of the event ADK appends to a turn the client aborted."""
ABORTED_REASON = (
    "the client aborted it ('Invocation was aborted by client.'): its model call never "
    "finished, so the recording cannot answer it"
)
"""Why an aborted turn is not written into an eval case."""


class _SessionModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", defer_build=True
    )


class SessionActions(_SessionModel):
    """What an event changed (``EventActions``)."""

    state_delta: dict[str, Any] = Field(default_factory=dict)
    skip_summarization: bool | None = None


class SessionEvent(_SessionModel):
    """One event of an ADK session (``google.adk.events.Event`` JSON), as far as it is read."""

    invocation_id: str | None = None
    author: str | None = None
    content: genai_types.Content | None = None
    actions: SessionActions | None = None
    timestamp: float | None = None
    partial: bool | None = None
    error_code: str | None = None
    long_running_tool_ids: list[str] | None = None
    grounding_metadata: genai_types.GroundingMetadata | None = None
    usage_metadata: genai_types.GenerateContentResponseUsageMetadata | None = None
    model_version: str | None = None


class AdkSession(_SessionModel):
    """An ADK ``Session`` (JSON from the API server, ``adk web`` or rec's capture plugin)."""

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[SessionEvent]
    initial_state: dict[str, Any] | None = None
    """The state before the first run (written by rec's capture plugin)."""
    rec_earlier_turns: int | None = None
    """Turns the session had before the recording saw it (written by rec's capture plugin)."""


def validated_sessions(
    sessions: list[dict[str, Any]], *, path: str | Path, where: str = ""
) -> list[dict[str, Any]]:
    """``sessions``, each checked against :class:`AdkSession`.

    Raises:
        InputError: a session does not have the shape ADK writes; names the place.
    """
    for index, session in enumerate(sessions):
        try:
            AdkSession.model_validate(session)
        except ValidationError as exc:
            problems = validation_problems(exc, path=path, model=AdkSession, document=session)
            error = first_problem(problems)
            if len(sessions) > 1:
                error.where = f"{where}[{index}].{error.where}".lstrip(".")
            raise error from None
    return sessions


_USER = "user"
_DEFAULT_AUTHOR = "agent"


def _get(mapping: Any, snake: str, default: Any = None) -> Any:
    """Read a field written in snake_case or camelCase (ADK writes either)."""
    if not isinstance(mapping, dict):
        return default
    if snake in mapping:
        return mapping[snake]
    head, *rest = snake.split("_")
    camel = head + "".join(word.title() for word in rest)
    return mapping.get(camel, default)


def is_adk_session(document: object) -> bool:
    """True for an ADK ``Session`` document (``id``, app name, user id and ``events``)."""
    return (
        isinstance(document, dict)
        and isinstance(document.get("events"), list)
        and _get(document, "app_name") is not None
        and _get(document, "user_id") is not None
    )


def _content(raw: Any) -> genai_types.Content | None:
    return genai_types.Content.model_validate(raw) if isinstance(raw, dict) else None


def _is_final_response(event: dict[str, Any], content: genai_types.Content | None) -> bool:
    """``google.adk.events.Event.is_final_response`` over the JSON form of an event."""
    actions = _get(event, "actions") or {}
    if _get(actions, "skip_summarization") or _get(event, "long_running_tool_ids"):
        return True
    parts = (content.parts or []) if content else []
    calls = any(p.function_call for p in parts)
    partial = bool(_get(event, "partial"))
    if _get(event, "error_code") and not partial and not calls:
        return True
    responses = any(p.function_response for p in parts)
    trailing_code_result = bool(parts) and parts[-1].code_execution_result is not None
    return not calls and not responses and not partial and not trailing_code_result


def _is_resume(event: dict[str, Any]) -> bool:
    """A user event answering a function call: a long-running tool being resumed."""
    if str(_get(event, "author") or "").lower() != _USER:
        return False
    content = _content(_get(event, "content"))
    return content is not None and any(p.function_response for p in content.parts or [])


def resume_index(events: list[dict[str, Any]]) -> int | None:
    """Where the user resumes a long-running tool with a function response, if anywhere.

    ADK folds the resumed run into the invocation it resumes (same invocation id), and
    its conversion then takes the function response for that invocation's user turn; an
    eval case cannot send it (:data:`cassettes._extraction.RESUME_REASON`).
    """
    return next((i for i, event in enumerate(events) if _is_resume(event)), None)


def aborted_index(events: list[dict[str, Any]]) -> int | None:
    """Where the first turn the client aborted starts (its user event), if any.

    ADK seals an invocation cancelled mid-flight with an ``INVOCATION_ABORTED`` event; the
    model call it was waiting for is not in the recording.
    """
    aborted = next(
        (_get(e, "invocation_id") for e in events if _get(e, "error_code") == _ABORTED), None
    )
    if aborted is None:
        return None
    return next(i for i, e in enumerate(events) if _get(e, "invocation_id") == aborted)


def _turns(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The events grouped by invocation id, one group per user turn.

    ``Runner.run_live`` keeps a whole Live session under one invocation id, each user
    message an event of it: every user message after an invocation's first starts a turn
    of its own (its id the invocation's with ``#N`` added), so a Live session of N turns
    is N invocations, as a session run with ``run_async`` is.
    """
    grouped: dict[str, list[dict[str, Any]]] = {}
    current: dict[str, str] = {}  # per invocation id, the key of its turn so far
    turns: dict[str, int] = {}  # per invocation id, its user messages so far
    for event in events:
        invocation_id = str(_get(event, "invocation_id") or "")
        if _is_user_message(event):
            count = turns[invocation_id] = turns.get(invocation_id, 0) + 1
            current[invocation_id] = invocation_id if count == 1 else f"{invocation_id}#{count - 1}"
        key = current.get(invocation_id, invocation_id)
        grouped.setdefault(key, []).append(event)
    return grouped


def _is_user_message(event: dict[str, Any]) -> bool:
    """A user event with something said in it (text or media, not a function response)."""
    if str(_get(event, "author") or "").lower() != _USER:
        return False
    content = _content(_get(event, "content"))
    return content is not None and any(
        p.text or p.inline_data or p.file_data for p in content.parts or []
    )


def invocations_from_events(events: list[dict[str, Any]]) -> list[Invocation]:
    """Convert session events (JSON) to eval invocations exactly as ADK does.

    Three differences: a Live session's turns are invocations of their own
    (:func:`_turns`; ADK's conversion would keep only the last turn's user message); a
    session in which the user resumes a long-running tool (a user event holding a function
    response) is converted up to that event, since ADK's eval cannot send such a turn
    (:func:`resume_index`); a session with a turn the client aborted is converted up to
    that turn (:func:`aborted_index`).
    """
    cuts = [i for i in (resume_index(events), aborted_index(events)) if i is not None]
    if cuts:
        events = events[: min(cuts)]
    return [_invocation(invocation_id, group) for invocation_id, group in _turns(events).items()]


_Kept = tuple[int, dict[str, Any], genai_types.Content | None]


def _invocation(invocation_id: str, group: list[dict[str, Any]]) -> Invocation:
    """One invocation from its events: the user's message, the final response and the
    events between them that carry something (a call, a response, text, media, grounding)."""
    user_content = genai_types.Content(parts=[])
    timestamp = 0.0
    final_response: genai_types.Content | None = None
    final_index: int | None = None
    kept: list[_Kept] = []
    for index, event in enumerate(group):
        author = str(_get(event, "author") or _DEFAULT_AUTHOR)
        content = _content(_get(event, "content"))
        grounding = _get(event, "grounding_metadata")
        if author.lower() == _USER:
            if content is not None:
                user_content = content
                timestamp = float(_get(event, "timestamp") or 0.0)
            continue
        if content is not None and content.parts:
            if _is_final_response(event, content):
                final_has_text = final_response is not None and any(
                    p.text for p in final_response.parts or []
                )
                if not final_has_text or any(p.text for p in content.parts):
                    final_response, final_index = content, index
            if grounding is not None or any(
                p.function_call or p.function_response or p.text or p.inline_data
                for p in content.parts
            ):
                kept.append((index, event, content))
        elif grounding is not None:
            kept.append((index, event, content))
    return Invocation(
        invocation_id=invocation_id,
        user_content=user_content,
        final_response=final_response,
        intermediate_data=InvocationEvents(
            invocation_events=[_invocation_event(each, final_index) for each in kept]
        ),
        creation_timestamp=timestamp,
    )


def _invocation_event(kept: _Kept, final_index: int | None) -> InvocationEvent:
    """An event as ADK keeps it between the user's message and the final response (the
    final response's own content left out, unless it also calls a tool)."""
    index, event, content = kept
    has_calls = content is not None and any(p.function_call for p in content.parts or [])
    usage = _get(event, "usage_metadata")
    grounding = _get(event, "grounding_metadata")
    return InvocationEvent(
        author=str(_get(event, "author") or _DEFAULT_AUTHOR),
        content=content if index != final_index or has_calls else None,
        grounding_metadata=(
            genai_types.GroundingMetadata.model_validate(grounding)
            if isinstance(grounding, dict)
            else None
        ),
        usage_metadata=(
            genai_types.GenerateContentResponseUsageMetadata.model_validate(usage)
            if isinstance(usage, dict)
            else None
        ),
        model_version=_get(event, "model_version"),
    )


def _states(session: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    final = {k: v for k, v in (_get(session, "state") or {}).items() if not k.startswith("temp:")}
    captured = _get(session, "initial_state")  # written by rec's ADK capture plugin
    if isinstance(captured, dict):
        return {k: v for k, v in captured.items() if not k.startswith("temp:")}, final
    changed: set[str] = set()
    for event in session.get("events") or []:
        changed.update((_get(_get(event, "actions") or {}, "state_delta") or {}).keys())
    initial = {k: v for k, v in final.items() if k not in changed}
    return initial, final


def evalset_from_sessions(sessions: list[dict[str, Any]], *, eval_set_id: str) -> EvalSet:
    """One eval case per ADK session that holds a turn; ``eval_id`` is the session id made
    ADK-safe. A session with no turn (opened, never used) has nothing to replay: left out."""
    cases: list[EvalCase] = []
    taken: set[str] = set()
    for session in sessions:
        events = list(session.get("events") or [])
        if not _replayable(session, events):
            continue
        invocations = invocations_from_events(events)
        if not invocations:
            continue
        if resume_index(events) is not None:
            log.warning(
                "session %s resumes a long-running tool with a function response; %s, so "
                "its eval case ends before that turn",
                session.get("id"),
                RESUME_REASON,
            )
        initial, final = _states(session)
        cases.append(
            recorded_case(
                invocations,
                eval_id=_unique_id(str(session.get("id", "")), taken),
                app_name=str(_get(session, "app_name")),
                user_id=str(_get(session, "user_id")),
                state=initial,
                final_session_state=final,
            )
        )
    return EvalSet(eval_set_id=eval_set_id, name=eval_set_id, eval_cases=cases)


def _replayable(session: dict[str, Any], events: list[dict[str, Any]]) -> bool:
    """Whether the session can be written, saying why not (its first turns ran before the
    recording started); a turn the client aborted is said, and the case ends before it."""
    earlier = session.get(EARLIER_TURNS_KEY)
    if earlier:
        log.warning(
            "session %s is not written: its first %d turn(s) ran before this recording "
            "started (a saved session resumed in adk web), so their model calls are not "
            "in the recording and its eval case cannot replay; to record it, start a "
            "new session after `rec start`",
            session.get("id"),
            earlier,
        )
        return False
    aborted = aborted_index(events)
    if aborted is not None:
        kept = sum(1 for e in events[:aborted] if str(_get(e, "author")).lower() == _USER)
        log.warning(
            "session %s: turn %d %s; %s",
            session.get("id"),
            kept + 1,
            ABORTED_REASON,
            "its eval case ends before that turn (re-record the turn to keep it)"
            if kept
            else "the session is not written (re-record it without stopping the reply)",
        )
    return True


def _unique_id(session_id: str, taken: set[str]) -> str:
    """The session id made ADK-safe, and numbered when another case took it."""
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in session_id)
    eval_id, n = base or "session", 2
    while eval_id in taken:
        eval_id, n = f"{base}_{n}", n + 1
    taken.add(eval_id)
    return eval_id


def load_sessions_file(path: Path, document: object) -> list[dict[str, Any]]:
    """The sessions in a JSON document: one session, a list of them, or ``{"sessions": [...]}``.

    Raises:
        InputError: the document holds no ADK session, or a session is malformed.
    """
    wrapped = ""
    if isinstance(document, dict) and isinstance(document.get("sessions"), list):
        document, wrapped = document["sessions"], "sessions"
    items = document if isinstance(document, list) else [document]
    sessions = [item for item in items if isinstance(item, dict) and is_adk_session(item)]
    if not sessions or len(sessions) != len(items):
        raise InputError(
            "not an ADK session (expected id, appName, userId and events)",
            path=path,
            where="(top level)",
            fix="Save the session with `curl $ADK/apps/APP/users/USER/sessions/ID`, "
            "or pass an ADK session database",
        )
    return validated_sessions(sessions, path=path, where=wrapped)


def read_capture(path: Path) -> list[dict[str, Any]]:
    """The sessions in an ADK capture file (JSON lines), the last snapshot of each.

    A torn last line (the app was killed mid-write) is skipped.
    """
    latest: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            document = json.loads(line)
        except ValueError:
            continue
        if isinstance(document, dict) and is_adk_session(document):
            try:
                AdkSession.model_validate(document)
            except ValidationError:
                continue  # not a session the plugin wrote whole
            latest[str(document.get("id"))] = document  # dicts keep first-insertion order
    return list(latest.values())
