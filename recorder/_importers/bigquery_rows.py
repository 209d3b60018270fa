"""Read the rows of ADK's BigQuery Agent Analytics plugin, exported as JSON.

The plugin (``google.adk.plugins.bigquery_agent_analytics_plugin``) writes one row per
agent event: ``event_type`` (``USER_MESSAGE_RECEIVED``, ``LLM_REQUEST``, ``LLM_RESPONSE``,
``TOOL_STARTING``, ``TOOL_COMPLETED``, ...), ``session_id``, ``invocation_id``, ``agent``,
``span_id`` (a model call's request and response rows share it, as a tool call's do),
``timestamp``, ``content`` and ``attributes`` (JSON columns: JSON text in a ``bq query
--format=json`` export, objects in a ``bq extract``), ``content_parts`` and
``is_truncated``. An export is JSON lines or one JSON array of rows.

What the rows keep, and so what rebuilds a model call:

- ``LLM_REQUEST.content`` is the plugin's summary by default (each message's text joined by
  ``" | "``, function calls by name only, no tool declarations' order); the whole request
  is there only when the plugin's ``content_formatter`` writes the ``LlmRequest`` as JSON.
  Such rows become the cassette's model calls, through the trace importer's road
  (a ``call_llm`` span per call, :mod:`.adk_trace`).
- ``LLM_RESPONSE.content`` is always a summary (``text: '...' | call: NAME``): the
  ``content_formatter`` is handed the summary, not the reply. The reply is read from the
  next request of the session that carries it in its history, checked against the summary;
  else from the summary when that is unambiguous (one text, or calls whose arguments the
  ``TOOL_STARTING`` rows give).
- ``is_truncated`` marks a row that lost content to ``max_content_length`` or redaction.

A session whose calls cannot be rebuilt keeps the eval case its rows hold (user turns,
tool calls and results, replies) and fails at replay with one line naming the row, the
column and the setting to change.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassettes._errors import InputError
from cassettes._evalset import EvalCase
from cassettes._secret_shapes import mask_json
from recorder._importers.adk_session import evalset_from_sessions
from recorder._importers.selection import select_sessions
from recorder._importers.trace_spans import TraceSpan, json_value
from recorder._importers.trace_tools import TracedTool, traced_tools

if TYPE_CHECKING:
    # google-genai's types: loaded only when rows are rebuilt (rec serve loads the
    # importers' package and no google-genai).
    from recorder._importers.adk_trace import TracedSession

__all__ = ["AnalyticsRow", "FULL_REQUEST_SETTING", "analytics_rows", "bigquery_sessions"]

FULL_REQUEST_SETTING = (
    "set the plugin's BigQueryLoggerConfig(content_formatter=...) to write each LLM_REQUEST "
    "as the whole LlmRequest (content.model_dump(mode='json', exclude_none=True)) and "
    "max_content_length=-1, and log the bug again"
)
"""The plugin settings that put the whole model request into its rows."""

_REPLY = re.compile(
    r"^(?:text: '(?P<text>.*)')?(?P<calls>(?:(?:^| \| )call: [^|' ]+)*)$", re.DOTALL
)
_BLOB = "[UNPARSEABLE_JSON_BLOB]"
_CALL = re.compile(r"call: ([^|' ]+)")


@dataclass
class AnalyticsRow:
    """One row, its JSON columns decoded and every string masked."""

    number: int
    """The row's place in the export (1 = the first)."""
    event_type: str
    session_id: str
    invocation_id: str
    agent: str
    user_id: str
    span_id: str
    timestamp_ns: int
    content: Any
    attributes: dict[str, Any]
    truncated: bool
    content_parts: list[Any]
    error: str = ""
    """The ``error_message`` column."""

    def where(self) -> str:
        return f"row {self.number} ({self.event_type}, session {self.session_id})"


def _items(text: str) -> list[Any] | None:
    if text.startswith("["):
        try:
            document = json.loads(text)
        except ValueError:
            return None
        return document if isinstance(document, list) else None
    items = []
    for line in text.splitlines():
        if line.strip():
            try:
                items.append(json.loads(line))
            except ValueError:
                return None
    return items


def _column(value: Any) -> Any:
    """A JSON column: JSON text (``bq query``), a JSON value (``bq extract``), or text."""
    return json_value(value, not_json=value)


def _nanoseconds(value: Any) -> int:
    """A TIMESTAMP as BigQuery exports it: ISO text, ``... UTC`` text or epoch seconds."""
    if isinstance(value, int | float):
        return int(value * 1e9)
    text = str(value or "").strip()
    try:
        return int(float(text) * 1e9)
    except ValueError:
        pass
    text = text.replace(" UTC", "+00:00").replace("Z", "+00:00")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1e9)


def analytics_rows(data: bytes) -> list[AnalyticsRow] | None:
    """The rows of an export, or ``None`` when ``data`` is not one (every item an object
    with ``event_type`` and ``session_id``)."""
    items = _items(data.decode("utf-8", errors="replace").strip())
    if not items or not all(
        isinstance(i, dict) and isinstance(i.get("event_type"), str) and "session_id" in i
        for i in items
    ):
        return None
    rows = []
    for number, item in enumerate(items, start=1):
        attributes = _column(item.get("attributes"))
        parts = item.get("content_parts")
        rows.append(
            AnalyticsRow(
                number=number,
                event_type=item["event_type"],
                session_id=str(item.get("session_id") or ""),
                invocation_id=str(item.get("invocation_id") or ""),
                agent=str(item.get("agent") or ""),
                user_id=str(item.get("user_id") or ""),
                span_id=str(item.get("span_id") or ""),
                timestamp_ns=_nanoseconds(item.get("timestamp")),
                content=mask_json(_column(item.get("content"))),
                attributes=mask_json(attributes) if isinstance(attributes, dict) else {},
                truncated=item.get("is_truncated") in (True, "true"),
                content_parts=mask_json(parts) if isinstance(parts, list) else [],
                error=str(mask_json(item.get("error_message") or "")),
            )
        )
    # An export's rows come in any order: the plugin's timestamps order them (ties keep
    # the export's order).
    return sorted(rows, key=lambda r: (r.timestamp_ns, r.number))


def _summary(content: dict[str, Any]) -> str:
    """The plugin's summary of a reply (its ``_format_content``), to check a reply read
    from a later request against the ``LLM_RESPONSE`` row."""
    pieces = []
    for part in content.get("parts") or []:
        if not isinstance(part, dict):
            pieces.append("other")
        elif part.get("text"):
            pieces.append(f"text: '{part['text']}'")
        elif isinstance(part.get("function_call"), dict):
            pieces.append(f"call: {part['function_call'].get('name')}")
        elif isinstance(part.get("function_response"), dict):
            pieces.append(f"resp: {part['function_response'].get('name')}")
        else:
            pieces.append("other")
    return " | ".join(pieces) if pieces else "None"


def _reply_summary(row: AnalyticsRow) -> str | None:
    content = row.content
    if isinstance(content, dict) and isinstance(content.get("response"), str):
        return str(content["response"])
    return None


def _cut(row: AnalyticsRow, what: str) -> str:
    """The line for a row the plugin flagged ``is_truncated``."""
    if _BLOB in json.dumps(row.content):
        return (
            f"{row.where()}: is_truncated is true, the plugin's redaction wrote {_BLOB} "
            f"in column content in place of a text of the {what} that opens like JSON "
            "(a reply or an ADK context note starting with '[' or '{'); no plugin setting "
            "turns that redaction off, so this call cannot be rebuilt"
        )
    return (
        f"{row.where()}: is_truncated is true, the {what} in column content lost text "
        "to the plugin's max_content_length or its redaction of secret-looking text; set "
        "max_content_length=-1 and log the bug again"
    )


class _Session:
    """One session's rows, and how its model calls are read from them."""

    def __init__(self, session_id: str, rows: list[AnalyticsRow]) -> None:
        self.session_id = session_id
        self.rows = rows
        self.lacks: str | None = None
        self._used_tools: set[int] = set()

    def fail(self, line: str) -> None:
        self.lacks = self.lacks or line

    def _later_requests(self, after: AnalyticsRow) -> list[dict[str, Any]]:
        return [
            r.content
            for r in self.rows
            if r.event_type == "LLM_REQUEST"
            and r.agent == after.agent  # parallel agents share a history's start
            and r.number != after.number
            and r.timestamp_ns >= after.timestamp_ns
            and isinstance(r.content, dict)
            and isinstance(r.content.get("contents"), list)
        ]

    def _from_history(self, request: AnalyticsRow, summary: str) -> dict[str, Any] | None:
        """The reply as the next request of the session that carries it shows it."""
        sent = request.content.get("contents") or []
        for later in self._later_requests(request):
            history = later["contents"]
            if history[: len(sent)] != sent or len(history) <= len(sent):
                continue
            reply = history[len(sent)]
            if isinstance(reply, dict) and reply.get("role") == "model":
                if _summary(reply) == summary:
                    return dict(reply)
        return None

    def _tool_args(self, after: AnalyticsRow, name: str) -> dict[str, Any] | None:
        for row in self.rows:
            if (
                row.event_type == "TOOL_STARTING"
                and row.number not in self._used_tools
                and row.timestamp_ns >= after.timestamp_ns
                and row.invocation_id == after.invocation_id
                and row.agent == after.agent
                and isinstance(row.content, dict)
                and row.content.get("tool") == name
                and isinstance(row.content.get("args"), dict)
                and not row.truncated
            ):
                self._used_tools.add(row.number)
                return dict(row.content["args"])
        return None

    def _from_summary(self, response: AnalyticsRow, summary: str) -> dict[str, Any] | None:
        """The reply from its summary where that is unambiguous: at most one text (with no
        ``' | `` inside it), then function calls whose arguments ``TOOL_STARTING`` rows
        give."""
        match = _REPLY.match(summary)
        if match is None or "' | " in (match["text"] or ""):
            return None
        parts: list[dict[str, Any]] = []
        if match["text"] is not None:
            parts.append({"text": match["text"]})
        for name in _CALL.findall(match["calls"] or ""):
            args = self._tool_args(response, name)
            if args is None:
                return None
            parts.append({"function_call": {"name": name, "args": args}})
        return {"role": "model", "parts": parts} if parts else None

    def reply(self, request: AnalyticsRow | None, response: AnalyticsRow) -> dict[str, Any] | None:
        """The model's reply of one call, or ``None`` (said in :attr:`lacks`)."""
        summary = _reply_summary(response)
        if summary is None:
            self.fail(
                f"{response.where()}: column content holds no reply summary (the content "
                "column was dropped or a content_formatter rewrote it); the call cannot be "
                "rebuilt"
            )
            return None
        if response.truncated:
            self.fail(_cut(response, "reply summary"))
            return None
        found = None
        if request is not None and isinstance(request.content, dict):
            found = self._from_history(request, summary)
        found = found or self._from_summary(response, summary)
        if found is None:
            self.fail(
                f"{response.where()}: column content holds only the plugin's summary of the "
                f"reply ({summary[:60]!r}) and no later LLM_REQUEST row of the session "
                "carries the reply in its history; no plugin setting keeps the whole reply, "
                "so this call cannot be rebuilt"
            )
        return found

    def request_lacks(self, row: AnalyticsRow) -> bool:
        content = row.content
        if not isinstance(content, dict) or not isinstance(content.get("contents"), list):
            self.fail(
                f"{row.where()}: column content holds the plugin's summary of the model "
                "request (message text only, function calls by name, no tool arguments), "
                f"not the request; {FULL_REQUEST_SETTING}"
            )
            return True
        if row.truncated:
            self.fail(_cut(row, "request"))
            return True
        return False


def _span(row: AnalyticsRow, name: str, end_ns: int, attributes: dict[str, Any]) -> TraceSpan:
    return TraceSpan(
        name=name,
        span_id=f"{row.span_id}:{row.number}",
        trace_id="",
        parent_id=None,
        start_ns=row.timestamp_ns,
        end_ns=max(end_ns, row.timestamp_ns),
        attributes={
            "gcp.vertex.agent.session_id": row.session_id,
            "gcp.vertex.agent.invocation_id": row.invocation_id,
            **attributes,
        },
    )


def _llm_response(reply: dict[str, Any], last: AnalyticsRow, streamed: bool) -> dict[str, Any]:
    """The call's ``LlmResponse`` JSON: the reply, and the usage, model version and
    finish reason the response row's attributes keep."""
    attributes = last.attributes
    usage = attributes.get("usage_metadata")
    return {
        "content": reply,
        "usage_metadata": {k: v for k, v in usage.items() if v is not None}
        if isinstance(usage, dict)
        else None,
        "model_version": attributes.get("model_version"),
        "finish_reason": attributes.get("finish_reason"),
        "partial": False if streamed else None,
    }


def _model_spans(session: _Session) -> list[TraceSpan]:
    """A ``call_llm`` span per model call (the legacy schema's shape), or none and the
    reason in ``session.lacks``."""
    spans = []
    responses: dict[str, list[AnalyticsRow]] = {}
    for row in session.rows:
        if row.event_type in ("LLM_RESPONSE", "LLM_ERROR"):
            responses.setdefault(row.span_id, []).append(row)
    for row in session.rows:
        if row.event_type != "LLM_REQUEST" or session.request_lacks(row):
            continue
        answers = responses.get(row.span_id, [])
        replies = [a for a in answers if a.event_type == "LLM_RESPONSE"]
        errors = [a for a in answers if a.event_type == "LLM_ERROR"]
        if errors:
            session.fail(
                f"{errors[0].where()}: the model call of row {row.number} failed "
                f"({(errors[0].error or 'no reply')[:80]}); "
                "the turn it belongs to is not rebuilt"
            )
            continue
        if not replies:  # a before_model_callback answered: no model call was made
            continue
        attributes: dict[str, Any] = {
            "gcp.vertex.agent.llm_request": json.dumps(row.content),
            "adk.experimental.response.source": "model",
        }
        span = _span(row, "call_llm", replies[-1].timestamp_ns, attributes)
        reply = session.reply(row, replies[-1])
        if reply is None:
            continue
        response = _llm_response(reply, replies[-1], streamed=len(replies) > 1)
        span.attributes["gcp.vertex.agent.llm_response"] = json.dumps(response)
        spans.append(span)
    return spans


def _tool_spans(rows: list[AnalyticsRow]) -> list[TraceSpan]:
    """An ``execute_tool`` span per tool call whose start and result rows are whole."""
    started = {r.span_id: r for r in rows if r.event_type == "TOOL_STARTING" and not r.truncated}
    spans = []
    for row in rows:
        start = started.get(row.span_id)
        if row.event_type != "TOOL_COMPLETED" or row.truncated or start is None:
            continue
        begun, done = start.content, row.content
        if not isinstance(begun, dict) or not isinstance(done, dict):
            continue
        name = str(begun.get("tool") or "")
        attributes = {
            "gen_ai.tool.name": name,
            "gcp.vertex.agent.tool_call_args": json.dumps(begun.get("args") or {}),
            "gcp.vertex.agent.tool_response": json.dumps(done.get("result")),
        }
        spans.append(_span(start, f"execute_tool {name}", row.timestamp_ns, attributes))
    return spans


def _user_content(row: AnalyticsRow) -> dict[str, Any]:
    content = row.content
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        return {"role": "user", "parts": content["parts"]}  # a content_formatter's JSON
    texts = [
        {"text": p["text"]}
        for p in row.content_parts
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]
    if not texts and isinstance(content, dict):
        texts = [{"text": str(content.get("text_summary") or "")}]
    return {"role": "user", "parts": texts or [{"text": str(content or "")}]}


def _event(row: AnalyticsRow, author: str, content: dict[str, Any]) -> dict[str, Any]:
    return {
        "author": author,
        "invocation_id": row.invocation_id,
        "timestamp": row.timestamp_ns / 1e9,
        "content": content,
    }


def _row_case(session: _Session, eval_set_id: str, state: dict[str, Any]) -> EvalCase | None:
    """The eval case the rows hold (user turns, tool calls with their arguments, tool
    results, replies), for a session whose model calls cannot be rebuilt."""
    events = []
    requests = {r.span_id: r for r in session.rows if r.event_type == "LLM_REQUEST"}
    probe = _Session(session.session_id, session.rows)
    for row in session.rows:
        if row.event_type == "USER_MESSAGE_RECEIVED":
            events.append(_event(row, "user", _user_content(row)))
        elif row.event_type == "LLM_RESPONSE" and _reply_summary(row) is not None:
            reply = probe.reply(requests.get(row.span_id), row)
            if reply is None:  # the expected reply as the row says it, to check by hand
                reply = {"role": "model", "parts": [{"text": _reply_summary(row)}]}
            events.append(_event(row, row.agent, reply))
        elif row.event_type == "TOOL_COMPLETED" and isinstance(row.content, dict):
            response = {"name": row.content.get("tool"), "response": row.content.get("result")}
            content = {"role": "user", "parts": [{"function_response": response}]}
            events.append(_event(row, row.agent, content))
    first = session.rows[0]
    found = evalset_from_sessions(
        [
            {
                "id": session.session_id,
                "app_name": _app_name(first),
                "user_id": first.user_id or "user",
                "state": state,
                "events": events,
            }
        ],
        eval_set_id=eval_set_id,
    )
    return found.eval_cases[0] if found.eval_cases else None


def _app_name(row: AnalyticsRow) -> str:
    adk = row.attributes.get("adk")
    return str(adk.get("app_name") or "rec") if isinstance(adk, dict) else "rec"


def _state(rows: list[AnalyticsRow]) -> dict[str, Any] | None:
    """The session's state as its first row saw it (``attributes.session_metadata``)."""
    for row in rows:
        metadata = row.attributes.get("session_metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("state"), dict):
            return {k: v for k, v in metadata["state"].items() if not k.startswith("temp:")}
    return None


def _traced(session: _Session, eval_set_id: str) -> TracedSession | None:
    """The session's model calls, or its rows' case and why its calls cannot be rebuilt;
    ``None`` for a session without a model call (every call a callback answered)."""
    from recorder._importers.adk_trace import TracedSession, traced_sessions

    spans = _model_spans(session)
    found = traced_sessions(spans) if session.lacks is None else []
    state = _state(session.rows)
    user = session.rows[0].user_id or None
    if found and found[0].unreplayable is None:
        traced = found[0]
        traced.schema, traced.state, traced.user_id = "bigquery", state, user
        return traced
    if session.lacks is None and not found:
        return None
    traced = TracedSession(
        session_id=session.session_id,
        schema="bigquery",
        started_ns=session.rows[0].timestamp_ns,
        user_id=user,
        state=state,
    )
    traced.lacks = [session.lacks] if session.lacks else found[0].lacks
    traced.unreplayable = session.lacks or found[0].unreplayable
    traced.case = _row_case(session, eval_set_id, state or {})
    return traced


def bigquery_sessions(
    rows: list[AnalyticsRow],
    *,
    path: Path,
    eval_set_id: str,
    session_id: str | None,
    latest: int | None,
) -> tuple[list[TracedSession], dict[str, list[TracedTool]]]:
    """The sessions of the rows that hold a model call (in the order they started), and
    each session's tool calls with their results.

    Raises:
        InputError: no row of a model call, or not the session asked for.
    """
    by_session: dict[str, list[AnalyticsRow]] = {}
    for row in rows:
        by_session.setdefault(row.session_id, []).append(row)
    chosen = [
        sid
        for sid, found in by_session.items()
        if any(r.event_type == "LLM_REQUEST" for r in found)
    ]
    if not chosen:
        raise InputError(
            f"no LLM_REQUEST row among the {len(rows)} BigQuery Agent Analytics row(s)",
            path=path,
            fix="Export the rows of sessions in which the agent called its model",
        )
    chosen = select_sessions(
        chosen,
        lambda sid: sid,
        session_id=session_id,
        latest=latest,
        path=path,
        where="rows",
        fix="Check the session id (the session_id column)",
    )
    sessions = []
    for sid in chosen:
        traced = _traced(_Session(sid, by_session[sid]), eval_set_id)
        if traced is not None:
            sessions.append(traced)
    tools = traced_tools(_tool_spans([r for sid in chosen for r in by_session[sid]]))
    return sessions, tools
