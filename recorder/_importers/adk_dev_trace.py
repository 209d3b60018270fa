"""Read ADK's dev-server trace view: ``GET /dev/apps/{app}/debug/trace/session/{id}``.

``adk web`` answers with a JSON list of spans (``name``, integer ``trace_id`` /
``span_id`` / ``parent_span_id``, ``start_time`` / ``end_time`` in nanoseconds,
``attributes`` as plain values, and ``logs``: the completion-details records emitted under
the span, whose attributes carry the messages even when content capture is off).
"""

from __future__ import annotations

from typing import Any

from cassettes._secret_shapes import mask_json
from recorder._importers.trace_spans import TraceLog, TraceSpan, span_id_text

__all__ = ["is_dev_trace", "spans_from_dev_trace"]


def is_dev_trace(document: object) -> bool:
    """A list of ADK dev-server spans (each with ``name``, ``span_id`` and ``attributes``)."""
    return (
        isinstance(document, list)
        and bool(document)
        and all(
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and "span_id" in item
            and isinstance(item.get("attributes"), dict)
            for item in document
        )
    )


def _logs(raw: Any) -> list[TraceLog]:
    found: list[TraceLog] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            attributes = item.get("attributes")
            found.append(
                TraceLog(
                    event_name=str(item.get("event_name") or ""),
                    attributes=mask_json(attributes) if isinstance(attributes, dict) else {},
                    body=mask_json(item.get("body")),
                )
            )
    return found


def spans_from_dev_trace(document: list[dict[str, Any]]) -> list[TraceSpan]:
    """The spans of a dev-server trace view (see :func:`is_dev_trace`)."""
    spans: list[TraceSpan] = []
    for item in document:
        parent = item.get("parent_span_id")
        spans.append(
            TraceSpan(
                name=item["name"],
                span_id=span_id_text(item.get("span_id")),
                trace_id=span_id_text(item.get("trace_id")),
                parent_id=span_id_text(parent) if parent is not None else None,
                start_ns=int(item.get("start_time") or 0),
                end_ns=int(item.get("end_time") or 0),
                attributes=mask_json(item["attributes"]),
                logs=_logs(item.get("logs")),
            )
        )
    return spans
