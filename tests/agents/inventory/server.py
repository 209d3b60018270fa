"""A small MCP server for rec's tests, written with the ``mcp`` package (stdio, SSE, HTTP).

``python server.py [--transport stdio|sse|streamable-http] [--port-file FILE] [--token T]``

An inventory: ``stock(item)``, ``reserve(item, count)`` and ``whoami()``, which echoes the
credentials the server was given (``--token`` and ``$INVENTORY_TOKEN``) so that tests
can show rec never writes them, even when the server repeats them. Over HTTP it binds
127.0.0.1 on a free port and writes the port to ``--port-file``. Each start appends a
line to ``$INVENTORY_MARKER`` when set, so a test can prove the server was never started.
"""

from __future__ import annotations

import argparse
import os
import socket
from pathlib import Path

try:  # MCP SDK 2.x
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # MCP SDK 1.x
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]

STOCK = {"widget": 12, "gadget": 0, "sprocket": 40}

server = Server("inventory")
_token = ""


@server.tool()
def stock(item: str) -> dict[str, object]:
    """How many of an item are in stock.

    Args:
        item: The item name, e.g. "widget".
    """
    return {"item": item, "in_stock": STOCK.get(item.lower(), 0)}


@server.tool()
def reserve(item: str, count: int) -> dict[str, object]:
    """Reserve some of an item for the customer.

    Args:
        item: The item name.
        count: How many to reserve.
    """
    available = STOCK.get(item.lower(), 0)
    if count > available:
        return {"reserved": 0, "reason": f"only {available} {item} in stock"}
    return {"reserved": count, "reference": f"RES-{item.upper()}-{count}"}


@server.tool()
def whoami() -> str:
    """Which account the inventory server runs as."""
    return f"account inventory-bot, token {_token}, env token {os.environ.get('INVENTORY_TOKEN')}"


def main() -> None:
    global _token
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio")
    parser.add_argument("--port-file")
    parser.add_argument("--token", default="")
    options = parser.parse_args()
    _token = options.token
    marker = os.environ.get("INVENTORY_MARKER")
    if marker:
        with open(marker, "a", encoding="utf-8") as handle:
            handle.write(f"started {options.transport}\n")
    if options.transport == "stdio":
        server.run("stdio")
        return
    import anyio
    import uvicorn

    app = server.sse_app() if options.transport == "sse" else server.streamable_http_app()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    port = sock.getsockname()[1]
    uvi = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    Path(options.port_file).write_text(str(port))
    anyio.run(lambda: uvi.serve(sockets=[sock]))


if __name__ == "__main__":
    main()
