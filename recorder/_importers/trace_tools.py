"""Tool results from a trace's ``execute_tool`` spans, for the calls no model request shows.

An eval case's tool responses come from the model requests that carry them back to the
model. A tool whose result no later model call carries (one that ends the turn with
``skip_summarization``, the last call before a failure) would leave mock-mode tools with
nothing to answer at replay; its ``execute_tool`` span holds the result production got
(``gen_ai.tool.call.result``, or ``gcp.vertex.agent.tool_response`` under the legacy
schema), and that result is written into the case after its call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cassettes import _genai_types as genai_types
from cassettes._evalset import EvalCase, InvocationEvent, InvocationEvents
from recorder._importers.trace_spans import TraceSpan

__all__ = ["TracedTool", "traced_tools", "with_tool_results"]

_SESSION_KEYS = ("gen_ai.conversation.id", "gcp.vertex.agent.session_id")


@dataclass
class TracedTool:
    """One tool call a span recorded, with its result."""

    name: str
    args: dict[str, Any]
    result: dict[str, Any]


def _json_object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _tool(span: TraceSpan) -> TracedTool | None:
    name = span.text("gen_ai.tool.name")
    if not name or not span.name.startswith("execute_tool ") or "(merged" in span.name:
        return None
    args = _json_object(span.attributes.get("gen_ai.tool.call.arguments"))
    result = _json_object(span.attributes.get("gen_ai.tool.call.result"))
    if args is None:
        args = _json_object(span.attributes.get("gcp.vertex.agent.tool_call_args"))
    if result is None:
        result = _json_object(span.attributes.get("gcp.vertex.agent.tool_response"))
    if args is None or not result:  # content capture off: "{}"
        return None
    return TracedTool(name=name, args=args, result=result)


def traced_tools(spans: list[TraceSpan]) -> dict[str, list[TracedTool]]:
    """Per session (found on the span or its ancestors), its traced tool calls in order."""
    by_id = {span.span_id: span for span in spans}

    def session_of(span: TraceSpan | None) -> str | None:
        seen = 0
        while span is not None and seen < 64:
            for key in _SESSION_KEYS:
                value = span.text(key)
                if value:
                    return value
            span = by_id.get(span.parent_id or "")
            seen += 1
        return None

    found: dict[str, list[TracedTool]] = {}
    for span in sorted(spans, key=lambda s: s.start_ns):
        tool = _tool(span)
        session = session_of(span) if tool is not None else None
        if tool is not None and session is not None:
            found.setdefault(session, []).append(tool)
    return found


def _response_event(author: str, tool: TracedTool) -> InvocationEvent:
    response = genai_types.FunctionResponse(name=tool.name, response=tool.result)
    part = genai_types.Part(function_response=response)
    return InvocationEvent(author=author, content=genai_types.Content(role="user", parts=[part]))


def with_tool_results(case: EvalCase, tools: list[TracedTool]) -> EvalCase:
    """``case`` with a response event after each tool call no event answers, taken from
    the first unused traced call of that tool with equal arguments."""
    unused = list(tools)
    for invocation in case.conversation or []:
        data = invocation.intermediate_data
        if not isinstance(data, InvocationEvents):
            continue
        answered: dict[str, int] = {}
        for event in data.invocation_events:
            for part in (event.content.parts or []) if event.content else []:
                if part.function_response is not None:
                    name = part.function_response.name or ""
                    answered[name] = answered.get(name, 0) + 1
        events: list[InvocationEvent] = []
        for event in data.invocation_events:
            events.append(event)
            for part in (event.content.parts or []) if event.content else []:
                call = part.function_call
                if call is None:
                    continue
                name = call.name or ""
                match = next(
                    (t for t in unused if t.name == name and t.args == (call.args or {})), None
                )
                if match is not None:
                    unused.remove(match)
                if answered.get(name, 0) > 0:
                    answered[name] -= 1
                elif match is not None:
                    events.append(_response_event(event.author, match))
        data.invocation_events = events
    return case
