"""An ADK agent whose tools come from an MCP server (``server.py``), for rec's MCP tests."""
