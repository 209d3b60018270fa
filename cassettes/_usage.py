"""What a recorded model call used and how long it took, read from the cassette.

Every figure comes from the recording, never from the replay: the tokens from the
response's usage fields, the time to first chunk from the first event's recorded offset
(the whole response's duration for a unary call), the call's span from ``recorded_at``
and ``duration_ms``. A replay that takes milliseconds therefore reports the latency the
agent had when it was recorded.

Token kinds are counted the Gemini way for every provider:

- ``prompt``: every input token, cached ones included (Gemini ``promptTokenCount``, OpenAI
  ``prompt_tokens``, Anthropic ``input_tokens`` + ``cache_read_input_tokens`` +
  ``cache_creation_input_tokens``);
- ``cached``: the part of the prompt read from a cache (``cachedContentTokenCount``,
  ``prompt_tokens_details.cached_tokens``, ``cache_read_input_tokens``);
- ``thoughts``: reasoning tokens (``thoughtsTokenCount``,
  ``completion_tokens_details.reasoning_tokens``; Anthropic reports none apart);
- ``candidates``: the answer's tokens, thoughts left out (``candidatesTokenCount``,
  ``completion_tokens`` - reasoning, ``output_tokens``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from cassettes._cassette import Exchange, JsonBody, SseBody
from cassettes._model_url import GENERATE_METHODS, model_call

__all__ = ["TOKEN_KINDS", "CallFigures", "call_figures", "is_model_call"]

TOKEN_KINDS = ("prompt", "candidates", "thoughts", "cached")
"""The token kinds every report counts, in report order."""


@dataclass(frozen=True)
class CallFigures:
    """One recorded model call: its model, tokens by kind and recorded timing."""

    model: str
    """The model the request named ('' when it named none)."""
    tokens: dict[str, int]
    """Tokens by kind (:data:`TOKEN_KINDS`); every kind present."""
    has_usage: bool
    """Whether the response carried usage fields at all."""
    first_chunk_seconds: float
    """Recorded seconds from the request to its first response event (or whole body)."""
    start: float
    """Recorded start, seconds since the epoch."""
    end: float
    """Recorded end of the response, seconds since the epoch."""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _gemini(usage: dict[str, Any]) -> dict[str, int]:
    return {
        "prompt": _int(usage.get("promptTokenCount")),
        "candidates": _int(usage.get("candidatesTokenCount")),
        "thoughts": _int(usage.get("thoughtsTokenCount")),
        "cached": _int(usage.get("cachedContentTokenCount")),
    }


def _openai(usage: dict[str, Any]) -> dict[str, int]:
    details = usage.get("completion_tokens_details") or {}
    prompt_details = usage.get("prompt_tokens_details") or {}
    thoughts = _int(details.get("reasoning_tokens")) if isinstance(details, dict) else 0
    cached = _int(prompt_details.get("cached_tokens")) if isinstance(prompt_details, dict) else 0
    return {
        "prompt": _int(usage.get("prompt_tokens")),
        "candidates": max(_int(usage.get("completion_tokens")) - thoughts, 0),
        "thoughts": thoughts,
        "cached": cached,
    }


def _anthropic(usage: dict[str, Any]) -> dict[str, int]:
    read = _int(usage.get("cache_read_input_tokens"))
    written = _int(usage.get("cache_creation_input_tokens"))
    return {
        "prompt": _int(usage.get("input_tokens")) + read + written,
        "candidates": _int(usage.get("output_tokens")),
        "thoughts": 0,
        "cached": read,
    }


def _tokens_of(document: Any) -> dict[str, int] | None:
    """Tokens by kind in one response document (or stream event); None without usage."""
    if not isinstance(document, dict):
        return None
    if isinstance(gemini := document.get("usageMetadata"), dict):
        return _gemini(gemini)
    for holder in (document, document.get("message"), document.get("delta")):
        usage = holder.get("usage") if isinstance(holder, dict) else None
        if not isinstance(usage, dict):
            continue
        if "prompt_tokens" in usage or "completion_tokens" in usage:
            return _openai(usage)
        if "input_tokens" in usage or "output_tokens" in usage:
            return _anthropic(usage)
    return None


def _stream_tokens(events: list[Any]) -> dict[str, int] | None:
    """A stream's tokens: Gemini repeats running totals, OpenAI sends them in its last
    chunk, Anthropic sends the input in ``message_start`` and the output in
    ``message_delta``; the largest count of each kind is the stream's."""
    found: dict[str, int] | None = None
    for data in events:
        tokens = _tokens_of(data)
        if tokens is not None:
            found = tokens if found is None else {k: max(found[k], tokens[k]) for k in TOKEN_KINDS}
    return found


def _requested_model(exchange: Exchange) -> str:
    called = model_call(exchange.request.url)
    if called is not None:
        return called.model
    body = exchange.request.body
    if isinstance(body, JsonBody) and isinstance(body.value, dict):
        model = body.value.get("model")
        if isinstance(model, str):
            return model
    return ""


def _start(exchange: Exchange) -> float:
    try:
        return dt.datetime.fromisoformat(exchange.recorded_at).timestamp()
    except ValueError:
        return 0.0


def is_model_call(exchange: Exchange) -> bool:
    """Whether ``exchange`` is a model generating content (not a tool's HTTP call, a token
    count or an embedding)."""
    if exchange.origin == "tool":
        return False
    called = model_call(exchange.request.url)
    if called is not None:
        return called.method in GENERATE_METHODS
    path = exchange.request.url.split("?", 1)[0]
    return path.endswith(("/chat/completions", "/v1/messages", "/messages"))


def call_figures(exchange: Exchange) -> CallFigures:
    """The recorded figures of one model call (see the module docstring)."""
    body = exchange.response.body
    tokens: dict[str, int] | None = None
    first = exchange.duration_ms / 1000.0
    if isinstance(body, SseBody):
        tokens = _stream_tokens([event.data for event in body.events])
        if body.events:
            first = body.events[0].offset_ms / 1000.0
    elif isinstance(body, JsonBody):
        tokens = _tokens_of(body.value)
    start = _start(exchange)
    return CallFigures(
        model=_requested_model(exchange),
        tokens=tokens or dict.fromkeys(TOKEN_KINDS, 0),
        has_usage=tokens is not None,
        first_chunk_seconds=first,
        start=start,
        end=start + exchange.duration_ms / 1000.0,
    )
