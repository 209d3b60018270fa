"""Extract conversations (user turns, tool calls, tool responses, final replies) from model traffic.

Pure functions over recorded :class:`~cassettes._cassette.Exchange` lists. Each successful
``:generateContent`` / ``:streamGenerateContent`` exchange (Gemini API or Vertex path), and
each OpenAI chat completion or Anthropic message (``cassettes._provider_bodies``), is a
*model turn*. Model turns are threaded into conversations and each conversation is split
into invocations the way ADK records them
(``EvaluationGenerator.convert_events_to_eval_invocations``):

- **Threading** (``_conversations.py``). A request continues the conversation whose last
  request contents plus response it extends; parallel branches and loop iterations continue
  their own agent's last turn; a sub-agent's *rewritten* history ("For context:" turns)
  joins the conversation whose genuine user turns it repeats; a transcript-only request
  (``include_contents='none'``) joins the conversation it quotes; a workflow node fed by
  the node before it joins that node's conversation. A conversation an outstanding call
  ran (an AgentTool's inner Runner) is folded into its parent (:attr:`Conversation.nested`)
  and, as in ADK, is no part of the parent's events.
- **Invocations** start at genuine user turns: user-role content that is not a function
  response and not ADK's "For context:" rewrite of another agent's turn. A user turn no
  model call answered (a ``before_model_callback`` guardrail, a ``before_agent_callback``)
  is rebuilt from the next request's history, which still carries it and its reply.
- **Events** per invocation, as ADK writes them, in the order the responses ended (ADK
  appends parallel branches' events as they finish): one per model response (author = the
  agent named in the system instruction, else ``default_author``; usage metadata and model
  version kept) and one per batch of tool responses (taken from the same agent's next
  request's ``functionResponse`` parts, or from ADK's "For context" transcript for a
  transfer). The final response (the last model text without function calls; SSE chunks
  merged) goes to ``final_response`` and its event keeps no content, exactly like ADK.
- A long-running tool resumed with a function response (a request re-sending the call
  with another response) ends the conversation before that turn, with a warning
  (:data:`RESUME_REASON`).
"""

from __future__ import annotations

import ast
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from cassettes import _genai_types as genai_types
from cassettes._built_models import built
from cassettes._cassette import Exchange
from cassettes._conversations import Thread, Turn, is_genuine_user_content, thread_turns
from cassettes._errors import InputError
from cassettes._evalset import (
    EvalCase,
    EvalSet,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    SessionInput,
)
from cassettes._gc_pause import gc_paused
from cassettes._live import LiveRecording
from cassettes._live_extraction import first_live_user_text, live_eval_cases

__all__ = [
    "Conversation",
    "content_text",
    "evalset_from_exchanges",
    "extract_conversations",
    "is_genuine_user_content",
    "readable_id",
    "unique_id",
    "recorded_case",
]

log = logging.getLogger(__name__)

RESUME_REASON = (
    "ADK's eval cannot replay a user turn that is a function response (it resumes a "
    "long-running tool by the call's id, and the id is new in every run: ADK drops the "
    "response or fails with 'Function call not found for function response ids')"
)
"""Why a long-running tool's resume is not written into an eval case."""

_QUOTE = (
    r"(?:\n?<<<BEGIN_QUOTED_AGENT_CONTENT>>>\n)?(?P<value>.*?)(?:\n<<<END_QUOTED_AGENT_CONTENT>>>)?"
)
_SAID = re.compile(r"^\[(?P<agent>[^\]]+)\] said:\s?" + _QUOTE + r"$", re.DOTALL)
_TOOL_RESULT = re.compile(
    r"^\[(?P<agent>[^\]]+)\] `(?P<name>[^`]+)` tool returned result:\s?" + _QUOTE + r"$",
    re.DOTALL,
)


@dataclass
class Conversation:
    """One session's invocations, threaded out of a recording."""

    invocations: list[Invocation] = field(default_factory=list)
    """The invocations in order, in ADK's ``invocation_events`` shape."""
    exchange_ids: list[int] = field(default_factory=list)
    """Ids of the model exchanges that make up this conversation, in order."""
    agents: list[str] = field(default_factory=list)
    """Agent names seen in the system instructions, in order of first appearance."""
    model_calls: list[list[Exchange]] = field(default_factory=list)
    """Per invocation, the exchange behind each of its model events, in event order
    (``rec show`` reads latency and streaming from them)."""
    nested: list[Conversation] = field(default_factory=list)
    """Conversations this one's tool calls ran (an AgentTool's inner Runner, in its own
    session): not events of this conversation, exactly as ADK keeps them out of the
    parent session. Replay reads their tool calls (the inner agent runs again)."""

    @property
    def first_user_text(self) -> str:
        """The text of the first user turn ('' when there is none)."""
        if not self.invocations:
            return ""
        return content_text(self.invocations[0].user_content)


# -- invocations ------------------------------------------------------------------------------


def _has_text(content: genai_types.Content | None) -> bool:
    return content is not None and any(p.text for p in content.parts or [])


def _tool_responses(
    following: Turn | None, calls: list[genai_types.FunctionCall]
) -> list[genai_types.FunctionResponse]:
    """The responses to ``calls``, read from the request that followed them."""
    if following is None or not calls:
        return []
    wanted = [call.name for call in calls]
    responses: list[genai_types.FunctionResponse] = []
    for content in reversed(following.contents):
        role = content.get("role") or "user"
        if role != "user":
            break
        found: list[genai_types.FunctionResponse] = []
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                continue
            raw = part.get("functionResponse") or part.get("function_response")
            if isinstance(raw, dict):
                response = genai_types.FunctionResponse.model_validate(raw)
                response.id = None
                found.append(response)
            elif isinstance(part.get("text"), str):
                parsed = _parse_tool_result(part["text"])
                if parsed is not None and parsed.name in wanted:
                    found.append(parsed)
        responses[:0] = found
        if is_genuine_user_content(content):
            break
    names = set(wanted)
    return [r for r in responses if r.name in names]


def _parse_tool_result(text: str) -> genai_types.FunctionResponse | None:
    match = _TOOL_RESULT.match(text.strip())
    if not match:
        return None
    raw = match.group("value").strip()
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = {"result": raw}
    if not isinstance(value, dict):
        value = {"result": value}
    return genai_types.FunctionResponse(name=match.group("name"), response=value)


def _clean_calls(content: genai_types.Content) -> genai_types.Content:
    """Drop call ids (ADK strips its own); keep args exactly as the model sent them.

    ADK's scorer compares args with ``==``, and ADK records what the model sent: ``{}``
    when the model sent ``"args": {}``, nothing when it sent no ``args``. Normalising
    either way would make a faithful replay fail its own recording. Without ids it is
    ``content`` itself: each turn's response goes into one event (or the final response).
    """
    parts = content.parts or []
    if not any(part.function_call and part.function_call.id is not None for part in parts):
        return content
    cleaned = [
        part.model_copy(
            update={"function_call": part.function_call.model_copy(update={"id": None})}
        )
        if part.function_call
        else part
        for part in parts
    ]
    return content.model_copy(update={"parts": cleaned})


def _timestamp(exchange: Exchange) -> float:
    try:
        return datetime.fromisoformat(exchange.recorded_at).timestamp()
    except ValueError:
        return 0.0


def _key(turn: Turn) -> tuple[int, str]:
    return len(turn.user_turns), turn.user_turns[-1] if turn.user_turns else ""


def _groups(turns: list[Turn]) -> list[list[int]]:
    """Turn indexes per invocation. A request with no genuine user turn (an
    ``include_contents='none'`` agent) belongs to the invocation it runs in."""
    groups: list[list[int]] = []
    current: tuple[int, str] | None = None
    for index, turn in enumerate(turns):
        key = _key(turn) if turn.user_turns or current is None else current
        if current is None or key != current:
            groups.append([])
            current = key
        groups[-1].append(index)
    return groups


def _answer(
    contents: list[dict[str, Any]], start: int, stop: int, default_author: str
) -> tuple[str, genai_types.Content] | None:
    """The reply between two user turns of a later request (a turn no model call answered:
    a callback's content, kept by ADK in the history): (author, content) or None."""
    found: tuple[str, genai_types.Content] | None = None
    for raw in contents[start:stop]:
        content = genai_types.Content.model_validate(raw)
        parts = content.parts or []
        if any(p.function_call or p.function_response for p in parts):
            found = None
            continue
        if (content.role or "user") == "model" and _has_text(content):
            found = (default_author, content)
            continue
        for part in parts:
            said = _SAID.match((part.text or "").strip())
            if said:
                text = genai_types.Part(text=said.group("value").strip())
                found = (said.group("agent"), genai_types.Content(role="model", parts=[text]))
    return found


def _genuine_indexes(turn: Turn) -> list[int]:
    return turn.genuine


def _callback_invocations(turn: Turn, known: int, default_author: str) -> list[Invocation]:
    """Invocations of the user turns before ``turn``'s own that no model call answered
    (a ``before_model_callback`` guardrail, a ``before_agent_callback``): ``turn``'s
    history still carries each of them and its reply."""
    indexes = _genuine_indexes(turn)
    out: list[Invocation] = []
    for number in range(known, len(indexes) - 1):
        at, following = indexes[number], indexes[number + 1]
        answer = _answer(turn.contents, at + 1, following, turn.agent or default_author)
        author = answer[0] if answer else turn.agent or default_author
        out.append(
            Invocation(
                invocation_id=f"e-{turn.exchange.id}-{number}",
                user_content=genai_types.Content.model_validate(turn.contents[at]),
                final_response=answer[1] if answer else None,
                intermediate_data=InvocationEvents(
                    invocation_events=[InvocationEvent(author=author)] if answer else []
                ),
                creation_timestamp=_timestamp(turn.exchange),
            )
        )
    return out


def _next_of_agent(turns: list[Turn], group: list[int]) -> dict[int, int]:
    """For each turn of ``group`` (ascending indexes), the next turn of the same agent in
    it, where there is one (one pass: a long invocation's turns are not rescanned)."""
    found: dict[int, int] = {}
    last: dict[object, int] = {}
    for i in reversed(group):
        agent = turns[i].agent
        if agent in last:
            found[i] = last[agent]
        last[agent] = i
    return found


def _following(turns: list[Turn], next_of_agent: dict[int, int], i: int) -> int | None:
    """The index of the request that carries the responses to turn ``i``'s calls: the same
    agent's next request in the invocation (parallel branches interleave), else the next
    request."""
    same = next_of_agent.get(i)
    if same is not None:
        return same
    return i + 1 if i + 1 < len(turns) else None


_GIVEN_CALL = ("author", "content", "usage_metadata", "model_version")
_GIVEN_RESPONSES = ("author", "content")


def _event(
    given: tuple[str, ...],
    author: str,
    content: genai_types.Content | None,
    usage: genai_types.GenerateContentResponseUsageMetadata | None = None,
    model_version: str | None = None,
) -> InvocationEvent:
    """``InvocationEvent(**{name: ... for name in given})``: each value is already of its
    field's type (a Content, a turn's usage, a str or None), so it is not validated again;
    ``given`` names the fields set, as those keyword arguments would."""
    return built(
        InvocationEvent,
        {
            "author": author,
            "content": content,
            "grounding_metadata": None,
            "usage_metadata": usage,
            "model_version": model_version,
        },
        given,
    )


def _build_invocations(
    turns: list[Turn], default_author: str
) -> tuple[list[Invocation], list[list[Exchange]]]:
    """One invocation per group of turns answering one user turn, and the exchanges behind
    each (none behind an invocation a callback answered without a model call)."""
    turns = _before_resume(turns)
    started = [_timestamp(turn.exchange) for turn in turns]  # each parsed once
    invocations: list[Invocation] = []
    behind: list[list[Exchange]] = []
    known = 0
    for group in _groups(turns):
        first = turns[group[0]]
        if not first.user_turns:
            continue  # a transcript-only request that no conversation claimed
        _read_back_reply(invocations, first, known, default_author)
        for extra in _callback_invocations(first, known, first.agent or default_author):
            invocations.append(extra)
            behind.append([])
        known = len(first.user_turns)
        built_group = _GroupEvents(turns, started, default_author)
        built_group.add(group)
        user = first.last_user_content or {"role": "user", "parts": []}
        invocations.append(
            Invocation(
                invocation_id=f"e-{first.exchange.id}",
                user_content=genai_types.Content.model_validate(user),
                final_response=built_group.final_response,
                intermediate_data=InvocationEvents(invocation_events=built_group.in_order()),
                creation_timestamp=started[group[0]],
            )
        )
        behind.append(built_group.calls)
    return invocations, behind


def _before_resume(turns: list[Turn]) -> list[Turn]:
    """The turns before the first that resumes a long-running tool (rec cannot replay it)."""
    resumed = next((i for i, t in enumerate(turns) if t.resumes), None)
    if resumed is None:
        return turns
    log.warning(
        "a conversation resumes a long-running tool with a function response "
        "(exchange %s); %s, so its eval case ends before that turn",
        turns[resumed].exchange.id,
        RESUME_REASON,
    )
    return turns[:resumed]


def _read_back_reply(
    invocations: list[Invocation], first: Turn, known: int, default_author: str
) -> None:
    """Give the last invocation the reply no model call made (a sub-agent's callback),
    read back from the history of the request that starts the next group."""
    genuine = _genuine_indexes(first)
    if not invocations or invocations[-1].final_response is not None:
        return
    if not 0 < known < len(genuine):
        return
    answer = _answer(first.contents, genuine[known - 1] + 1, genuine[known], default_author)
    if answer is not None:
        invocations[-1].final_response = answer[1]


class _GroupEvents:
    """The events of one invocation, each with the time ADK appended it, as near as traffic
    shows: a model response's when it ended, a batch of tool responses' when the request
    carrying it began (ADK appends them, then calls the model again). A parallel branch
    whose tool is slow lets another branch's events in between, as in ADK's session."""

    def __init__(self, turns: list[Turn], started: list[float], default_author: str) -> None:
        self.turns, self.started, self.default_author = turns, started, default_author
        self.events: list[tuple[float, InvocationEvent]] = []
        self.final_response: genai_types.Content | None = None
        self.calls: list[Exchange] = []

    def add(self, group: list[int]) -> None:
        """Add the events of the group's turns, in the order they ended."""
        turns, started = self.turns, self.started
        ends = {i: started[i] + turns[i].exchange.duration_ms / 1000 for i in group}
        indexes = sorted(group, key=lambda i: (ends[i], turns[i].exchange.id))
        next_of_agent = _next_of_agent(turns, group)
        final_index = next(
            (i for i in reversed(indexes) if _has_text(turns[i].response) and not turns[i].calls()),
            None,
        )
        for i in indexes:
            turn = turns[i]
            if turn.response is None:
                continue
            author = turn.agent or self.default_author
            content = _clean_calls(turn.response)
            if i == final_index:
                self.final_response = content
            self.calls.append(turn.exchange)
            shown = None if i == final_index else content
            event = _event(_GIVEN_CALL, author, shown, turn.usage, turn.model_version)
            self.events.append((ends[i], event))
            self._add_responses(i, author, ends[i], _following(turns, next_of_agent, i))

    def _add_responses(self, i: int, author: str, ended: float, after: int | None) -> None:
        """The tool responses to turn ``i``'s calls, read from the request ``after`` it."""
        following = None if after is None else self.turns[after]
        # The calls' names are what is read: the response's own (``content`` is it, or
        # its copy without call ids).
        responses = _tool_responses(following, self.turns[i].calls())
        if after is None or not responses:
            return
        answered = genai_types.Content(
            role="user", parts=[genai_types.Part(function_response=r) for r in responses]
        )
        event = _event(_GIVEN_RESPONSES, author, answered)
        self.events.append((max(ended, self.started[after]), event))

    def in_order(self) -> list[InvocationEvent]:
        """The events by time; ties keep the order built."""
        return [e for _, e in sorted(self.events, key=lambda keyed: keyed[0])]


def extract_conversations(
    exchanges: Iterable[Exchange], *, default_author: str = "model"
) -> list[Conversation]:
    """Thread a recording's model exchanges into conversations of ADK-shaped invocations.

    Args:
        exchanges: a cassette's exchanges in arrival order; anything that is not a
            successful ``generateContent``/``streamGenerateContent`` call is ignored.
        default_author: the event author when no ADK agent name is found in the system
            instruction (plain google-genai programs).

    Returns:
        The conversations in order of their first request.
    """
    items = list(exchanges)
    try:
        # Many small acyclic trees (turns, contents, invocations): collections only slow it.
        with gc_paused():
            return [_conversation(thread, default_author) for thread in thread_turns(items)]
    except ValidationError as exc:
        raise _unreadable(items, exc, default_author) from None


def _unreadable(items: list[Exchange], whole: ValidationError, default_author: str) -> InputError:
    """The error for model calls google-genai's types refuse, naming the first exchange
    that is refused on its own (``where`` is its place in ``items``, as ``exchanges[i]``)."""
    where, exc = "exchanges", whole
    for index, exchange in enumerate(items):
        try:
            for thread in thread_turns([exchange]):
                _conversation(thread, default_author)
        except ValidationError as one:
            where, exc = f"exchanges[{index}]", one
            break
    error = exc.errors()[0]
    place = ".".join(str(part) for part in error["loc"])
    return InputError(
        f"the model call does not read as Gemini content ({exc.title} {place}: "
        f"{error['msg']}), so rec cannot read it as a turn of a conversation",
        where=where,
        fix="Fix that part of the request or response body, or re-record the exchange "
        "(`rec check` lists every such exchange)",
    )


def _conversation(thread: Thread, default_author: str) -> Conversation:
    agents: list[str] = []
    for turn in thread.turns:
        if turn.agent and turn.agent not in agents:
            agents.append(turn.agent)
    invocations, behind = _build_invocations(thread.turns, default_author)
    return Conversation(
        invocations=invocations,
        model_calls=behind,
        exchange_ids=[t.exchange.id for t in thread.turns],
        agents=agents,
        nested=[_conversation(inner, default_author) for inner in thread.nested],
    )


def content_text(content: genai_types.Content | None) -> str:
    """The text parts of ``content`` joined by spaces ('' for none)."""
    if content is None:
        return ""
    return " ".join(p.text for p in content.parts or [] if p.text)


def readable_id(text: str, taken: set[str], *, fallback: str = "case") -> str:
    """The lowercase words of ``text`` joined by ``_`` (at most 40 characters), or
    ``fallback`` when it has none; suffixed ``_2``, ``_3``... to be unique in ``taken``,
    which it joins."""
    words = re.findall(r"[a-zA-Z0-9]+", text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}_{word}" if slug else word
        if len(candidate) > 40:
            break
        slug = candidate
    return unique_id(slug or (words[0][:40] if words else fallback), taken)


def unique_id(base: str, taken: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``... the first not in ``taken``, which it joins."""
    unique, n = base, 2
    while unique in taken:
        unique, n = f"{base}_{n}", n + 1
    taken.add(unique)
    return unique


def recorded_case(
    invocations: list[Invocation],
    *,
    eval_id: str,
    app_name: str,
    user_id: str,
    state: dict[str, Any],
    final_session_state: dict[str, Any] | None = None,
) -> EvalCase:
    """The eval case of a recorded session (model traffic, a Live session, an ADK session):
    its invocations, the session's app, user and state at the start (and at the end, when
    known), created when its first invocation was."""
    return EvalCase(
        eval_id=eval_id,
        conversation=invocations,
        session_input=SessionInput(app_name=app_name, user_id=user_id, state=state),
        final_session_state=final_session_state if final_session_state is not None else {},
        creation_timestamp=invocations[0].creation_timestamp,
    )


def evalset_from_exchanges(
    exchanges: Iterable[Exchange],
    *,
    eval_set_id: str,
    app_name: str = "rec",
    user_id: str = "user",
    initial_state: dict[str, Any] | None = None,
    live: LiveRecording | None = None,
) -> EvalSet:
    """Build an ADK EvalSet with one eval case per conversation in the exchanges, then one
    per Gemini Live session in ``live`` (:mod:`cassettes._live_extraction`).

    Each case's ``eval_id`` is a readable slug of its first user turn (``[a-zA-Z0-9_]+``,
    unique within the set); ``session_input`` carries ``app_name``, ``user_id`` and
    ``initial_state``. Event authors default to ``app_name`` when no agent name is known.
    """
    with gc_paused():  # the cases are as acyclic as the conversations they are built from
        return _evalset(exchanges, eval_set_id, app_name, user_id, initial_state, live)


def _evalset(
    exchanges: Iterable[Exchange],
    eval_set_id: str,
    app_name: str,
    user_id: str,
    initial_state: dict[str, Any] | None,
    live: LiveRecording | None,
) -> EvalSet:
    taken: set[str] = set()
    cases: list[EvalCase] = []
    for conversation in extract_conversations(exchanges, default_author=app_name):
        if conversation.invocations:
            cases.append(
                recorded_case(
                    conversation.invocations,
                    eval_id=readable_id(conversation.first_user_text, taken),
                    app_name=app_name,
                    user_id=user_id,
                    state=dict(initial_state or {}),
                )
            )
    for session, invocations in live_eval_cases(live, default_author=app_name):
        cases.append(
            recorded_case(
                invocations,
                eval_id=readable_id(first_live_user_text(session), taken),
                app_name=app_name,
                user_id=user_id,
                state=dict(initial_state or {}),
            )
        )
    return EvalSet(eval_set_id=eval_set_id, name=eval_set_id, eval_cases=cases)
