"""Find the MCP toolsets of an ADK agent tree and name each one's server without its secrets.

Recording instruments every toolset :func:`mcp_toolsets` finds and journals it under
:func:`toolset_identity`; replay finds the same toolsets and matches them to the recorded
ones by that identity. Both read ADK's objects only, and import the MCP SDK only when the
agent already has.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from cassettes._mcp import McpHttpServer, McpStdioServer, McpToolsetIdentity
from cassettes._mcp_identity import http_server_identity, stdio_server_identity


def mcp_toolsets(agent: Any) -> list[Any]:
    """Every ``McpToolset`` reachable from ``agent``: its tools, sub-agents and AgentTools.

    Returns them in the order found (depth first, each once); none when the MCP SDK is
    not installed (recording and replay of agents without MCP must not need it).
    """
    # An agent holding an McpToolset has imported its module. When nothing has, there is
    # none to find, and importing it here would cost every run without MCP the MCP SDK,
    # authlib, starlette, uvicorn... (5 of the 8 s a first replay took on a loaded machine).
    toolset_module = sys.modules.get("google.adk.tools.mcp_tool.mcp_toolset")
    if toolset_module is None:
        return []
    from google.adk.agents import BaseAgent
    from google.adk.tools.agent_tool import AgentTool

    AdkMcpToolset = toolset_module.McpToolset  # noqa: N806 (a class)

    found: list[Any] = []
    seen: set[int] = set()
    pending: list[Any] = [agent]
    while pending:
        node = pending.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AdkMcpToolset):
            found.append(node)
        elif isinstance(node, AgentTool):
            pending.append(node.agent)
        elif isinstance(node, BaseAgent):
            pending.extend(getattr(node, "tools", None) or [])
            pending.extend(node.sub_agents or [])
    return found


def _predicate_name(predicate: Any) -> str:
    target = predicate if callable(predicate) and hasattr(predicate, "__qualname__") else None
    target = target or type(predicate)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"


def _portable(text: str) -> str:
    """A path under the working directory as a relative path, under home as ``~/...``.

    Recordings are committed and replayed elsewhere: they need not name the machine's
    folders (the identity compares a path by its file name anyway).
    """
    if not os.path.isabs(text):
        return text
    path = Path(text)
    for base, shown in ((Path.cwd(), None), (Path.home(), "~")):
        try:
            relative = path.relative_to(base)
        except ValueError:
            continue
        return str(Path(shown, relative)) if shown else str(relative)
    return text


def toolset_identity(toolset: Any) -> tuple[McpToolsetIdentity, set[str]]:
    """The redacted identity of an ADK ``McpToolset`` and the credentials removed from it.

    Paths in the server's command line are stored relative to the working directory (or
    home) when they are under it.
    """
    params = toolset.connection_params
    server_params = getattr(params, "server_params", None)
    if server_params is None and hasattr(params, "command"):
        server_params = params  # a bare StdioServerParameters
    server: McpStdioServer | McpHttpServer
    if server_params is not None:
        cwd = getattr(server_params, "cwd", None)
        server, secrets = stdio_server_identity(
            _portable(str(server_params.command)),
            [_portable(str(arg)) for arg in server_params.args or []],
            dict(server_params.env or {}),
            str(cwd) if cwd is not None else None,
        )
    else:
        transport = "sse" if type(params).__name__.startswith("Sse") else "streamable_http"
        server, secrets = http_server_identity(
            transport, str(params.url), dict(getattr(params, "headers", None) or {})
        )
    tool_filter = toolset.tool_filter
    return (
        McpToolsetIdentity(
            server=server,
            tool_filter=sorted(tool_filter) if isinstance(tool_filter, list) else None,
            tool_predicate=_predicate_name(tool_filter)
            if tool_filter is not None and not isinstance(tool_filter, list)
            else None,
            tool_name_prefix=toolset.tool_name_prefix or None,
        ),
        secrets,
    )
