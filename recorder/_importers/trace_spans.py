"""One span of a trace, whatever file it came from: the shape the trace importers share.

A trace arrives as OTLP JSON (the OpenTelemetry Collector's file exporter, protobuf's
``MessageToDict``) or as ADK's dev-server trace view; each reader turns its spans into
:class:`TraceSpan` values, attributes decoded to plain JSON values and every string masked
by rec's redaction engine as it is read, so no credential a span carried goes further.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from cassettes._secret_shapes import mask_json

__all__ = ["TraceLog", "TraceSpan", "any_value", "attribute_map", "json_value", "span_id_text"]


@dataclass
class TraceLog:
    """A log record emitted under a span (ADK puts message content there in some modes)."""

    event_name: str
    attributes: dict[str, Any]
    body: Any = None


@dataclass
class TraceSpan:
    """A span's name, ids, times and attributes (strings masked)."""

    name: str
    span_id: str
    trace_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    logs: list[TraceLog] = field(default_factory=list)
    error: bool = False
    """The span's status is ERROR (the operation failed)."""

    def text(self, key: str) -> str | None:
        """The attribute ``key`` when it is a string."""
        value = self.attributes.get(key)
        return value if isinstance(value, str) else None


def json_value(value: Any, *, not_json: Any = None) -> Any:
    """A JSON-valued attribute or column: JSON text (a span attribute, ``bq query``'s
    output) parsed, a structured value (a log record's, ``bq extract``'s) as it is; text
    that is not JSON gives ``not_json``."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return not_json
    return value


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": ...}``, ``{"kvlistValue": ...}``, ...) as a
    plain value; int64 values arrive as strings and come back as ints."""
    if not isinstance(value, dict):
        return value
    for key, item in value.items():
        if key == "stringValue" or key == "boolValue" or key == "doubleValue":
            return item
        if key == "intValue":
            return int(item)
        if key == "bytesValue":
            return item  # base64 text, as google-genai writes bytes
        if key == "arrayValue":
            return [any_value(v) for v in (item or {}).get("values", [])]
        if key == "kvlistValue":
            return _pairs((item or {}).get("values", []))
    return None


def _pairs(pairs: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for pair in pairs if isinstance(pairs, list) else []:
        if isinstance(pair, dict) and isinstance(pair.get("key"), str):
            found[pair["key"]] = any_value(pair.get("value"))
    return found


def attribute_map(pairs: Any) -> dict[str, Any]:
    """OTLP ``[{"key": ..., "value": AnyValue}]`` as a dict, strings masked."""
    masked: dict[str, Any] = mask_json(_pairs(pairs))
    return masked


def span_id_text(value: Any) -> str:
    """A span or trace id as lower-case hex: OTLP JSON writes hex, protobuf's
    ``MessageToDict`` base64, ADK's dev server an integer."""
    if isinstance(value, int):
        return f"{value:x}"
    text = str(value or "")
    if text and all(c in "0123456789abcdefABCDEF" for c in text) and len(text) in (16, 32):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text
