"""The inventory agent: one ``McpToolset`` on the inventory MCP server (``server.py``).

:func:`inventory_agent` builds it for a given connection (stdio, SSE or streamable HTTP)
and tool filter; :func:`inventory_brain` is how the stand-in model answers it.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools.mcp_tool import McpToolset

from rec.standin.brain import RuleBrain, call, say

MODEL = "gemini-2.0-flash"
CONVERSATION = ("How many widgets are in stock?", "Reserve 3 widgets please.")


def inventory_agent(connection_params: Any, *, tool_filter: Any = ("stock", "reserve")) -> Any:
    """The agent, its MCP toolset on ``connection_params``."""
    toolset = McpToolset(
        connection_params=connection_params,
        tool_filter=list(tool_filter) if isinstance(tool_filter, tuple) else tool_filter,
    )
    return LlmAgent(
        name="inventory_agent",
        model=MODEL,
        instruction="You answer questions about the shop's inventory with your tools.",
        tools=[toolset],
    )


def inventory_brain() -> RuleBrain:
    """The stand-in model's rules for the inventory agent."""
    return RuleBrain(
        [
            call("stock", lambda t: {"item": t.match(r"(widget|gadget|sprocket)")}, when="stock"),
            call("reserve", {"item": "widget", "count": 3}, when="reserve"),
            call("whoami", {}, when="who"),
            say("Hello! Ask me about stock.", when="hello"),
        ]
    )
