"""Which streaming mode an eval case was recorded in, so that replay runs ADK in the same one.

Streaming is a run option, not an agent property: ``adk web``'s streaming toggle (``/run_sse``
with ``"streaming": true``) and ``RunConfig(streaming_mode=StreamingMode.SSE)`` make ADK
call ``:streamGenerateContent?alt=sse``; without it ADK calls ``:generateContent``. A replay
in the other mode misses on every call (``path changed``), so each case is run in the mode
its recording shows:

1. the first model request in the recording whose first user turn is the case's first
   user turn (the root agent's first call, or a sub-agent's, which carries the same
   history) tells: ``streamGenerateContent`` is ``sse``, ``generateContent`` is ``none``;
2. a case found in no request: ``sse`` when every model call of the recording streamed,
   else ``none`` (ADK's eval default).

An OpenAI or Anthropic call streams when its body says ``"stream": true``.
``--streaming sse|none`` overrides both. A case recorded in a Gemini Live session (its first
user turn is a Live session's, and no model request's) is run through ADK's
``Runner.run_live`` with the session's recorded settings (:func:`recorded_live`); ``--streaming``
runs it as a plain case. Pure functions over the cassette models: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

from cassettes._cassette import Exchange, JsonBody
from cassettes._evalset import EvalCase
from cassettes._first_user import first_user_text, turn_text
from cassettes._live import LiveSession
from cassettes._live_extraction import first_live_user_text, live_run_settings
from cassettes._model_url import GENERATE_METHODS, STREAM_METHOD, model_call
from cassettes._providers import provider_route

__all__ = [
    "STREAMING_CHOICES",
    "StreamingChoice",
    "case_streaming",
    "case_text",
    "recorded_live",
    "recorded_streaming",
]

StreamingChoice = Literal["sse", "none"]
"""ADK's ``StreamingMode.SSE`` or ``StreamingMode.NONE`` (``--streaming``)."""
STREAMING_CHOICES: tuple[StreamingChoice, ...] = ("sse", "none")


def _mode_of(exchange: Exchange) -> StreamingChoice | None:
    call = model_call(exchange.request.url)
    if call is not None and call.method in GENERATE_METHODS:
        return "sse" if call.method == STREAM_METHOD else "none"
    path = exchange.request.url.split("?", 1)[0]
    if provider_route(urlsplit(path).path) is not None:  # OpenAI, Anthropic: the body says
        body = exchange.request.body
        value = body.value if isinstance(body, JsonBody) else None
        return "sse" if isinstance(value, dict) and value.get("stream") is True else "none"
    return None


def _first_user_text(exchange: Exchange) -> str | None:
    body = exchange.request.body
    return first_user_text(body.value) if isinstance(body, JsonBody) else None


def case_text(case: EvalCase) -> str:
    """The text of the case's first user turn, as its requests are found by ('' for none)."""
    conversation = case.conversation or []
    if not conversation:
        return ""
    return turn_text(conversation[0].user_content.model_dump(exclude_none=True))


def case_streaming(case: EvalCase, exchanges: Sequence[Exchange]) -> StreamingChoice | None:
    """Rule 1 alone: the mode of the first model request in ``exchanges`` whose first user
    turn is the case's first user turn; None when there is none."""
    wanted = case_text(case)
    if not wanted:
        return None
    for exchange in exchanges:
        if exchange.origin != "tool" and (mode := _mode_of(exchange)) is not None:
            if _first_user_text(exchange) == wanted:
                return mode
    return None


def recorded_streaming(case: EvalCase, exchanges: Sequence[Exchange]) -> StreamingChoice:
    """The streaming mode ``case`` was recorded in, read from the recording's exchanges.

    Args:
        case: the eval case (its first invocation's user turn identifies its requests).
        exchanges: the recordings' exchanges, in arrival order (tools' own calls ignored).

    Returns:
        ``"sse"`` or ``"none"`` (see the module docstring for the rules).
    """
    found = case_streaming(case, exchanges)
    if found is not None:
        return found
    modes = [
        mode
        for exchange in exchanges
        if exchange.origin != "tool" and (mode := _mode_of(exchange)) is not None
    ]
    if modes and all(mode == "sse" for mode in modes):
        return "sse"
    return "none"


def recorded_live(
    case: EvalCase, exchanges: Sequence[Exchange], sessions: Sequence[LiveSession]
) -> dict[str, Any] | None:
    """The ``RunConfig`` settings of the Live session ``case`` was recorded in
    (:func:`cassettes._live_extraction.live_run_settings`), or None when it is not a Live case.

    A case is a Live case when its first user turn's text is the first user turn of one of
    ``sessions`` (its transcription, for audio) and of no model request in ``exchanges``.
    """
    conversation = case.conversation or []
    if not conversation or not sessions:
        return None
    content = conversation[0].user_content
    wanted = " ".join(p.text for p in content.parts or [] if p.text).strip()
    if not wanted:
        return None
    for exchange in exchanges:
        if exchange.origin != "tool" and _mode_of(exchange) is not None:
            if (_first_user_text(exchange) or "").strip() == wanted:
                return None
    for session in sessions:
        if first_live_user_text(session) == wanted:
            return live_run_settings(session)
    return None
