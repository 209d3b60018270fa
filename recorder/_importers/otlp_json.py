"""Read OTLP JSON traces: the OpenTelemetry Collector's ``file`` exporter (one
``{"resourceSpans": ...}`` or ``{"resourceLogs": ...}`` request per line) or one such
document (``MessageToDict`` of an ``ExportTraceServiceRequest``, pretty-printed or not).

Log records are attached to the span they name (``spanId``): ADK writes message content
into log records beside its ``generate_content`` span in its event-only capture mode.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cassettes._errors import InputError
from recorder._importers.trace_spans import (
    TraceLog,
    TraceSpan,
    any_value,
    attribute_map,
    span_id_text,
)

__all__ = ["is_otlp_document", "otlp_documents", "spans_from_otlp"]

_KEYS = ("resourceSpans", "resourceLogs")


def is_otlp_document(document: object) -> bool:
    """An OTLP export request in JSON: an object with ``resourceSpans`` or ``resourceLogs``."""
    return isinstance(document, dict) and any(key in document for key in _KEYS)


def otlp_documents(text: str) -> list[dict[str, Any]] | None:
    """The OTLP requests in ``text`` (one document, or one per line), or None when it is
    not OTLP JSON. A torn last line (a collector killed mid-write) is skipped."""
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if is_otlp_document(whole):
        return [whole]
    if whole is not None:
        return None
    lines = [line for line in text.splitlines() if line.strip()]
    documents: list[dict[str, Any]] = []
    for number, line in enumerate(lines):
        try:
            document = json.loads(line)
        except ValueError:
            if number == len(lines) - 1 and documents:
                continue
            return None
        if not is_otlp_document(document):
            return None
        documents.append(document)
    return documents or None


def _span(raw: dict[str, Any]) -> TraceSpan:
    status = raw.get("status") or {}
    parent = raw.get("parentSpanId")
    return TraceSpan(
        name=str(raw.get("name") or ""),
        span_id=span_id_text(raw.get("spanId")),
        trace_id=span_id_text(raw.get("traceId")),
        parent_id=span_id_text(parent) if parent else None,
        start_ns=int(raw.get("startTimeUnixNano") or 0),
        end_ns=int(raw.get("endTimeUnixNano") or 0),
        attributes=attribute_map(raw.get("attributes")),
        error=status.get("code") in ("STATUS_CODE_ERROR", 2),
    )


def _log(raw: dict[str, Any]) -> tuple[str, TraceLog]:
    body = any_value(raw.get("body"))
    return span_id_text(raw.get("spanId")), TraceLog(
        event_name=str(raw.get("eventName") or ""),
        attributes=attribute_map(raw.get("attributes")),
        body=body,
    )


def spans_from_otlp(documents: list[dict[str, Any]], *, path: Path) -> list[TraceSpan]:
    """Every span of the documents, with the log records emitted under it.

    Raises:
        InputError: a span is not an object (names the document and the place).
    """
    spans: list[TraceSpan] = []
    logs: dict[str, list[TraceLog]] = {}
    for number, document in enumerate(documents):
        for r, resource in enumerate(document.get("resourceSpans") or []):
            for s, scope in enumerate(resource.get("scopeSpans") or []):
                for k, raw in enumerate(scope.get("spans") or []):
                    if not isinstance(raw, dict):
                        raise InputError(
                            "a span is not a JSON object",
                            path=path,
                            where=f"line {number + 1}: resourceSpans[{r}].scopeSpans[{s}]"
                            f".spans[{k}]",
                            fix="Export the trace with the OpenTelemetry Collector's file "
                            "exporter (OTLP JSON)",
                        )
                    spans.append(_span(raw))
        for resource in document.get("resourceLogs") or []:
            for scope in resource.get("scopeLogs") or []:
                for raw in scope.get("logRecords") or []:
                    if isinstance(raw, dict) and raw.get("spanId"):
                        owner, record = _log(raw)
                        logs.setdefault(owner, []).append(record)
    for span in spans:
        span.logs = logs.get(span.span_id, [])
    return spans
