"""The bookshop assistant: an ADK agent whose tools come from an MCP server over stdio.

``McpToolset`` starts ``bookshop_server.py`` (this folder) as a subprocess, hands it the
shop's credential (``BOOKSHOP_API_TOKEN``) in its environment, lists its tools on every
turn and keeps three of them (``tool_filter``). ``rec replay`` gives the agent the tool
list recorded with the session instead, without starting the server: no token needed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams
from mcp import StdioServerParameters

SERVER = Path(__file__).resolve().with_name("bookshop_server.py")

bookshop_tools = McpToolset(
    connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(
            command=sys.executable,
            args=[str(SERVER)],
            env={"BOOKSHOP_API_TOKEN": os.environ.get("BOOKSHOP_API_TOKEN", "")},
        ),
        timeout=60,
    ),
    tool_filter=["search_books", "check_stock", "place_order"],
)

root_agent = LlmAgent(
    name="bookshop_agent",
    model="gemini-2.0-flash",
    instruction=(
        "You are the assistant of a small bookshop. Find books in the catalogue, say how "
        "many copies are in stock and place orders with your tools. Never invent a book."
    ),
    tools=[bookshop_tools],
)
