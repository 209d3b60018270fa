"""Record the MCP sessions of an ADK agent's ``McpToolset``s, at the protocol level.

While rec's ADK capture plugin is attached to a run (``rec start -- adk web``, or
``Runner(..., plugins=[RecCapturePlugin()])`` inside ``rec.record()``), every
``McpToolset`` of the agent tree (sub-agents and ``AgentTool`` agents included) is
instrumented before the agent runs: the sessions its session manager opens are wrapped
so that the server's hello (``initialize``), each ``tools/list``, ``tools/call``,
``resources/list`` and ``resources/read`` with its answer is appended to
``.rec/<name>.mcp.jsonl`` (one :class:`cassettes.McpJournalLine` per line, flushed).
Nothing changes for the agent: the real server answers, the wrapper only reads.

The seam is the toolset's own ``MCPSessionManager.create_session`` (ADK's public method,
on the instance only, restored by :meth:`McpCapture.close`): it works the same for
stdio, SSE and streamable HTTP and for MCP SDK 1.x and 2.x, and needs neither a
subprocess wrapper nor a proxy. Reaching the manager takes one private ADK attribute,
through ``recorder/_traffic/_compat.py`` (:func:`session_manager_of`).

Credentials never reach the file: the toolset's identity is redacted
(:func:`cassettes.stdio_server_identity`, :func:`cassettes.http_server_identity`), the
credential values found there are replaced wherever the server's answers repeat them,
and a line that still holds a credential-shaped value is refused (logged, not written).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import threading
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from cassettes._errors import SecretFound
from cassettes._mcp import (
    McpCall,
    McpCallError,
    McpJournalLine,
    McpServerHello,
    McpToolsetIdentity,
)
from cassettes._secret_scan import ensure_no_secrets
from cassettes._secret_shapes import mask_json
from cassettes._timing import now_iso
from recorder._capture_files import append_json_line
from recorder._recording_state import CaptureFiles
from recorder._traffic import mcp_toolsets, session_manager_of, toolset_identity

__all__ = ["McpCapture", "mcp_journal_path"]

log = logging.getLogger(__name__)

_SESSION_IDS = itertools.count(1)


def mcp_journal_path(capture: str | Path) -> Path:
    """The MCP journal beside an ADK capture file (``X.adk.jsonl`` -> ``X.mcp.jsonl``)."""
    return CaptureFiles(Path(capture)).mcp


# --- wire JSON ------------------------------------------------------------------------------


def wire_json(value: Any) -> Any:
    """A result of the MCP SDK (a pydantic model) as the JSON the server sent (camelCase)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.loads(json.dumps(value, default=str))


def _mcp_error_types() -> tuple[type[BaseException], ...]:
    from mcp.shared import exceptions

    found = [getattr(exceptions, name, None) for name in ("MCPError", "McpError")]
    return tuple(error for error in found if isinstance(error, type))


def _hello(session: Any) -> McpServerHello:
    """What the session learned from the server's ``initialize`` (MCP SDK 1.x and 2.x)."""
    result = getattr(session, "initialize_result", None)
    info = getattr(session, "server_info", None) or getattr(result, "serverInfo", None)
    capabilities = getattr(session, "server_capabilities", None)
    if capabilities is None and hasattr(session, "get_server_capabilities"):
        capabilities = session.get_server_capabilities()
    return McpServerHello(
        protocol_version=getattr(session, "protocol_version", None)
        or getattr(result, "protocolVersion", None),
        server_info=wire_json(info) if info is not None else None,
        capabilities=wire_json(capabilities) if capabilities is not None else None,
        instructions=getattr(session, "instructions", None)
        or getattr(result, "instructions", None),
    )


# --- the capture ----------------------------------------------------------------------------


class McpCapture:
    """Appends the MCP sessions of instrumented toolsets to a JSON-lines journal.

    Args:
        path: ``.rec/<name>.mcp.jsonl`` (appended to).

    Example::

        capture = McpCapture(paths.mcp)
        capture.instrument(root_agent)      # before the run
        ...                                 # the agent lists and calls its MCP tools
        capture.close()                     # the toolsets are as they were
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.lines = 0
        self.refused = 0
        self._lock = threading.Lock()
        self._restore: dict[int, Any] = {}
        """The session managers instrumented, by id."""
        self._sessions: weakref.WeakKeyDictionary[Any, tuple[str, str]] = (
            weakref.WeakKeyDictionary()
        )

    def instrument(self, agent: Any) -> int:
        """Record the MCP sessions of every ``McpToolset`` under ``agent`` from now on.

        Toolsets already instrumented (by this capture or another) are left alone.
        Returns how many toolsets were newly instrumented.
        """
        added = 0
        for toolset in mcp_toolsets(agent):
            manager = session_manager_of(toolset)
            if id(manager) in self._restore or "create_session" in manager.__dict__:
                continue
            identity, secrets = toolset_identity(toolset)
            original = manager.create_session
            manager.create_session = self._wrap(original, identity, secrets)
            self._restore[id(manager)] = manager
            added += 1
        return added

    def close(self) -> None:
        """Stop recording: every instrumented toolset is restored."""
        for manager in self._restore.values():
            manager.__dict__.pop("create_session", None)
        self._restore.clear()

    def _wrap(
        self,
        original: Callable[..., Awaitable[Any]],
        identity: McpToolsetIdentity,
        secrets: set[str],
    ) -> Callable[..., Awaitable[Any]]:
        async def create_session(*args: Any, **kwargs: Any) -> Any:
            session = await original(*args, **kwargs)
            return _RecordingSession(session, self, identity, secrets)

        return create_session

    def session_id(
        self, session: Any, identity: McpToolsetIdentity, secrets: set[str]
    ) -> tuple[str, str]:
        """(id, opened_at) of a real session; the first time, its hello is written."""
        known = self._sessions.get(session)
        if known is not None:
            return known
        known = (f"{os.getpid()}-{next(_SESSION_IDS)}", now_iso())
        self._sessions[session] = known
        hello = McpServerHello.model_validate(
            mask_json(_hello(session).model_dump(mode="json"), secrets)
        )
        self.write(
            McpJournalLine(toolset=identity, session=known[0], opened_at=known[1], server=hello)
        )
        return known

    def write(self, line: McpJournalLine) -> None:
        """Append one line, unless it still holds a credential (then log and drop it)."""
        with self._lock:
            try:
                ensure_no_secrets(line, path=self.path)
            except SecretFound as exc:
                self.refused += 1
                log.error("rec: an MCP exchange was not recorded: %s", exc)
                return
            if append_json_line(self.path, line, what="MCP journal"):
                self.lines += 1


class _RecordingSession:
    """An MCP ``ClientSession`` seen through rec: every call is forwarded, then journaled."""

    def __init__(
        self, session: Any, capture: McpCapture, identity: McpToolsetIdentity, secrets: set[str]
    ) -> None:
        self._session = session
        self._capture = capture
        self._identity = identity
        self._secrets = secrets
        capture.session_id(session, identity, secrets)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
        params = kwargs.get("params") or (args[0] if args else None)
        wire = wire_json(params) if params is not None else None
        return await self._record("tools/list", wire, self._session.list_tools(*args, **kwargs))

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        params = {"name": name, "arguments": wire_json(arguments or {})}
        call = self._session.call_tool(name, arguments, *args, **kwargs)
        return await self._record("tools/call", params, call)

    async def list_resources(self, *args: Any, **kwargs: Any) -> Any:
        call = self._session.list_resources(*args, **kwargs)
        return await self._record("resources/list", None, call)

    async def read_resource(self, uri: Any, *args: Any, **kwargs: Any) -> Any:
        call = self._session.read_resource(uri, *args, **kwargs)
        return await self._record("resources/read", {"uri": str(uri)}, call)

    async def _record(self, method: str, params: dict[str, Any] | None, call: Any) -> Any:
        try:
            result = await call
        except _mcp_error_types() as exc:
            error = getattr(exc, "error", None)
            self._write(
                McpCall(
                    method=method,
                    params=params,
                    error=McpCallError(
                        code=int(getattr(error, "code", -32603)),
                        message=str(getattr(error, "message", exc)),
                        data=wire_json(getattr(error, "data", None)),
                    ),
                )
            )
            raise
        self._write(McpCall(method=method, params=params, result=wire_json(result)))
        return result

    def _write(self, call: McpCall) -> None:
        session, opened_at = self._capture.session_id(self._session, self._identity, self._secrets)
        try:
            clean = McpCall.model_validate(mask_json(call.model_dump(mode="json"), self._secrets))
        except ValidationError as exc:  # a result rec cannot store: say so, go on
            log.warning("rec: an MCP %s call was not recorded (%s)", call.method, exc)
            return
        self._capture.write(
            McpJournalLine(toolset=self._identity, session=session, opened_at=opened_at, call=clean)
        )
