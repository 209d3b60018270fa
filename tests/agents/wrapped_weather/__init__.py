"""An agent whose ``after_tool_callback`` reshapes every tool result (wraps it in ``data``)."""

from . import agent

__all__ = ["agent"]
