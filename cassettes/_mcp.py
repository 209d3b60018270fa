"""MCP sessions in a recording: the ``mcp`` section of a cassette, and its journal lines.

An ADK agent whose tools come from an ``McpToolset`` talks to an MCP server (a stdio
subprocess, an SSE or a streamable-HTTP endpoint) before its first tool call: it opens a
session (``initialize``) and lists the tools on every model call. rec records those
sessions at the protocol level, keyed by the toolset's identity (its server, tool filter
and tool-name prefix), so that a replay can give the agent its tools with the server
absent::

    "mcp": {
      "format_version": 1,
      "toolsets": [
        {
          "toolset": {
            "server": {"transport": "stdio", "command": "python",
                       "args": ["calc_server.py", "--token", "<redacted>"],
                       "env": {"CALC_TOKEN": "<redacted>", "CALC_UNITS": "metric"}},
            "tool_filter": ["add", "multiply"],
            "tool_name_prefix": "calc"
          },
          "sessions": [
            {
              "opened_at": "2026-11-29T12:00:00.000000+00:00",
              "server": {"protocol_version": "2025-11-25",
                         "server_info": {"name": "calc", "version": "1.0"},
                         "capabilities": {"tools": {"listChanged": false}}},
              "calls": [
                {"method": "tools/list", "result": {"tools": [...]}, "count": 3},
                {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
                 "result": {"content": [{"type": "text", "text": "5"}], "isError": false}}
              ]
            }
          ]
        }
      ]
    }

Calls keep the MCP wire names (``tools/list``, ``tools/call``, ``resources/list``,
``resources/read``) and the wire JSON of params and results (camelCase, as the server
sent it). A request repeated with the same params and the same answer is stored once,
with ``count``; answers to one request are kept in the order they came. A JSON-RPC error
the server answered with is stored as ``error`` instead of ``result``.

While recording, each completed call is appended to ``.rec/<name>.mcp.jsonl`` (one
:class:`McpJournalLine` per line, flushed), so a crash keeps what was captured;
finalising the recording folds the lines into the section (:func:`mcp_recording_from_lines`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "MCP_FORMAT_VERSION",
    "McpCall",
    "McpCallBook",
    "McpCallError",
    "McpHttpServer",
    "McpJournalLine",
    "McpRecording",
    "McpServer",
    "McpServerHello",
    "McpSession",
    "McpStdioServer",
    "McpToolsetIdentity",
    "McpToolsetRecording",
    "mcp_recording_from_lines",
    "merge_mcp_recordings",
    "toolset_key",
]

MCP_FORMAT_VERSION: Literal[1] = 1
"""Version of the ``mcp`` section this rec writes and reads."""


class _Model(BaseModel):
    # Built on first use: a command that reads no such section (``rec show`` of a
    # recording without one) builds none of these validators.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class McpStdioServer(_Model):
    """A server rec would have started as a subprocess (``StdioConnectionParams``)."""

    transport: Literal["stdio"] = "stdio"
    command: str
    """The program, as the agent gave it."""
    args: list[str] = Field(default_factory=list)
    """Its arguments; credentials replaced by ``<redacted>``."""
    env: dict[str, str] = Field(default_factory=dict)
    """The extra environment the agent gave the server; credential values replaced by
    ``<redacted>``. Not part of the identity: only documentation."""
    cwd: str | None = None
    """The working directory the agent gave (not part of the identity)."""


class McpHttpServer(_Model):
    """A server reached over HTTP: ``sse`` or ``streamable_http``."""

    transport: Literal["sse", "streamable_http"]
    url: str
    """The endpoint; credentials (user info, credential query parameters) removed."""
    headers: dict[str, str] = Field(default_factory=dict)
    """The connection's own headers, credential headers removed (not part of the identity)."""


McpServer = Annotated[McpStdioServer | McpHttpServer, Field(discriminator="transport")]
"""Where a toolset's server lives."""


class McpToolsetIdentity(_Model):
    """What identifies an ``McpToolset``: its server, its tool filter and its tool prefix."""

    server: McpServer
    tool_filter: list[str] | None = None
    """The tool names the toolset keeps (``tool_filter=[...]``), sorted."""
    tool_predicate: str | None = None
    """``module.qualname`` of a predicate given as ``tool_filter``."""
    tool_name_prefix: str | None = None


class McpServerHello(_Model):
    """What the server said about itself when the session opened."""

    protocol_version: str | None = None
    server_info: dict[str, Any] | None = None
    """``serverInfo`` (name, version, ...)."""
    capabilities: dict[str, Any] | None = None
    instructions: str | None = None


class McpCallError(_Model):
    """A JSON-RPC error the server answered a request with."""

    code: int
    message: str
    data: Any = None


class McpCall(_Model):
    """A request the agent sent on a session and what the server answered."""

    method: str
    """The MCP method: ``tools/list``, ``tools/call``, ``resources/list``, ``resources/read``."""
    params: dict[str, Any] | None = None
    """``{"name", "arguments"}`` for ``tools/call``, ``{"uri"}`` for ``resources/read``."""
    result: Any = None
    """The result's wire JSON."""
    error: McpCallError | None = None
    count: int = Field(default=1, ge=1)
    """How many times this request got this answer (repeats are stored once)."""


class McpSession(_Model):
    """One session the agent opened on a toolset's server."""

    opened_at: str
    """ISO 8601 time the session was opened."""
    server: McpServerHello | None = None
    calls: list[McpCall] = Field(default_factory=list)


class McpToolsetRecording(_Model):
    """The sessions recorded for one toolset identity."""

    toolset: McpToolsetIdentity
    sessions: list[McpSession] = Field(default_factory=list)


class McpRecording(_Model):
    """The ``mcp`` section of a cassette."""

    format_version: Literal[1] = MCP_FORMAT_VERSION
    toolsets: list[McpToolsetRecording] = Field(default_factory=list)


class McpJournalLine(_Model):
    """One line of ``.rec/<name>.mcp.jsonl``: a session opened, or a call completed on it."""

    toolset: McpToolsetIdentity
    session: str
    """An id unique to the session within the recording."""
    opened_at: str
    """When the session was opened (the same on every line of a session)."""
    server: McpServerHello | None = None
    """On the line that opens the session."""
    call: McpCall | None = None
    """On the lines of completed calls."""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _call_key(call: McpCall) -> str:
    error = call.error.model_dump(mode="json") if call.error is not None else None
    return _canonical([call.method, call.params, call.result, error])


class _SessionCalls:
    """A session's calls, identical ones counted on the first (same request, same answer)."""

    def __init__(self, session: McpSession) -> None:
        self.session = session
        self.positions = {_call_key(call): index for index, call in enumerate(session.calls)}

    def add(self, call: McpCall) -> None:
        key = _call_key(call)
        calls = self.session.calls
        index = self.positions.get(key)
        if index is None:
            self.positions[key] = len(calls)
            calls.append(call)
        else:
            earlier = calls[index]
            calls[index] = earlier.model_copy(update={"count": earlier.count + call.count})


def mcp_recording_from_lines(lines: Iterable[McpJournalLine]) -> McpRecording:
    """Fold journal lines into the cassette's ``mcp`` section.

    Toolsets, sessions and calls keep the order in which they first appeared; identical
    calls on a session (same request, same answer) are counted, not repeated.
    """
    toolsets: dict[str, McpToolsetRecording] = {}
    sessions: dict[tuple[str, str], _SessionCalls] = {}
    for line in lines:
        identity = toolset_key(line.toolset)
        recording = toolsets.setdefault(identity, McpToolsetRecording(toolset=line.toolset))
        entry = sessions.get((identity, line.session))
        if entry is None:
            entry = _SessionCalls(McpSession(opened_at=line.opened_at))
            sessions[(identity, line.session)] = entry
            recording.sessions.append(entry.session)
        if line.server is not None:
            entry.session.server = line.server
        if line.call is not None:
            entry.add(line.call)
    return McpRecording(toolsets=list(toolsets.values()))


def toolset_key(toolset: McpToolsetIdentity) -> str:
    """The exact identity of a toolset as one string (for grouping what was recorded)."""
    return _canonical(toolset.model_dump(mode="json"))


def merge_mcp_recordings(recordings: Sequence[McpRecording | None]) -> McpRecording | None:
    """One section holding every toolset's sessions from ``recordings``, in order.

    Returns None when none of them holds a toolset (a cassette without MCP keeps no section).
    """
    merged: dict[str, McpToolsetRecording] = {}
    for recording in recordings:
        for entry in recording.toolsets if recording is not None else ():
            identity = toolset_key(entry.toolset)
            if identity in merged:
                merged[identity].sessions.extend(entry.sessions)
            else:
                merged[identity] = entry.model_copy(update={"sessions": list(entry.sessions)})
    if not merged:
        return None
    return McpRecording(toolsets=list(merged.values()))


class McpCallBook:
    """The recorded answers of one toolset's sessions, served as requests come (sans-IO).

    Requests are keyed by method and params (canonical JSON). Each key's answers are
    served in the order they were recorded, each as many times as it was counted; the
    last one then repeats (an agent lists its tools on every model call, however many
    calls the replay makes).

    Args:
        recordings: the recorded sessions of the toolset (from one or more cassettes).
    """

    def __init__(self, recordings: Sequence[McpToolsetRecording]) -> None:
        self.hello: McpServerHello | None = None
        self._queues: dict[str, list[list[Any]]] = {}
        self.calls: list[McpCall] = []
        for recording in recordings:
            for session in recording.sessions:
                if self.hello is None and session.server is not None:
                    self.hello = session.server
                for call in session.calls:
                    self.calls.append(call)
                    queue = self._queues.setdefault(_request_key(call.method, call.params), [])
                    queue.append([call, call.count])

    def answer(self, method: str, params: dict[str, Any] | None) -> McpCall | None:
        """The recorded call answering this request, or None when none was recorded."""
        queue = self._queues.get(_request_key(method, params))
        if not queue:
            return None
        entry = queue[0]
        if len(queue) > 1:
            entry[1] -= 1
            if entry[1] <= 0:
                queue.pop(0)
        call: McpCall = entry[0]
        return call

    def recorded(self, method: str) -> list[McpCall]:
        """Every recorded call of ``method`` (to say what was recorded on a miss)."""
        return [call for call in self.calls if call.method == method]


def _request_key(method: str, params: dict[str, Any] | None) -> str:
    return _canonical([method, params or None])
