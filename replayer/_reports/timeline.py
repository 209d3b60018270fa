"""A recording as a timeline a reviewer can read (``rec show``), and what it cost.

Per conversation and turn: the user's text, each model call (model, streamed or not,
recorded latency, tokens from ``usage_metadata``), the tool calls it asked for with their
args and (shortened, in the text form) responses, and the final reply. The conversations
are threaded out of the traffic exactly as ``rec start`` threads them into an EvalSet
(:func:`evalfiles.extract_conversations`); what is no model call of a conversation (a
tool's own HTTP call, a failed or non-generate call) is listed apart.

Every string passes through :func:`cassettes._secret_shapes.mask` before it is kept: a timeline is
printed, written to JSON and put into HTML reports.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from cassettes._built_models import built
from cassettes._cassette import Cassette, Exchange, SseBody, load_cassette
from cassettes._errors import InputError
from cassettes._evalset import InvocationEvent
from cassettes._extraction import extract_conversations
from cassettes._genai_types import Content
from cassettes._model_url import model_call
from cassettes._secret_shapes import mask, mask_json
from replayer._file_search import find_cassettes
from replayer._reports.layout import PIPE_WIDTH, terminal_width, wrap_words

__all__ = [
    "CassetteTimeline",
    "ConversationTimeline",
    "ModelCallStep",
    "OtherExchange",
    "ToolCallStep",
    "TurnTimeline",
    "Usage",
    "cassette_timelines",
    "dump_timelines",
    "render_timelines",
    "timeline_of",
]


class _Step(BaseModel):
    """A part of a timeline. Its schema is built on first validation or dump (``--json``, the
    HTML report): ``rec show``'s text builds every part without validation and needs none."""

    model_config = ConfigDict(defer_build=True)


class Usage(_Step):
    """Model calls, tokens and recorded latency, summed."""

    model_calls: int = 0
    prompt_tokens: int = 0
    candidates_tokens: int = 0
    total_tokens: int = 0
    latency_ms: float = 0.0
    """The recorded durations of the calls, added up (what the calls took live)."""

    def add(self, other: Usage) -> Usage:
        """The sum of both."""
        return Usage(
            model_calls=self.model_calls + other.model_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            candidates_tokens=self.candidates_tokens + other.candidates_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            latency_ms=self.latency_ms + other.latency_ms,
        )


class ToolCallStep(_Step):
    """A tool call the model asked for, and the tool's response (when one was sent back)."""

    name: str
    args: dict[str, Any] | None = None
    response: Any = None
    """The response as the next request carried it (None when none followed)."""


class ModelCallStep(_Step):
    """One model call: an exchange of the recording."""

    exchange_id: int
    model: str
    method: str
    streamed: bool
    agent: str | None = None
    """The ADK agent that made the call (from the system instruction), when known."""
    latency_ms: float
    """Recorded: from the request to the end of the response."""
    first_chunk_ms: float | None = None
    """Recorded, streamed calls only: from the request to the first event."""
    prompt_tokens: int | None = None
    candidates_tokens: int | None = None
    total_tokens: int | None = None
    text: str | None = None
    """What the model said besides its tool calls (the final reply is kept on the turn)."""
    tool_calls: list[ToolCallStep] = Field(default_factory=list)


class TurnTimeline(_Step):
    """One user turn (an invocation) and everything that answered it."""

    turn: int
    """1-based."""
    user: str
    model_calls: list[ModelCallStep] = Field(default_factory=list)
    reply: str | None = None


class ConversationTimeline(_Step):
    """One session threaded out of the recording."""

    conversation: int
    """1-based, in order of the first request."""
    agents: list[str] = Field(default_factory=list)
    turns: list[TurnTimeline] = Field(default_factory=list)

    def usage(self) -> Usage:
        """Every model call of the conversation, summed in call order (the latency is a
        float sum), with no :class:`Usage` built per call."""
        return Usage(**_sums(self))


def _sums(conversation: ConversationTimeline) -> dict[str, Any]:
    """:meth:`ConversationTimeline.usage`'s fields."""
    calls = prompt = candidates = total = 0
    latency = 0.0
    for turn in conversation.turns:
        for call in turn.model_calls:
            calls += 1
            prompt += call.prompt_tokens or 0
            candidates += call.candidates_tokens or 0
            total += call.total_tokens or 0
            latency += call.latency_ms
    return {
        "model_calls": calls,
        "prompt_tokens": prompt,
        "candidates_tokens": candidates,
        "total_tokens": total,
        "latency_ms": latency,
    }


def _summed(conversations: list[ConversationTimeline]) -> Usage:
    """``Usage().add(a.usage()).add(b.usage())...``: the conversations' usage added up in
    order (the same float sums), with no :class:`Usage` built per conversation."""
    summed: dict[str, Any] = {
        "model_calls": 0,
        "prompt_tokens": 0,
        "candidates_tokens": 0,
        "total_tokens": 0,
        "latency_ms": 0.0,
    }
    for conversation in conversations:
        for name, value in _sums(conversation).items():
            summed[name] = summed[name] + value
    return built(Usage, summed)


class OtherExchange(_Step):
    """An exchange that is no model call of a conversation."""

    exchange_id: int
    method: str
    url: str
    """Without its query (it may carry a key)."""
    status: int
    latency_ms: float
    kind: str
    """``tool`` (a tool's own HTTP call), ``failed`` (a model call that got an error) or
    ``other`` (``countTokens``, embeddings, anything else)."""


class CassetteTimeline(_Step):
    """A whole recording."""

    path: str
    name: str
    exchanges: int
    conversations: list[ConversationTimeline] = Field(default_factory=list)
    other: list[OtherExchange] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


def _text(content: Content | None, masked: dict[str, str]) -> str:
    if content is None:
        return ""
    return mask("\n".join(p.text for p in content.parts or [] if p.text), memo=masked)


def _model_call(
    exchange: Exchange, event: InvocationEvent, masked: dict[str, str]
) -> ModelCallStep:
    # Built without validation: every value is already of its field's type (ids ints,
    # durations floats, token counts ints or None, masked fresh trees).
    found = model_call(exchange.request.url)
    body = exchange.response.body
    streamed = isinstance(body, SseBody)
    usage = event.usage_metadata
    content = event.content
    calls = [
        built(
            ToolCallStep,
            {
                "name": p.function_call.name or "?",
                "args": mask_json(p.function_call.args, memo=masked),
                "response": None,
            },
        )
        for p in (content.parts or [] if content else [])
        if p.function_call
    ]
    return built(
        ModelCallStep,
        {
            "exchange_id": exchange.id,
            "model": found.model if found else "?",
            "method": found.method if found else "?",
            "streamed": streamed,
            "agent": event.author,
            "latency_ms": exchange.duration_ms,
            "first_chunk_ms": body.events[0].offset_ms
            if isinstance(body, SseBody) and body.events
            else None,
            "prompt_tokens": usage.prompt_token_count if usage else None,
            "candidates_tokens": usage.candidates_token_count if usage else None,
            "total_tokens": usage.total_token_count if usage else None,
            "text": _text(content, masked) or None,
            "tool_calls": calls,
        },
    )


def _attach_responses(
    calls: list[ToolCallStep], event: InvocationEvent, masked: dict[str, str]
) -> None:
    pending = [c for c in calls if c.response is None]
    for part in event.content.parts or [] if event.content else []:
        response = part.function_response
        if response is None:
            continue
        match = next((c for c in pending if c.name == response.name), None)
        if match is not None:
            match.response = mask_json(response.response, memo=masked)
            pending.remove(match)


def _other(exchange: Exchange, used: set[int]) -> OtherExchange | None:
    if id(exchange) in used:
        return None
    parts = urlsplit(exchange.request.url)
    if exchange.origin == "tool":
        kind = "tool"
    elif model_call(exchange.request.url) is not None and exchange.response.status != 200:
        kind = "failed"
    else:
        kind = "other"
    return built(
        OtherExchange,
        {
            "exchange_id": exchange.id,
            "method": exchange.request.method.upper(),
            "url": mask(f"{parts.scheme}://{parts.netloc}{parts.path}"),
            "status": exchange.response.status,
            "latency_ms": exchange.duration_ms,
            "kind": kind,
        },
    )


def timeline_of(
    exchanges: Sequence[Exchange], *, path: str = "", name: str = ""
) -> CassetteTimeline:
    """The timeline of some recorded exchanges (a cassette's, or the ones a replay served)."""
    conversations: list[ConversationTimeline] = []
    used: set[int] = set()
    masked: dict[str, str] = {}  # each distinct string masked once per timeline
    for number, conversation in enumerate(extract_conversations(exchanges), start=1):
        turns: list[TurnTimeline] = []
        for index, invocation in enumerate(conversation.invocations):
            behind = iter(conversation.model_calls[index])
            calls: list[ModelCallStep] = []
            events = getattr(invocation.intermediate_data, "invocation_events", [])
            for event in events:
                if event.content is not None and event.content.role == "user":
                    if calls:
                        _attach_responses(calls[-1].tool_calls, event, masked)
                    continue
                exchange = next(behind, None)
                if exchange is None:
                    continue
                used.add(id(exchange))
                calls.append(_model_call(exchange, event, masked))
            turns.append(
                built(
                    TurnTimeline,
                    {
                        "turn": index + 1,
                        "user": _text(invocation.user_content, masked),
                        "model_calls": calls,
                        "reply": _text(invocation.final_response, masked) or None,
                    },
                )
            )
        conversations.append(
            built(
                ConversationTimeline,
                {"conversation": number, "agents": list(conversation.agents), "turns": turns},
            )
        )
    other = [o for e in exchanges if (o := _other(e, used)) is not None]
    usage = _summed(conversations)
    return built(
        CassetteTimeline,
        {
            "path": path,
            "name": name,
            "exchanges": len(exchanges),
            "conversations": conversations,
            "other": other,
            "usage": usage,
        },
    )


def cassette_timelines(paths: Sequence[str | Path]) -> list[CassetteTimeline]:
    """The timeline of each cassette under ``paths`` (files, or folders of them).

    Raises:
        InputError: a path does not exist, holds no cassette, is an eval set, or a
            cassette is invalid (see :func:`replayer._file_search.find_cassettes`).
    """
    timelines = []
    for path in find_cassettes(paths):
        cassette: Cassette = load_cassette(path, lazy=True)
        try:
            timelines.append(timeline_of(cassette.exchanges, path=str(path), name=cassette.name))
        except InputError as exc:  # a model call google-genai's types refuse
            exc.path = exc.path or str(path)
            raise
    return timelines


def dump_timelines(timelines: Sequence[CassetteTimeline]) -> str:
    """``rec show --json``: a JSON list with one object per cassette."""
    return (
        json.dumps([t.model_dump(mode="json") for t in timelines], indent=2, ensure_ascii=False)
        + "\n"
    )


def _thousands(value: int) -> str:
    return f"{value:,}"


def _seconds(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _tokens(prompt: int | None, candidates: int | None, total: int | None) -> str:
    if total is None and prompt is None and candidates is None:
        return "tokens unknown"
    shown = total if total is not None else (prompt or 0) + (candidates or 0)
    split = f"{_thousands(prompt or 0)} in, {_thousands(candidates or 0)} out"
    return f"{_thousands(shown)} tokens ({split})"


_JSON = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(value, ensure_ascii=False)`` (``json.dumps`` builds an encoder per call when
given an option: one per argument, tens of thousands for a large recording)."""
_SORTED_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
"""``json.dumps(value, ensure_ascii=False, sort_keys=True)``."""


def _short(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else _SORTED_JSON(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 3, 1)] + "..."


def _call_line(call: ToolCallStep) -> str:
    args = ", ".join(f"{k}={_JSON(v)}" for k, v in (call.args or {}).items())
    return f"{call.name}({args})"


_OTHER_WORDS = {
    "tool": "a tool's own HTTP call",
    "failed": "a failed model call",
    "other": "no generate call",
}
"""How each kind of exchange outside a conversation is named."""


def render_timelines(timelines: Sequence[CassetteTimeline], *, width: int | None = None) -> str:
    """The timelines as text for a terminal or a pull-request comment."""
    width = width or terminal_width() or PIPE_WIDTH
    lines: list[str] = []
    for timeline in timelines:
        usage = timeline.usage
        lines.append(timeline.path or timeline.name)
        summary = (
            f"{timeline.exchanges} exchange(s): {usage.model_calls} model call(s) in "
            f"{len(timeline.conversations)} conversation(s), {len(timeline.other)} other; "
            f"{_tokens(usage.prompt_tokens, usage.candidates_tokens, usage.total_tokens)}; "
            f"{_seconds(usage.latency_ms)} recorded"
        )
        lines.extend(wrap_words(summary, width, indent="  "))
        for conversation in timeline.conversations:
            lines.extend(_conversation_lines(conversation, width))
        if timeline.other:
            lines += ["", "Not part of a conversation"]
            for item in timeline.other:
                text = (
                    f"#{item.exchange_id} {item.method} {item.url} -> {item.status}, "
                    f"{_seconds(item.latency_ms)} ({_OTHER_WORDS.get(item.kind, item.kind)})"
                )
                lines.extend(wrap_words(text, width, first="  ", indent="    "))
        lines.append("")
    return "\n".join(lines)


def _conversation_lines(conversation: ConversationTimeline, width: int) -> list[str]:
    agents = f" - agents: {', '.join(conversation.agents)}" if conversation.agents else ""
    lines = ["", f"Conversation {conversation.conversation}{agents}"]
    for turn in conversation.turns:
        user = f'"{turn.user}"'
        lines.extend(wrap_words(user, width, first=f"  Turn {turn.turn}  user: ", indent=" " * 8))
        for call in turn.model_calls:
            lines.extend(_model_call_lines(call, width))
        if turn.reply is not None:
            reply = f'"{_short(turn.reply, 6 * width)}"'
            lines.extend(wrap_words(reply, width, first="    reply: ", indent="      "))
    return lines


def _model_call_lines(call: ModelCallStep, width: int) -> list[str]:
    timing = _seconds(call.latency_ms)
    if call.streamed:
        first = (
            "" if call.first_chunk_ms is None else f", first chunk {_seconds(call.first_chunk_ms)}"
        )
        timing = f"streamed, {timing}{first}"
    by = f" - {call.agent}" if call.agent and call.agent != "model" else ""
    tokens = _tokens(call.prompt_tokens, call.candidates_tokens, call.total_tokens)
    head = f"#{call.exchange_id} {call.model} {call.method}: {timing}; {tokens}{by}"
    lines = wrap_words(head, width, first="    ", indent="      ")
    if call.text:
        said = _short(call.text, 4 * width)
        lines.extend(wrap_words(said, width, first="      says: ", indent="        "))
    for tool in call.tool_calls:
        lines.extend(wrap_words(_call_line(tool), width, first="      -> ", indent="         "))
        if tool.response is not None:
            lines.append("      <- " + _short(tool.response, max(width - 9, 20)))
    return lines
