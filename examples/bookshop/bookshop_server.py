"""The bookshop's MCP server: catalogue, stock and orders, over stdio.

Written with the ``mcp`` package, as an MCP server of your own would be. It stands for a
server you cannot run in CI: it refuses to start without ``BOOKSHOP_API_TOKEN`` (the
credential a real shop system would want). The agent (``agent.py``) starts it as a
subprocess through ADK's ``McpToolset``; ``rec replay`` never does.

    BOOKSHOP_API_TOKEN=... python examples/bookshop/bookshop_server.py   # speaks MCP on stdio
"""

from __future__ import annotations

import os
import sys

try:  # MCP SDK 2.x
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # MCP SDK 1.x
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]

CATALOGUE = {
    "dune": {"title": "Dune", "author": "Frank Herbert", "isbn": "9780441172719", "stock": 4},
    "emma": {"title": "Emma", "author": "Jane Austen", "isbn": "9780141439587", "stock": 0},
    "solaris": {"title": "Solaris", "author": "Stanisław Lem", "isbn": "9780156027601", "stock": 2},
}

server = Server("bookshop")


def _book(title: str) -> dict[str, object] | None:
    return CATALOGUE.get(title.strip().lower())


@server.tool()
def search_books(query: str) -> list[dict[str, object]]:
    """Search the catalogue by title or author.

    Args:
        query: Words from the title or the author's name.
    """
    words = query.lower().split()
    return [
        {"title": b["title"], "author": b["author"], "isbn": b["isbn"]}
        for b in CATALOGUE.values()
        if any(w in f"{b['title']} {b['author']}".lower() for w in words)
    ]


@server.tool()
def check_stock(title: str) -> dict[str, object]:
    """How many copies of a book the shop has.

    Args:
        title: The book's title.
    """
    book = _book(title)
    return {"title": title, "copies": book["stock"] if book else 0}


@server.tool()
def place_order(title: str, quantity: int) -> dict[str, object]:
    """Order copies of a book for the customer.

    Args:
        title: The book's title.
        quantity: How many copies.
    """
    book = _book(title)
    if book is None or int(book["stock"]) < quantity:  # type: ignore[call-overload]
        return {"ordered": 0, "reason": f"not enough copies of {title} in stock"}
    return {"ordered": quantity, "order_id": f"BK-{book['isbn']}-{quantity}"}


@server.tool()
def cancel_order(order_id: str) -> dict[str, object]:
    """Cancel an order (the agent is not given this tool: see its tool_filter).

    Args:
        order_id: The order to cancel.
    """
    return {"cancelled": order_id}


if __name__ == "__main__":
    if not os.environ.get("BOOKSHOP_API_TOKEN"):
        sys.exit("bookshop_server: BOOKSHOP_API_TOKEN is not set (the shop system's credential)")
    server.run("stdio")
