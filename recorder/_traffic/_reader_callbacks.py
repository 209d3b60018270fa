"""ADK plugin callbacks that move the reader of recorded reads as an invocation runs.

Recording (rec's ADK capture plugin) and replay (the plugin serving a case's recorded
reads) must name the readers of an invocation the same way, or a replayed read goes to
another reader than the one that read it: the main flow of an agent is ``agent:NAME#k``
from its ``before_agent_callback`` and ``model:NAME#k`` from each ``before_model_callback``;
each tool call is ``tool:NAME#k`` from its ``before_tool_callback`` until it ends (its
``after_tool_callback`` or ``on_tool_error_callback``). :class:`ReaderCallbacks` is that
naming, mixed into both plugins ahead of ADK's ``BasePlugin``. It imports nothing of ADK
(its arguments are ADK's, passed through untyped).
"""

from __future__ import annotations

from typing import Any

from recorder._traffic._reads import enter_reader, enter_tool, leave_tool


class ReaderCallbacks:
    """Moves the reader of the current context's invocation as ADK's callbacks run
    (``recorder._traffic._reads``); a plugin that does more on a tool's end overrides
    :meth:`tool_ended`."""

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        enter_reader(f"agent:{agent.name}")

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        enter_reader(f"model:{callback_context.agent_name}")

    async def before_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
    ) -> None:
        enter_tool(tool.name)

    async def after_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, result: Any
    ) -> None:
        self.tool_ended(tool_context)

    async def on_tool_error_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, error: Exception
    ) -> None:
        self.tool_ended(tool_context)

    def tool_ended(self, tool_context: Any) -> None:
        """The tool call of ``tool_context`` ended (returned or raised)."""
        leave_tool()
