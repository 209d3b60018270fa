"""An ADK agent's trace as recorded model calls, one session at a time.

ADK writes one of two telemetry schemas (``google/adk/telemetry/tracing.py``):

- legacy (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``): a ``call_llm`` span per model call
  holding the whole request (``gcp.vertex.agent.llm_request``: model, config, contents)
  and the response (``gcp.vertex.agent.llm_response``). A turn a ``before_model_callback``
  answers leaves a ``call_llm`` span too, with the canned reply, but no ``generate_content``
  span under it: that is no model call, and is not rebuilt;
- the default (GenAI semantic conventions): a ``generate_content`` span per model call
  with ``gen_ai.input.messages``, ``gen_ai.output.messages`` (one per streamed chunk),
  ``gen_ai.system_instructions`` and ``gen_ai.tool.definitions``, in the span's attributes
  or in the log record emitted under it, and no generation config.

Spans are grouped by session (``gen_ai.conversation.id`` / ``gcp.vertex.agent.session_id``);
each model call becomes an :class:`~cassettes.Exchange` whose ``not_compared`` names the
parts of the request the schema does not keep. What a span lacks (content capture off) is
said in one line naming the span and the setting, and makes the session unreplayable.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from google.genai import types

from cassettes import _cassette as cassette
from cassettes._evalset import EvalCase
from recorder._importers.trace_requests import (
    LEGACY_GAPS,
    SEMCONV_GAPS,
    RequestBodies,
    config_from_semconv,
    contents_from_semconv,
    response_from_legacy,
    responses_from_semconv,
)
from recorder._importers.trace_spans import TraceSpan, json_value

__all__ = ["CAPTURE_SETTINGS", "TracedSession", "traced_sessions"]

log = logging.getLogger(__name__)

GEMINI_API = "https://generativelanguage.googleapis.com"
"""Where the rebuilt model calls are addressed (the Gemini API; replay keys on the path)."""

CAPTURE_SETTINGS = (
    "set ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true (legacy schema) or "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_AND_EVENT in the traced "
    "service, and trace the bug again"
)
"""The settings that put message content into ADK's spans."""

_SESSION_KEYS = ("gen_ai.conversation.id", "gcp.vertex.agent.session_id")
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_RESPONSE_SOURCE = "adk.experimental.response.source"


@dataclass
class TracedSession:
    """One session's model calls as exchanges, and what the trace could not give."""

    session_id: str
    schema: str
    """``legacy`` (``call_llm`` spans) or ``semconv`` (``generate_content`` spans)."""
    started_ns: int
    exchanges: list[cassette.Exchange] = field(default_factory=list)
    user_id: str | None = None
    lacks: list[str] = field(default_factory=list)
    """One line per thing the trace lacks (the span, and the setting to turn on)."""
    unreplayable: str | None = None
    """Why the session cannot be replayed (set when a model call could not be rebuilt)."""
    invocations: list[str] = field(default_factory=list)
    """The ids of the session's turns (``gcp.vertex.agent.invocation_id``), in order."""
    state: dict[str, Any] | None = None
    """The session's state when its first turn began, where the source holds it."""
    case: EvalCase | None = None
    """The session's eval case as its source holds it, for a session whose model calls
    cannot be rebuilt (it fails at replay with :attr:`unreplayable`)."""


def _session_of(span: TraceSpan) -> str | None:
    for key in _SESSION_KEYS:
        value = span.text(key)
        if value:
            return value
    return None


def _iso(nanoseconds: int) -> str:
    return datetime.fromtimestamp(nanoseconds / 1e9, tz=timezone.utc).isoformat()


def _exchange(
    span: TraceSpan,
    model_path: str,
    body: dict[str, Any],
    chunks: list[dict[str, Any]],
    *,
    stream: bool,
    gaps: tuple[str, ...],
) -> cassette.Exchange:
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    duration = max(0.0, (span.end_ns - span.start_ns) / 1e6)
    response_body: cassette.JsonBody | cassette.SseBody
    if stream:
        step = duration / max(1, len(chunks))
        response_body = cassette.SseBody(
            events=[
                cassette.SseEvent(offset_ms=round(step * (n + 1), 3), data=chunk)
                for n, chunk in enumerate(chunks)
            ]
        )
        content_type = "text/event-stream"
    else:
        response_body = cassette.JsonBody(value=chunks[-1])
        content_type = "application/json; charset=UTF-8"
    return cassette.Exchange(
        id=0,
        recorded_at=_iso(span.start_ns),
        duration_ms=round(duration, 3),
        request=cassette.RecordedRequest(
            method="POST",
            url=f"{GEMINI_API}/v1beta/{model_path}:{method}",
            headers={"content-type": "application/json"},
            body=cassette.JsonBody(value=body),
        ),
        response=cassette.RecordedResponse(
            status=200, headers={"content-type": content_type}, body=response_body
        ),
        not_compared=list(gaps),
    )


def _streamed(exchange: cassette.Exchange) -> cassette.Exchange:
    """``exchange`` as the streamed call it was: its answer as one event."""
    body = exchange.response.body
    if not isinstance(body, cassette.JsonBody):
        return exchange
    url = exchange.request.url.replace(":generateContent", ":streamGenerateContent?alt=sse")
    event = cassette.SseEvent(offset_ms=exchange.duration_ms, data=body.value)
    response = exchange.response.model_copy(
        update={
            "headers": {"content-type": "text/event-stream"},
            "body": cassette.SseBody(events=[event]),
        }
    )
    request = exchange.request.model_copy(update={"url": url})
    return exchange.model_copy(update={"request": request, "response": response})


def _lacks_content(span: TraceSpan, session: str, *, log_records: bool = False) -> str:
    """The reason a span holds no messages. ``log_records``: the schema's capture can also
    write them only to log records beside the span (EVENT_ONLY), which a span alone does
    not tell from capture off."""
    why = "content capture was off when it was traced"
    if log_records:
        why += (
            ", or it wrote the messages only to log records (EVENT_ONLY) and the file holds "
            "no log record of this call (export the service's logs with its spans)"
        )
    return (
        f"span {span.name!r} ({span.span_id}, session {session}) carries no message "
        f"content: {why}; {CAPTURE_SETTINGS}"
    )


def _answered_by_callback(span: TraceSpan, children: dict[str, list[TraceSpan]]) -> bool:
    """A legacy ``call_llm`` span that no model call made (a ``before_model_callback``
    answered): named so by ADK's experimental attribute, or with no ``generate_content``
    span under it and a reply without usage or model version."""
    source = span.text(_RESPONSE_SOURCE)
    if source is not None:
        return source == "before_model_callback"
    if any(c.name.startswith("generate_content") for c in children.get(span.span_id, [])):
        return False
    response = json_value(span.attributes.get("gcp.vertex.agent.llm_response"))
    return isinstance(response, dict) and not (
        response.get("usage_metadata") or response.get("model_version")
    )


def _legacy_exchange(
    span: TraceSpan, traced: TracedSession, bodies: RequestBodies
) -> cassette.Exchange | None:
    request = json_value(span.attributes.get("gcp.vertex.agent.llm_request"))
    response = json_value(span.attributes.get("gcp.vertex.agent.llm_response"))
    if not isinstance(request, dict) or not request.get("contents"):
        traced.lacks.append(_lacks_content(span, traced.session_id))
        traced.unreplayable = traced.unreplayable or traced.lacks[-1]
        return None
    if not isinstance(response, dict) or span.error:
        traced.lacks.append(
            f"span 'call_llm' ({span.span_id}, session {traced.session_id}) holds no "
            "response (the model call failed): the turn it belongs to is not rebuilt"
        )
        traced.unreplayable = traced.unreplayable or traced.lacks[-1]
        return None
    contents = [types.Content.model_validate(c) for c in request.get("contents") or []]
    if any(not c.parts for c in contents):
        traced.lacks.append(
            f"span 'call_llm' ({span.span_id}, session {traced.session_id}): a turn holds "
            "only inline media, which the legacy schema leaves out of the trace; its "
            "requests will not match at replay"
        )
    config_raw = dict(request.get("config") or {})
    config_raw.pop("http_options", None)
    config = types.GenerateContentConfig.model_validate(config_raw)
    model_path, body = bodies.build(str(request.get("model") or ""), contents, config)
    chunk = response_from_legacy(response)
    stream = response.get("partial") is False  # ADK's aggregate of a streamed call
    return _exchange(span, model_path, body, [chunk], stream=stream, gaps=LEGACY_GAPS)


def _stripped(definitions: Any) -> list[str]:
    """The functions whose declaration lost its parameters (ADK's no-content view)."""
    items = definitions if isinstance(definitions, list) else []
    return [
        str(d.get("name"))
        for d in items
        if isinstance(d, dict) and d.get("type") == "function" and d.get("parameters") is None
    ]


def _semconv_value(span: TraceSpan, key: str) -> Any:
    """``key`` from the span, else from a log record under it; a tool definition list
    stripped of its parameters gives way to a whole one (event-only capture keeps the
    content in the log record and the stripped list on the span)."""
    found = [json_value(span.attributes.get(key))]
    found += [json_value(r.attributes[key]) for r in span.logs if key in r.attributes]
    present = [value for value in found if value is not None]
    whole = [value for value in present if not _stripped(value)]
    return (whole or present or [None])[0]


def _semconv_exchange(
    span: TraceSpan, traced: TracedSession, bodies: RequestBodies
) -> cassette.Exchange | None:
    messages = _semconv_value(span, "gen_ai.input.messages")
    if not isinstance(messages, list) or not messages:
        traced.lacks.append(_lacks_content(span, traced.session_id, log_records=True))
        traced.unreplayable = traced.unreplayable or traced.lacks[-1]
        return None
    definitions = _semconv_value(span, "gen_ai.tool.definitions")
    stripped = _stripped(definitions)
    if stripped:
        traced.lacks.append(
            f"span {span.name!r} ({span.span_id}, session {traced.session_id}): the tool "
            f"declarations of {', '.join(map(str, stripped))} were stripped from the "
            f"trace; {CAPTURE_SETTINGS}"
        )
        traced.unreplayable = traced.unreplayable or traced.lacks[-1]
        return None
    outputs = _semconv_value(span, "gen_ai.output.messages")
    if not isinstance(outputs, list) or not outputs:
        traced.lacks.append(
            f"span {span.name!r} ({span.span_id}, session {traced.session_id}) holds no "
            "response (the model call failed): the turn it belongs to is not rebuilt"
        )
        traced.unreplayable = traced.unreplayable or traced.lacks[-1]
        return None
    model = span.text("gen_ai.request.model") or ""
    system = _semconv_value(span, "gen_ai.system_instructions")
    config = config_from_semconv(system, definitions)
    model_path, body = bodies.build(model, contents_from_semconv(messages), config)
    prompt = span.attributes.get("gen_ai.usage.input_tokens")
    output = span.attributes.get("gen_ai.usage.output_tokens")
    usage: dict[str, int] = {}
    if isinstance(prompt, int):
        usage["prompt_token_count"] = prompt
    if isinstance(output, int):
        usage["candidates_token_count"] = output
    if usage:
        usage["total_token_count"] = sum(usage.values())
    chunks = responses_from_semconv(outputs, usage=usage, model=model)
    return _exchange(span, model_path, body, chunks, stream=len(chunks) > 1, gaps=SEMCONV_GAPS)


def _user_id(spans: list[TraceSpan]) -> str | None:
    for span in spans:
        for record in span.logs:
            value = record.attributes.get("user.id")
            if isinstance(value, str) and value:
                return value
    return None


def _session(
    session_id: str,
    spans: list[TraceSpan],
    children: dict[str, list[TraceSpan]],
    bodies: RequestBodies,
) -> TracedSession:
    spans = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
    legacy = any(s.name == "call_llm" for s in spans)
    traced = TracedSession(
        session_id=session_id,
        schema="legacy" if legacy else "semconv",
        started_ns=spans[0].start_ns,
        user_id=_user_id(spans),
    )
    for span in spans:
        turn = span.text("gcp.vertex.agent.invocation_id")
        if turn and turn not in traced.invocations:
            traced.invocations.append(turn)
    for span in spans:
        exchange: cassette.Exchange | None = None
        if legacy and span.name == "call_llm":
            if not _answered_by_callback(span, children):
                exchange = _legacy_exchange(span, traced, bodies)
        elif not legacy and span.name.startswith("generate_content"):
            exchange = _semconv_exchange(span, traced, bodies)
        if traced.unreplayable is not None:
            break  # one line says why; the session's case fails with it at replay
        if exchange is not None:
            traced.exchanges.append(exchange)
    if any(isinstance(e.response.body, cassette.SseBody) for e in traced.exchanges):
        # ADK streams every call of a run or none; a streamed call that came back in one
        # chunk reads like a whole answer in the trace.
        traced.exchanges = [_streamed(e) for e in traced.exchanges]
    return traced


def traced_sessions(spans: list[TraceSpan]) -> list[TracedSession]:
    """The sessions of a trace that hold a model call (or a span that should have held
    one), in the order they started."""
    children: dict[str, list[TraceSpan]] = {}
    for span in spans:
        if span.parent_id:
            children.setdefault(span.parent_id, []).append(span)
    by_session: dict[str, list[TraceSpan]] = {}
    for span in spans:
        if span.name == "call_llm" or span.name.startswith("generate_content"):
            session = _session_of(span)
            if session:
                by_session.setdefault(session, []).append(span)
    bodies = RequestBodies()
    sessions = [_session(sid, found, children, bodies) for sid, found in by_session.items()]
    sessions = [s for s in sessions if s.exchanges or s.unreplayable]
    return sorted(sessions, key=lambda s: s.started_ns)
