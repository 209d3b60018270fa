"""rec's ADK capture plugin: exact sessions (authors, app, user, state) beside the traffic.

Attach it to an ADK app without changing the app's code::

    REC_ADK_CAPTURE=recordings/demo.adk.jsonl \\
        adk web --extra_plugins rec.RecCapturePlugin agents/

(or ``Runner(..., plugins=[RecCapturePlugin()])`` in a script). Each ADK run appends one
JSON line to the capture file: the session as ADK holds it after the run (ADK's ``Session``
JSON, camelCase) plus ``initialState``, the session state before its first run. From its
construction until its runner closes, the plugin also records the tools' own httpx calls into
``<name>.tools.jsonl`` beside the capture file (``recorder._tool_traffic``). When the
recording is finalised, its EvalSet is built from
these sessions (ADK's own conversion, exact state) instead of from the traffic. Before
each run it also instruments the agent's MCP toolsets, whose sessions go to
``<name>.mcp.jsonl`` (``recorder._mcp_capture``) until the runner closes. What the agent's
own code reads of the clock, ``uuid4``, ``random`` and ``secrets`` during each run goes to
``<name>.reads.jsonl`` (``recorder._traffic._reads``): its callbacks name the reader (the agent's
flow between its agent and model callbacks, each tool call), as replay names it
(``recorder._traffic._reader_callbacks``).

A run started while one of this plugin's tools runs is *nested*: an ``AgentTool`` runs its
agent in a Runner of its own, with a throwaway session, and passes this plugin on to it.
That inner session is not the user's conversation (ADK keeps it out of the parent session
and out of ``adk eval``'s view too): it is not written, so one user session stays one eval
case. A context variable set in ``before_tool_callback`` tells the two apart; ADK runs
each tool call in a task of its own, so it never leaks to the caller or to sibling calls.

This module imports ADK; nothing else in the recorder does.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from cassettes._secret_shapes import mask
from recorder._capture_files import append_text
from recorder._importers.adk_session import EARLIER_TURNS_KEY
from recorder._mcp_capture import McpCapture, mcp_journal_path
from recorder._reads_journal import reads_journal_path, write_reads
from recorder._tool_traffic import capturing_tool_traffic, tool_traffic_path
from recorder._traffic import (
    ReaderCallbacks,
    RecordingReads,
    begin_invocation,
    end_invocation,
    reads_patched,
)

__all__ = ["CAPTURE_ENV", "RecCapturePlugin"]


CAPTURE_ENV = "REC_ADK_CAPTURE"
"""Environment variable naming the capture file (JSON lines)."""
_PROXY_ENVS = ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL")
_IN_TOOL: contextvars.ContextVar[bool] = contextvars.ContextVar("rec_in_tool", default=False)
"""True while a tool of a captured run executes (a Runner started then is nested)."""


class RecCapturePlugin(ReaderCallbacks, BasePlugin):
    """Appends each session to the capture file after every run.

    Args:
        name: the plugin name (ADK passes the qualified name for ``--extra_plugins``).
        path: the capture file; default ``$REC_ADK_CAPTURE`` (no file: the plugin does
            nothing).
    """

    def __init__(self, name: str = "rec_capture", path: str | Path | None = None) -> None:
        super().__init__(name=name)
        target = path or os.environ.get(CAPTURE_ENV)
        self._path = Path(target) if target else None
        self._initial: dict[str, dict[str, Any] | None] = {}
        self._earlier: dict[str, int] = {}
        """Per session, how many of its turns ran before this plugin saw it (a resumed
        persisted session: their model calls are not in the recording)."""
        self._nested: set[str] = set()
        """Invocation ids of runs started inside a tool (an AgentTool's inner Runner)."""
        self._tool_tokens: dict[str, contextvars.Token[bool]] = {}
        self._tools = contextlib.ExitStack()
        self._mcp = McpCapture(mcp_journal_path(self._path)) if self._path is not None else None
        self._reads: dict[str, RecordingReads] = {}
        """Per running invocation, what its agent's code read."""
        if self._path is not None:
            self._start_reads()
            # The tools' own httpx calls, beside the sessions (``<name>.tools.jsonl``);
            # the model traffic goes to the proxy the client env points at, never captured.
            own = [os.environ.get(name, "") for name in _PROXY_ENVS]
            self._tools.enter_context(
                capturing_tool_traffic(tool_traffic_path(self._path), own=[u for u in own if u])
            )

    def _start_reads(self) -> None:
        """Record the clock, ``random``, ``secrets`` and ``uuid4`` reads of the agent's code
        (``recorder._traffic._reads``) until the runner closes."""
        try:
            self._tools.enter_context(reads_patched())
        except RuntimeError as exc:  # freezegun froze the clock: the program's own choice
            sys.stderr.write(f"rec: the agent's clock and random reads are not recorded ({exc})\n")

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        if self._mcp is not None:  # before the agent lists its MCP tools
            agent = invocation_context.agent
            self._mcp.instrument(getattr(agent, "root_agent", None) or agent)
        if _IN_TOOL.get():
            self._nested.add(invocation_context.invocation_id)
            return None
        if self._path is not None:
            reads = self._reads[invocation_context.invocation_id] = RecordingReads(
                invocation_context.invocation_id
            )
            begin_invocation(reads)
        session = invocation_context.session
        if session.id not in self._initial:
            earlier = [
                e for e in session.events if e.invocation_id != invocation_context.invocation_id
            ]
            # A session that ran before the plugin was attached: its start is unknown, and
            # the importer reconstructs it from the state deltas instead.
            self._initial[session.id] = None if earlier else copy.deepcopy(dict(session.state))
            turns = {e.invocation_id for e in earlier if e.author == "user"}
            if turns:
                self._earlier[session.id] = len(turns)
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> None:
        self._tool_tokens[_call_key(tool_context)] = _IN_TOOL.set(True)
        await super().before_tool_callback(
            tool=tool, tool_args=tool_args, tool_context=tool_context
        )

    def tool_ended(self, tool_context: Any) -> None:
        super().tool_ended(tool_context)
        token = self._tool_tokens.pop(_call_key(tool_context), None)
        if token is not None:
            with contextlib.suppress(ValueError):  # set in another context: nothing to undo
                _IN_TOOL.reset(token)

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        if invocation_context.invocation_id in self._nested:
            self._nested.discard(invocation_context.invocation_id)
            return
        if self._path is None:
            return
        reads = self._reads.pop(invocation_context.invocation_id, None)
        if reads is not None:
            end_invocation()
            write_reads(reads_journal_path(self._path), reads)
        session = invocation_context.session
        document = json.loads(session.model_dump_json(by_alias=True, exclude_none=True))
        initial = self._initial.get(session.id)
        if initial is not None:
            document["initialState"] = initial
        if session.id in self._earlier:
            document[EARLIER_TURNS_KEY] = self._earlier[session.id]
        # Session data can carry credentials (a key pasted into a chat, a token in state):
        # mask anything credential-shaped before it touches the disk.
        # A capture file that cannot be written never breaks the user's agent.
        append_text(
            self._path, mask(json.dumps(document, ensure_ascii=False)) + "\n", what="ADK capture"
        )

    async def close(self) -> None:
        """Stop capturing the tools' traffic (ADK calls this when its runner closes)."""
        self._tools.close()
        if self._mcp is not None:
            self._mcp.close()


def _call_key(tool_context: ToolContext) -> str:
    return f"{tool_context.invocation_id}/{tool_context.function_call_id}"
