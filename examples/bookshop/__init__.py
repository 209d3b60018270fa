"""A bookshop assistant ADK agent whose tools come from an MCP server (``bookshop_server.py``)."""

from . import agent

__all__ = ["agent"]
