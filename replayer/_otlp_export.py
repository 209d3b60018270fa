"""The replay's spans as OTLP JSON (``rec replay --otlp FILE``), marked as replayed.

ADK traces every run with OpenTelemetry (``invocation``, ``call_llm`` /
``generate_content``, ``execute_tool`` spans). While a replay runs, :func:`exporting_spans`
collects those spans from the process's tracer provider (it installs one when the process
has none) and, at the end, writes them in the OpenTelemetry Collector's file-exporter shape:
one ``{"resourceSpans": [...]}`` object per line, encoded by OpenTelemetry's own OTLP
encoder (hex trace and span ids, as the OTLP JSON mapping asks). Every span carries
``rec.replayed = true``, ``rec.cassette`` (the recordings it was answered from) and, for a
case's spans, ``rec.eval_set_id`` / ``rec.eval_id``; the resource carries ``rec.replayed``
too. So a trace UI (Phoenix, Langfuse, Jaeger) shows a CI replay beside the production
trace it came from.

The SDK and the encoder come with google-adk (``opentelemetry-sdk``,
``opentelemetry-exporter-otlp-proto-common``); they are imported only when asked for.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassettes._atomic_write import write_atomic
from cassettes._errors import InputError

__all__ = ["CaseSpans", "case_spans", "exporting_spans"]

REPLAYED = "rec.replayed"
"""The attribute that marks a replay's spans (and their resource)."""


@dataclass(frozen=True)
class CaseSpans:
    """What the spans started while a case runs are labelled with."""

    eval_set_id: str
    eval_id: str
    cassettes: tuple[str, ...]


_CASE: contextvars.ContextVar[CaseSpans | None] = contextvars.ContextVar("rec_case", default=None)


@contextlib.contextmanager
def case_spans(label: CaseSpans) -> Iterator[None]:
    """Label the spans started in this context (the case's task and what it starts)."""
    token = _CASE.set(label)
    try:
        yield
    finally:
        _CASE.reset(token)


class _Collector:
    """What a replay collects: the spans ended while it is on. The SDK span processor
    (:func:`_processor`) feeds it; a provider cannot drop a processor, so it turns off."""

    def __init__(self, cassettes: Sequence[str]) -> None:
        self.cassettes = list(cassettes)
        self.spans: list[Any] = []
        self.on = True

    def started(self, span: Any) -> None:
        """Mark a span started while on (and name its case, if any)."""
        if not self.on:
            return
        case = _CASE.get()
        span.set_attribute(REPLAYED, True)
        span.set_attribute("rec.cassette", list(case.cassettes if case else self.cassettes))
        if case is not None:
            span.set_attribute("rec.eval_set_id", case.eval_set_id)
            span.set_attribute("rec.eval_id", case.eval_id)

    def ended(self, span: Any) -> None:
        """Keep a span ended while on."""
        if self.on:
            self.spans.append(span)


def _processor(collector: _Collector) -> Any:
    """An SDK ``SpanProcessor`` feeding ``collector`` (the SDK imported on first use)."""
    from opentelemetry.sdk.trace import SpanProcessor

    class _Feeding(SpanProcessor):
        def on_start(self, span: Any, parent_context: Any = None) -> None:
            collector.started(span)

        def on_end(self, span: Any) -> None:
            collector.ended(span)

    return _Feeding()


def _provider() -> Any:
    """The process's SDK tracer provider (installed, with rec's resource, when none is)."""
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError as exc:  # pragma: no cover - google-adk brings the SDK
        raise InputError(
            f"--otlp needs the OpenTelemetry SDK ({exc.name} is not installed)",
            path="--otlp",
            fix="Install rec with its adk extra (google-adk brings opentelemetry-sdk)",
        ) from None
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider(
            resource=Resource.create({"service.name": "rec-replay", REPLAYED: True})
        )
        trace.set_tracer_provider(provider)
    return provider


@contextlib.contextmanager
def exporting_spans(file: Path, *, cassettes: Sequence[Path]) -> Iterator[None]:
    """Collect the spans of the block and write them to ``file`` as OTLP JSON (see the
    module docstring); written atomically, also when the block fails.

    Raises:
        InputError: the OpenTelemetry SDK is not installed.
    """
    collector = _Collector([c.name for c in cassettes])
    _provider().add_span_processor(_processor(collector))
    try:
        yield
    finally:
        collector.on = False
        write_atomic(file, otlp_json_lines(collector.spans, cassettes=collector.cassettes))


def otlp_json_lines(spans: Sequence[Any], *, cassettes: Sequence[str] = ()) -> str:
    """``spans`` (ended SDK spans) as OTLP JSON lines: one ``{"resourceSpans": ...}`` line
    (none for no spans)."""
    if not spans:
        return ""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    document = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource_spans in document.get("resourceSpans", []):
        attributes = resource_spans.setdefault("resource", {}).setdefault("attributes", [])
        names = {a.get("key") for a in attributes}
        if REPLAYED not in names:
            attributes.append({"key": REPLAYED, "value": {"boolValue": True}})
        if "rec.cassette" not in names and cassettes:
            values = [{"stringValue": c} for c in cassettes]
            attributes.append({"key": "rec.cassette", "value": {"arrayValue": {"values": values}}})
        for scope in resource_spans.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _hex_ids(span)
                for link in span.get("links", []):
                    _hex_ids(link)
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def _hex_ids(item: dict[str, Any]) -> None:
    """protobuf's JSON gives bytes as base64; OTLP JSON writes trace and span ids in hex."""
    for key in ("traceId", "spanId", "parentSpanId"):
        if item.get(key):
            item[key] = base64.b64decode(item[key]).hex()
