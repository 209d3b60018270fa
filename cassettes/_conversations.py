"""Read model exchanges and thread them into conversations (internal to ``extraction``).

OpenAI and Anthropic model calls are read in Gemini's terms (``cassettes._provider_bodies``).

A request continues the conversation whose last request contents plus response it extends:
each content gets a canonical form (casing, call ids and thought signatures removed), a
key rolled over the request's contents (each distinct prefix numbered once) is looked up in
a dict of conversation tips, so a request costs time linear in its own length. Each
conversation has one tip at a time, taken first come first served, so concurrent sessions
with identical openings still separate.
When no tip matches:

- a request that extends the last turn of the *same agent* in a conversation continues it
  (a ParallelAgent's branches and a LoopAgent's iterations interleave in one session);
- a sub-agent's rewritten history ("For context:" turns) joins the conversation whose
  genuine user turns it repeats, as does the first request of an agent that has not spoken
  yet in that conversation's current invocation (a parallel branch opening with the same
  user turn);
- a request that re-sends an agent's function call with another function response resumes
  a long-running tool (:attr:`Turn.resumes`);
- a request with no genuine user turn at all (``include_contents='none'``: only ADK's
  "For context:" transcript) joins the conversation whose latest reply it quotes;
- a request whose only content is another conversation's last reply (an ADK 2 workflow
  graph's node fed by the node before it) runs in that conversation's invocation. A
  workflow's nodes send no history, so a later user turn of the same session cannot be told
  from a new session: traffic gives one case per user turn there (the capture plugin gives
  the session).

Afterwards a conversation that starts while another's function call is outstanding, with a
user turn made of that call's arguments, and ends before the call's response (an
AgentTool's inner Runner) is folded into its parent as :attr:`Thread.nested`: ADK keeps
that inner session out of the parent's events too.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import pydantic_core
from pydantic import TypeAdapter

from cassettes import _genai_types as genai_types
from cassettes._cassette import Exchange, JsonBody, SseBody
from cassettes._model_url import GENERATE_METHODS, model_call
from cassettes._provider_bodies import gemini_request, gemini_response

__all__ = [
    "Thread",
    "Threading",
    "Turn",
    "agent_name",
    "calls_of",
    "is_genuine_user_content",
    "model_turn",
    "thread_turns",
]

_AGENT_NAME = re.compile(r'Your internal name is "([^"]+)"')
_FOR_CONTEXT = "For context:"
_SYSTEM_INSTRUCTION_IN_CONTENTS = "<<<BEGIN_SYSTEM_INSTRUCTION>>>"


@dataclass(slots=True)
class Turn:
    """One successful model exchange."""

    exchange: Exchange
    contents: list[dict[str, Any]]
    response: genai_types.Content | None
    chunk_contents: list[dict[str, Any]]
    usage: genai_types.GenerateContentResponseUsageMetadata | None
    model_version: str | None
    agent: str | None
    canonical: list[str]
    """Canonical form of each request content (for hashing)."""
    user_turns: list[str]
    """Canonical keys of the genuine user contents, in order."""
    last_user_content: dict[str, Any] | None
    genuine: list[int]
    """Indexes of the genuine user contents in ``contents``."""
    resumes: bool = False
    """This request answers an earlier function call again: the user resumed a
    long-running tool with a function response (set while threading)."""
    reply_key: int = 0
    """The prefix key of this request's contents plus its merged response: what a request
    continuing it starts with (0 when there is no response; set while threading)."""
    _said: str | None = field(default=None, repr=False, compare=False)
    _calls: list[genai_types.FunctionCall] | None = field(default=None, repr=False, compare=False)
    _reply: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def said(self) -> str:
        """The response's plain text (:func:`_plain_text`), read once."""
        if self._said is None:
            self._said = _plain_text(self.reply()) if self.response is not None else ""
        return self._said

    def calls(self) -> list[genai_types.FunctionCall]:
        """:func:`calls_of` the response, read once (threading and extraction ask often)."""
        if self._calls is None:
            self._calls = calls_of(self.response)
        return self._calls

    def reply(self) -> dict[str, Any]:
        """The response as the client re-sends it in its next request (JSON, by alias, no
        None), dumped once; ``{}`` when there is none."""
        if self._reply is None:
            self._reply = (
                self.response.model_dump(mode="json", exclude_none=True, by_alias=True)
                if self.response is not None
                else {}
            )
        return self._reply


@dataclass(slots=True)
class Thread:
    turns: list[Turn] = field(default_factory=list)
    tip_keys: list[int] = field(default_factory=list)
    turns_key: tuple[str, ...] = ()
    agent_tips: dict[str | None, list[int]] = field(default_factory=dict)
    """Per agent, the tip keys of its last turn (branches continue from their own tip)."""
    nested: list[Thread] = field(default_factory=list)
    """Conversations an outstanding function call of this one ran (AgentTool)."""

    def current_agents(self) -> set[str | None]:
        """Agents with a turn in the current invocation (same genuine user turns)."""
        last = next((t.user_turns for t in reversed(self.turns) if t.user_turns), [])
        found: set[str | None] = set()
        for turn in reversed(self.turns):
            if turn.user_turns and turn.user_turns != last:
                break
            found.add(turn.agent)
        return found


_Keyed: TypeAlias = tuple[str, bool, bool]
"""A content's canonical form, whether it is a genuine user turn, and whether it was seen
plain (:func:`_canonical_cached`)."""


# -- reading exchanges ------------------------------------------------------------------


def model_turn(exchange: Exchange, keys: dict[bytes, _Keyed] | None = None) -> Turn | None:
    """The model turn ``exchange`` is, if it is one; ``keys`` caches canonical forms across
    the exchanges of one recording (:func:`_canonical_cached`).

    Raises:
        pydantic.ValidationError: the request's ``contents`` do not read as Content objects
            (as google-genai's types read them).
    """
    read = _request_and_chunks(exchange)
    if read is None:
        return None
    body, chunks, checks = read
    contents = [c for c in body["contents"] if isinstance(c, dict)]
    cache = {} if keys is None else keys
    # One pass over the contents: each new one is read (canonical form, user turn) and,
    # for a Gemini call, checked as a Content; one seen before was both already.
    if checks and len(contents) != len(body["contents"]):
        _contents().validate_python(body["contents"])  # an item that is not an object
    canonical: list[str] = []
    user_turns: list[str] = []
    last_user: dict[str, Any] | None = None
    genuine: list[int] = []
    for index, content in enumerate(contents):
        try:
            key, is_genuine = _canonical_cached(content, cache, check=checks)
        except _NotPlain:
            # google-genai's types name the first wrong place, or take it after all.
            _contents().validate_python(body["contents"])
            key, is_genuine = _canonical(content), is_genuine_user_content(content)
        canonical.append(key)
        if is_genuine:
            user_turns.append(key)
            last_user = content
            genuine.append(index)
    merged, chunk_contents = _merge_chunks(chunks)
    usage, model_version = _usage_and_version(chunks)
    return Turn(
        exchange=exchange,
        contents=contents,
        response=merged,
        chunk_contents=chunk_contents,
        usage=usage,
        model_version=model_version,
        agent=agent_name(body),
        canonical=canonical,
        user_turns=user_turns,
        last_user_content=last_user,
        genuine=genuine,
    )


def _request_and_chunks(exchange: Exchange) -> tuple[Any, list[dict[str, Any]], bool] | None:
    """A successful generate call's request body and response chunks, in Gemini's terms
    (an OpenAI or Anthropic call translated), and whether its contents are to be checked
    as Content objects (a Gemini call's); or None: not a model
    turn."""
    request, response = exchange.request, exchange.response
    translated = gemini_request(exchange)
    if translated is not None:
        if response.status != 200:
            return None
        answer = gemini_response(exchange)
        return (translated, [answer], False) if answer is not None else None
    call = model_call(request.url)
    if request.method.upper() != "POST" or call is None or call.method not in GENERATE_METHODS:
        return None
    if response.status != 200 or not isinstance(request.body, JsonBody):
        return None
    body = request.body.value
    if not isinstance(body, dict) or "contents" not in body:
        return None
    if not isinstance(body["contents"], list):
        _contents().validate_python(body["contents"])  # google-genai's own error
    chunks = _response_chunks(response.body)
    return (body, chunks, True) if chunks is not None else None


def _usage_and_version(
    chunks: list[dict[str, Any]],
) -> tuple[genai_types.GenerateContentResponseUsageMetadata | None, str | None]:
    """The response's usage and model version: the last chunk's that has them."""
    usage = model_version = None
    for chunk in chunks:
        if isinstance(chunk.get("usageMetadata"), dict):
            usage = genai_types.GenerateContentResponseUsageMetadata.model_validate(
                chunk["usageMetadata"]
            )
        if isinstance(chunk.get("modelVersion"), str):
            model_version = chunk["modelVersion"]
    return usage, model_version


def _plain_content(content: object) -> bool:
    """Whether ``content`` is shaped as a Content at a glance (an object whose parts are
    objects and whose texts are strings); a wrong value elsewhere is the types' to find."""
    if not isinstance(content, dict) or not isinstance(content.get("role", ""), (str, type(None))):
        return False
    parts = content.get("parts")
    if parts is None:
        return True
    return isinstance(parts, list) and all(
        isinstance(part, dict) and isinstance(part.get("text", ""), str) for part in parts
    )


@functools.cache
def _contents() -> TypeAdapter[list[genai_types.Content]]:
    """google-genai's reading of a request's ``contents``, built on first use: a recording
    whose contents all read plain at a glance never builds it."""
    return TypeAdapter(list[genai_types.Content])


def _response_chunks(body: object) -> list[dict[str, Any]] | None:
    if isinstance(body, JsonBody):
        value = body.value
        items = value if isinstance(value, list) else [value]
    elif isinstance(body, SseBody):
        items = [event.data for event in body.events if event.data is not None]
    else:
        return None
    chunks = [item for item in items if isinstance(item, dict)]
    if not chunks or any("error" in chunk for chunk in chunks):
        return None
    return chunks


def _merge_chunks(
    chunks: list[dict[str, Any]],
) -> tuple[genai_types.Content | None, list[dict[str, Any]]]:
    """Merge streamed chunks as ADK does: consecutive text of the same kind concatenated."""
    parts: list[dict[str, Any]] = []
    chunk_contents: list[dict[str, Any]] = []
    role = "model"
    for chunk in chunks:
        candidates = chunk.get("candidates") or []
        content = candidates[0].get("content") if candidates else None
        if not isinstance(content, dict):
            continue
        role = content.get("role") or role
        chunk_contents.append(content)
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                continue
            previous = parts[-1] if parts else None
            if (
                previous is not None
                and _is_plain_text(part)
                and _is_plain_text(previous)
                and bool(part.get("thought")) == bool(previous.get("thought"))
            ):
                previous["text"] += part["text"]
                if "thoughtSignature" in part:
                    previous["thoughtSignature"] = part["thoughtSignature"]
            else:
                parts.append(dict(part))
    if not parts:
        return None, chunk_contents
    return genai_types.Content.model_validate({"role": role, "parts": parts}), chunk_contents


def _is_plain_text(part: dict[str, Any]) -> bool:
    keys = set(part) - {"thought", "thoughtSignature", "thought_signature"}
    return keys == {"text"} and isinstance(part["text"], str)


def agent_name(body: dict[str, Any]) -> str | None:
    """The ADK agent named in a request's (or a Live setup's) system instruction."""
    instruction = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(instruction, dict):
        text = " ".join(
            p.get("text", "") for p in instruction.get("parts") or [] if isinstance(p, dict)
        )
    elif isinstance(instruction, str):
        text = instruction
    else:
        return None
    match = _AGENT_NAME.search(text)
    return match.group(1) if match else None


def is_genuine_user_content(content: dict[str, Any] | genai_types.Content) -> bool:
    """True for a real user turn: user-role, no function response, not an ADK rewrite.

    ADK rewrites other agents' turns as user-role text beginning "For context:" and may
    carry a dynamic system instruction in the contents; neither is the user speaking.
    """
    if isinstance(content, genai_types.Content):
        content = content.model_dump(mode="json", exclude_none=True, by_alias=True)
    if (content.get("role") or "user") != "user":
        return False
    parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
    if not parts:
        return False
    if any("functionResponse" in p or "function_response" in p for p in parts):
        return False
    first_text = next((p["text"] for p in parts if isinstance(p.get("text"), str)), None)
    if first_text is not None and first_text.lstrip().startswith(
        (_FOR_CONTEXT, _SYSTEM_INSTRUCTION_IN_CONTENTS)
    ):
        return False
    return True


# -- canonical keys -----------------------------------------------------------------------

_VOLATILE = {"id", "thoughtSignature", "thought_signature"}


@functools.lru_cache(maxsize=1024)
def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _canonical_part(part: dict[str, Any]) -> dict[str, Any] | None:
    if part.get("thought"):
        return None
    out: dict[str, Any] = {}
    for key, value in part.items():
        if key in _VOLATILE or value is None:
            continue
        snake = _snake(key)
        if isinstance(value, dict) and snake in ("function_call", "function_response"):
            value = {k: v for k, v in value.items() if k not in _VOLATILE and v is not None}
            if snake == "function_call" and not value.get("args"):
                value.pop("args", None)
        elif snake == "inline_data" and isinstance(value, dict):
            data = value.get("data")
            if isinstance(data, str) and len(data) > _DIGESTED:
                value = {**value, "data": _DIGEST_MARK + hashlib.sha256(data.encode()).hexdigest()}
        out[snake] = value
    return out


_DIGESTED = 4096
"""Inline data longer than this is keyed by its digest: a key only tells contents apart,
and JSON-encoding megabytes of base64 for it costs more than the rest of the recording."""
_DIGEST_MARK = "\x00rec-sha256:"


def _canonical(content: dict[str, Any]) -> str:
    parts = [_canonical_part(p) for p in content.get("parts") or [] if isinstance(p, dict)]
    document = {"role": content.get("role") or "user", "parts": [p for p in parts if p]}
    return _CANONICAL_JSON(document)


def _sorted_encoder(item_separator: str, key_separator: str) -> Callable[[object], str]:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False, separators=...)`` for parsed
    JSON (acyclic: no circular check). ``JSONEncoder.encode`` builds the C encoder afresh on
    every call, about half the cost of encoding a small content; this builds it once."""
    encoder = json.JSONEncoder(
        sort_keys=True, ensure_ascii=False, separators=(item_separator, key_separator)
    )
    try:
        import _json
    except ImportError:  # an interpreter without json's C speedups
        return encoder.encode
    scan = _json.make_encoder(
        None,
        encoder.default,
        _json.encode_basestring,
        None,
        key_separator,
        item_separator,
        True,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
    return lambda value: "".join(scan(value, 0))


_CANONICAL_JSON = _sorted_encoder(",", ":")
"""``json.dumps(..., sort_keys=True, ensure_ascii=False, separators=(",", ":"))``."""


class _NotPlain(Exception):
    """A content :func:`_plain_content` does not take at a glance."""


def _canonical_cached(
    content: dict[str, Any], keys: dict[bytes, _Keyed], *, check: bool = False
) -> tuple[str, bool]:
    """``_canonical(content)`` and ``is_genuine_user_content(content)``, looked up by the
    content's JSON as it is (pydantic-core writes it without sorting): each request re-sends
    the conversation so far with its contents spelled as before, so only a new content is
    read. With ``check``, a content not seen plain yet is first looked at as a Content
    (:func:`_plain_content`).

    Raises:
        _NotPlain: a content to check that is not plain at a glance.
    """
    try:
        spelled = pydantic_core.to_json(content)
    except pydantic_core.PydanticSerializationError:
        if check and not _plain_content(content):
            raise _NotPlain from None
        return _canonical(content), is_genuine_user_content(content)
    found = keys.get(spelled)
    if found is None or (check and not found[2]):
        if check and not _plain_content(content):
            raise _NotPlain
        if found is None:
            found = (_canonical(content), is_genuine_user_content(content), check)
        keys[spelled] = found = (found[0], found[1], found[2] or check)
    return found[0], found[1]


def _roll(previous: int, canonical: str, rolled: dict[tuple[int, str], int]) -> int:
    """The key of a prefix (key ``previous``, 0 for none) followed by a content. Each
    distinct prefix is numbered the first time it is seen (``rolled``): a history every
    request re-sends is keyed once, and two prefixes share a key only when they are equal."""
    found = rolled.get((previous, canonical))
    if found is None:
        found = rolled[previous, canonical] = len(rolled) + 1
    return found


def _prefix_keys(canonical: Sequence[str], rolled: dict[tuple[int, str], int]) -> list[int]:
    keys: list[int] = []
    running = 0
    for item in canonical:
        running = _roll(running, item, rolled)
        keys.append(running)
    return keys


def _turns_key(turns: Sequence[str]) -> tuple[str, ...]:
    """The key of a history of user turns (their canonical forms): the tuple itself, hashed
    from the strings' own cached hashes, not a digest of their text."""
    return tuple(turns)


# -- threading ------------------------------------------------------------------------------


class _Threads:
    """Conversations with dict indexes on their tip (prefix hash) and user-turn history."""

    def __init__(self) -> None:
        self.threads: list[Thread] = []
        self.by_prefix: dict[int, list[Thread]] = {}
        self.by_turns: dict[tuple[str, ...], list[Thread]] = {}
        self.by_agent_tip: dict[int, list[Thread]] = {}
        self.keys: dict[bytes, _Keyed] = {}
        """Canonical forms by JSON text (:func:`_canonical_cached`)."""
        self.rolled: dict[tuple[int, str], int] = {}
        """Prefix keys by (prefix key, canonical content) (:func:`_roll`)."""

    def add(self, turn: Turn) -> Thread:
        """Thread ``turn`` (after every turn recorded before it); the conversation it is in."""
        base = _prefix_keys(turn.canonical, self.rolled)
        thread = self._find(turn, base) or self._new()
        self._unindex(thread)
        thread.turns.append(turn)
        running = base[-1] if base else 0
        tips: list[int] = []
        if turn.response is not None:
            # Registered by its JSON like a request's content: the next request re-sends it.
            merged = turn.reply()
            turn.reply_key = _roll(running, _canonical_cached(merged, self.keys)[0], self.rolled)
            tips.append(turn.reply_key)
        if len(turn.chunk_contents) > 1:  # streaming AFC resends each chunk as its own turn
            chunk_running = running
            for chunk in turn.chunk_contents:
                canonical = _canonical_cached(chunk, self.keys)[0]
                chunk_running = _roll(chunk_running, canonical, self.rolled)
            tips.append(chunk_running)
        thread.tip_keys = tips
        for key in thread.agent_tips.get(turn.agent, []):
            self.by_agent_tip[key].remove(thread)
        thread.agent_tips[turn.agent] = tips
        for key in tips:
            self.by_prefix.setdefault(key, []).append(thread)
            self.by_agent_tip.setdefault(key, []).append(thread)
        if turn.user_turns or len(thread.turns) == 1:  # a transcript-only request keeps it
            thread.turns_key = _turns_key(turn.user_turns)
        self.by_turns.setdefault(thread.turns_key, []).append(thread)
        return thread

    def _new(self) -> Thread:
        thread = Thread()
        self.threads.append(thread)
        return thread

    def _unindex(self, thread: Thread) -> None:
        for key in thread.tip_keys:
            self.by_prefix[key].remove(thread)
        if thread.turns:
            self.by_turns[thread.turns_key].remove(thread)

    def _find(self, turn: Turn, prefix_keys: list[int]) -> Thread | None:
        """The conversation ``turn`` continues: by its history's prefix, by its agent's own
        tip, by the reply it quotes or is fed, or by its user turns."""
        found = self._by_prefix(turn, prefix_keys)
        if found is not None:
            return found
        if not turn.user_turns:
            return self._quoted(turn)
        fed = self._fed(turn)
        if fed is not None:
            return fed
        return self._by_user_turns(turn, prefix_keys)

    def _by_prefix(self, turn: Turn, prefix_keys: list[int]) -> Thread | None:
        """The conversation whose tip is the longest prefix of the request's history, or a
        branch or loop agent continuing its own turn."""
        for key in reversed(prefix_keys):
            found = self.by_prefix.get(key)
            if found:
                return found[0]
        for key in reversed(prefix_keys):
            for thread in self.by_agent_tip.get(key, []):
                if key in thread.agent_tips.get(turn.agent, []):
                    return thread
        return None

    def _by_user_turns(self, turn: Turn, prefix_keys: list[int]) -> Thread | None:
        """A rewritten history (sub-agent after a transfer): match on the user turns."""
        same = self.by_turns.get(_turns_key(turn.user_turns), [])
        candidates = same + self.by_turns.get(_turns_key(turn.user_turns[:-1]), [])
        for thread in same:
            if _resumed_call(turn, prefix_keys, thread):
                turn.resumes = True
                return thread
        candidates = [
            t
            for t in candidates
            if len(turn.contents) > len(t.turns[-1].contents)
            or turn.agent not in t.current_agents()
        ]
        if not candidates:
            return None
        for thread in candidates:
            if _mentions_calls(turn, thread.turns[-1]):
                return thread
        return candidates[0]

    def _fed(self, turn: Turn) -> Thread | None:
        """The conversation whose reply is this request's only content (a workflow graph's
        node fed by the node before it): the request runs in that invocation, and its text
        is no user turn."""
        if len(turn.contents) != 1 or len(turn.user_turns) != 1:
            return None
        text = _plain_text(turn.contents[0])
        if not text:
            return None
        for thread in reversed(self.threads[-8:]):
            last = thread.turns[-1]
            if last.response is not None and not last.calls():
                if last.said() == text:
                    turn.user_turns = list(last.user_turns)
                    turn.last_user_content = last.last_user_content
                    return thread
        return None

    def _quoted(self, turn: Turn) -> Thread | None:
        """The conversation whose latest reply this transcript-only request quotes."""
        text = json.dumps(turn.contents, ensure_ascii=False)
        for thread in reversed(self.threads[-64:]):
            for earlier in reversed(thread.turns[-8:]):
                said = (
                    " ".join(p.text for p in (earlier.response.parts or []) if p.text)
                    if (earlier.response is not None)
                    else ""
                )
                if said and json.dumps(said, ensure_ascii=False)[1:-1] in text:
                    return thread
        return None


def _plain_text(content: dict[str, Any]) -> str:
    parts = [p for p in content.get("parts") or [] if isinstance(p, dict) and not p.get("thought")]
    if not parts or not all(set(p) <= {"text", "thoughtSignature"} for p in parts):
        return ""
    return "".join(p.get("text") or "" for p in parts)


def _resumed_call(turn: Turn, prefix_keys: list[int], thread: Thread) -> bool:
    """Whether ``turn`` re-answers a function call one of ``thread``'s turns made."""
    if len(prefix_keys) < 2 or not turn.contents:
        return False
    last = turn.contents[-1]
    if not any(
        "functionResponse" in p or "function_response" in p for p in last.get("parts") or []
    ):
        return False
    for earlier in thread.turns:
        if earlier.agent != turn.agent or not earlier.calls():
            continue
        if earlier.response is None or len(earlier.contents) + 1 != len(turn.contents) - 1:
            continue
        if earlier.reply_key == prefix_keys[-2]:
            return True
    return False


def _mentions_calls(turn: Turn, previous: Turn) -> bool:
    calls = previous.calls()
    if not calls:
        return False
    text = json.dumps(turn.contents[len(previous.contents) - 1 :], ensure_ascii=False)
    return all(f"`{call.name}`" in text or f'"{call.name}"' in text for call in calls)


def calls_of(content: genai_types.Content | None) -> list[genai_types.FunctionCall]:
    if content is None:
        return []
    return [p.function_call for p in content.parts or [] if p.function_call]


def thread_turns(exchanges: Sequence[Exchange]) -> list[Thread]:
    """The model turns of ``exchanges`` (in id order), threaded into conversations.

    Conversations run by another's outstanding function call are folded into it
    (:attr:`Thread.nested`) and left out of the list.
    """
    threads = _Threads()
    for exchange in sorted(exchanges, key=lambda e: e.id):
        turn = model_turn(exchange, threads.keys)
        if turn is not None:
            threads.add(turn)
    return _fold_nested(threads.threads)


class Threading:
    """Model exchanges threaded into conversations one at a time, in arrival order, as
    :func:`thread_turns` threads a whole recording (nested conversations not folded): a
    caller that needs the conversations of a recording's first exchanges reads only those.
    """

    def __init__(self) -> None:
        self._threads = _Threads()

    def add(self, exchange: Exchange) -> Thread | None:
        """Thread ``exchange`` (after every exchange added before it, which arrived before
        it); the conversation it is in, None when it is no model turn."""
        turn = model_turn(exchange, self._threads.keys)
        return self._threads.add(turn) if turn is not None else None


def _argument_keys(call: genai_types.FunctionCall, *, as_json: bool) -> list[str]:
    """The user texts an AgentTool builds from a call (``request``, or the args as JSON),
    as :func:`_opening_keys` spells them (the JSON one only when ``as_json``)."""
    args = dict(call.args or {})
    keys = [_json_key(args)] if args and as_json else []
    if isinstance(args.get("request"), str):
        keys.append("text:" + args["request"])
    return keys


def _json_key(value: object) -> str:
    return "json:" + _SORTED_JSON(value)


_SORTED_JSON = _sorted_encoder(", ", ": ")


def _opening_keys(child: Thread) -> list[str]:
    first = child.turns[0].last_user_content or {}
    text = "".join(p.get("text", "") for p in first.get("parts") or [] if isinstance(p, dict))
    keys = ["text:" + text]
    if text.lstrip()[:1] in _JSON_STARTS:  # json.loads refuses any other text at once
        try:
            keys.append(_json_key(json.loads(text)))  # an input_schema, dumped as JSON
        except ValueError:
            pass
    return keys


_JSON_STARTS = frozenset('{["-0123456789tfnNI')
"""The first characters of a text ``json.loads`` can read (after white space): an object, an
array, a string, a number, ``true``, ``false``, ``null``, ``NaN``, ``Infinity``."""


def _calls_by_argument(
    threads: list[Thread], openings: set[str]
) -> dict[str, list[tuple[Thread, int]]]:
    """The function calls an inner run could have opened with one of ``openings`` (its
    :func:`_opening_keys`), indexed by that opening. A call's args are dumped as JSON only
    when an opening is JSON (an AgentTool with an input_schema)."""
    as_json = any(key.startswith("json:") for key in openings)
    index: dict[str, list[tuple[Thread, int]]] = {}
    for thread in threads:
        for position, turn in enumerate(thread.turns):
            for call in turn.calls():
                for key in _argument_keys(call, as_json=as_json):
                    if key in openings:
                        index.setdefault(key, []).append((thread, position))
    return index


def _one_invocation(child: Thread) -> bool:
    """Whether ``child`` is one invocation with one user turn, as an inner run is."""
    first = child.turns[0].user_turns
    return len(first) == 1 and all(t.user_turns == first for t in child.turns)


def _parent_of(
    child: Thread, opening: list[str], calls: dict[str, list[tuple[Thread, int]]]
) -> Thread | None:
    """The conversation whose outstanding call ran ``child`` (which opened with the keys
    ``opening``), if one did."""
    start, end = child.turns[0].exchange.id, child.turns[-1].exchange.id
    for key in opening:
        for parent, position in calls.get(key, []):
            turn = parent.turns[position]
            if parent is child or turn.exchange.id >= start:
                continue
            answered = next(
                (later for later in parent.turns[position + 1 :] if later.agent == turn.agent),
                None,
            )
            if answered is None or answered.exchange.id > end:
                return parent
    return None


def _fold_nested(threads: list[Thread]) -> list[Thread]:
    openings = [_opening_keys(thread) if _one_invocation(thread) else [] for thread in threads]
    calls = _calls_by_argument(threads, {key for keys in openings for key in keys})
    kept: list[Thread] = []
    for thread, opening in zip(threads, openings, strict=True):
        parent = _parent_of(thread, opening, calls) if calls else None
        if parent is not None:
            parent.nested.append(thread)
        else:
            kept.append(thread)
    return kept
