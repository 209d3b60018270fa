"""Replay MCP toolsets with their servers absent: the tool list comes from the recording.

An ADK ``McpToolset`` opens a session to its server and lists the tools on every model
call, before any tool runs. In replay (mock-mode tools, the default) rec gives every
``McpToolset`` of the agent tree a session that answers from the recording instead
(:class:`RecordedMcpSession`): its ``tools/list`` is the recorded one, so ADK builds the
same tools (filter, prefix and all) without starting a process or opening a connection.
The tool calls themselves are answered by mock mode (``replayer._mock_tools``) as for any
tool; a ``tools/call`` that still reaches the session is answered from the recorded
calls too.

The recording is chosen by the toolset's identity (its server, tool filter and prefix,
see :mod:`cassettes._mcp_identity`). A toolset the recording does not have — a new
filter, another server — fails closed as its agent starts (:class:`McpReplayGuard`, a
plugin: ADK itself would only log a toolset that cannot list its tools and run the agent
without them), with a :class:`cassettes.ReplayMiss` naming the toolset and what changed.

The seam is the same as while recording (``recorder._mcp_capture``): the toolset's own
``MCPSessionManager.create_session``, replaced on the instance for the duration of
:func:`replaying_mcp` and restored afterwards. ``--live-tools`` leaves the toolsets
alone: the real servers run.

Example::

    with replaying_mcp(root_agent, [cassette.mcp], label="calc.cassette.json"):
        ...  # run the agent: its McpToolsets list the recorded tools, no server runs
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from google.adk.plugins.base_plugin import BasePlugin

from cassettes._errors import ReplayMiss
from cassettes._mcp import (
    McpCall,
    McpCallBook,
    McpRecording,
    McpToolsetIdentity,
    McpToolsetRecording,
    merge_mcp_recordings,
)
from cassettes._mcp_identity import describe_toolset, nearest_toolset, toolset_changes
from recorder._traffic import mcp_toolsets, session_manager_of, toolset_identity

__all__ = ["McpReplay", "McpReplayGuard", "RecordedMcpSession", "replaying_mcp"]

_FIX = (
    "Re-record the agent (rec's ADK capture plugin records its MCP sessions), or run the "
    "real MCP servers with --live-tools"
)


def _mcp_error(call: McpCall) -> BaseException:
    """The MCP SDK's own error for a recorded JSON-RPC error (SDK 2.x and 1.x)."""
    from mcp.shared import exceptions

    assert call.error is not None
    error_type = getattr(exceptions, "MCPError", None)
    if error_type is not None:
        return error_type(call.error.code, call.error.message, call.error.data)  # type: ignore[no-any-return]
    from mcp.types import ErrorData

    data = ErrorData(code=call.error.code, message=call.error.message, data=call.error.data)
    return exceptions.McpError(data)  # type: ignore[attr-defined,no-any-return]


class RecordedMcpSession:
    """Answers an agent's MCP requests like a ``ClientSession``, from the recording.

    Args:
        toolset: the toolset's identity (named in messages).
        recordings: its recorded sessions.
        label: the recordings, named in messages.
    """

    def __init__(
        self, toolset: McpToolsetIdentity, recordings: Sequence[McpToolsetRecording], *, label: str
    ) -> None:
        self.toolset = toolset
        self.book = McpCallBook(recordings)
        self.label = label
        self.served = 0

    # What ADK (and callers of the SDK) read of an initialised session.
    @property
    def protocol_version(self) -> str | None:
        return self.book.hello.protocol_version if self.book.hello else None

    @property
    def instructions(self) -> str | None:
        return self.book.hello.instructions if self.book.hello else None

    async def initialize(self) -> Any:
        """The recorded ``initialize`` result (as the SDK's ``InitializeResult``)."""
        from mcp import types

        hello = self.book.hello
        return types.InitializeResult.model_validate(
            {
                "protocolVersion": hello.protocol_version if hello else None,
                "capabilities": (hello.capabilities if hello else None) or {},
                "serverInfo": (hello.server_info if hello else None) or {"name": "", "version": ""},
                "instructions": hello.instructions if hello else None,
            }
        )

    async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
        from mcp import types

        params = kwargs.get("params") or (args[0] if args else None)
        wire = params.model_dump(mode="json", by_alias=True, exclude_none=True) if params else None
        return types.ListToolsResult.model_validate(self._answer("tools/list", wire or None))

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        from mcp import types

        params = {"name": name, "arguments": dict(arguments or {})}
        return types.CallToolResult.model_validate(self._answer("tools/call", params))

    async def list_resources(self, *args: Any, **kwargs: Any) -> Any:
        from mcp import types

        return types.ListResourcesResult.model_validate(self._answer("resources/list", None))

    async def read_resource(self, uri: Any, *args: Any, **kwargs: Any) -> Any:
        from mcp import types

        answer = self._answer("resources/read", {"uri": str(uri)})
        return types.ReadResourceResult.model_validate(answer)

    def _answer(self, method: str, params: dict[str, Any] | None) -> Any:
        call = self.book.answer(method, params)
        if call is None:
            raise self._miss(method, params)
        self.served += 1
        if call.error is not None:
            raise _mcp_error(call)
        return call.result

    def _miss(self, method: str, params: dict[str, Any] | None) -> ReplayMiss:
        recorded = self.book.recorded(method)
        shown = [f"{c.method} {c.params}" if c.params else c.method for c in recorded[:5]]
        return ReplayMiss(
            f"MCP request {method} {params or ''} to toolset {describe_toolset(self.toolset)} "
            "was not recorded",
            path=self.label,
            where="mcp",
            fix=_FIX,
            diff=[f"recorded {method}: {'; '.join(shown)}"] if shown else [f"no {method} recorded"],
        )


class McpReplay:
    """The MCP side of one replay: which toolsets were served, from which recordings.

    Args:
        recording: every recorded MCP toolset (merged from the replay's cassettes).
        label: the recordings, named in messages.
    """

    def __init__(self, recording: McpRecording | None, *, label: str) -> None:
        self.recording = recording
        self.label = label
        self.sessions: dict[str, RecordedMcpSession] = {}
        """The recorded session given to each toolset, by its description."""
        self.identities: dict[int, McpToolsetIdentity] = {}
        """The identity of each served ADK toolset, by ``id()``."""
        self.guard = McpReplayGuard(self)
        """The plugin that fails a run whose agent has a toolset the recording lacks."""

    def session_for(self, toolset: McpToolsetIdentity) -> RecordedMcpSession:
        """The recorded session of ``toolset`` (one per identity, shared by every call).

        Raises:
            ReplayMiss: the recording has no such toolset; names it, the nearest recorded
                toolset and what changed.
        """
        name = describe_toolset(toolset)
        session = self.sessions.get(name)
        if session is not None:
            return session
        recorded = self.recording.toolsets if self.recording is not None else []
        matching = [r for r in recorded if not toolset_changes(r.toolset, toolset)]
        if not matching:
            raise self._miss(toolset, [r.toolset for r in recorded])
        session = RecordedMcpSession(toolset, matching, label=self.label)
        self.sessions[name] = session
        return session

    def _miss(self, toolset: McpToolsetIdentity, recorded: list[McpToolsetIdentity]) -> ReplayMiss:
        nearest = nearest_toolset(toolset, recorded)
        if nearest is None:
            problem = (
                f"MCP toolset {describe_toolset(toolset)} asked for its tools, but no MCP "
                "session is recorded"
            )
            diff = ["the recording holds no MCP toolset"]
        else:
            problem = (
                f"MCP toolset {describe_toolset(toolset)} was not recorded; nearest recorded "
                f"toolset: {describe_toolset(nearest)}"
            )
            diff = toolset_changes(nearest, toolset)
        return ReplayMiss(problem, path=self.label, where="mcp", fix=_FIX, diff=diff)


class McpReplayGuard(BasePlugin):
    """Fails the run as an agent starts when one of its MCP toolsets was not recorded.

    ADK runs an agent whose toolset cannot list its tools without those tools (it only
    logs the error), which would turn a changed filter into a confusing model miss, or
    into a silent pass against a live model. Add it to the runner's plugins.
    """

    def __init__(self, replay: McpReplay) -> None:
        super().__init__(name="rec_mcp_replay")
        self.replay = replay

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        for tool in getattr(agent, "tools", None) or []:
            identity = self.replay.identities.get(id(tool))
            if identity is not None:
                self.replay.session_for(identity)  # raises ReplayMiss when not recorded


def _serve(replay: McpReplay, toolset: McpToolsetIdentity) -> Callable[..., Any]:
    async def create_session(*args: Any, **kwargs: Any) -> RecordedMcpSession:
        return replay.session_for(toolset)

    return create_session


@contextlib.contextmanager
def replaying_mcp(
    agent: Any, recordings: Sequence[McpRecording | None], *, label: str
) -> Iterator[McpReplay]:
    """Serve every ``McpToolset`` under ``agent`` from ``recordings`` while the block runs.

    No MCP server is started or connected to. The toolsets are restored when the block
    ends. An agent without MCP toolsets is left untouched.
    """
    replay = McpReplay(merge_mcp_recordings(recordings), label=label)
    restore: list[Any] = []
    try:
        for toolset in mcp_toolsets(agent):
            manager = session_manager_of(toolset)
            if "create_session" in manager.__dict__:
                continue  # shared by another toolset, already served
            identity, _ = toolset_identity(toolset)
            replay.identities[id(toolset)] = identity
            manager.create_session = _serve(replay, identity)
            restore.append(manager)
        yield replay
    finally:
        for manager in restore:
            manager.__dict__.pop("create_session", None)
