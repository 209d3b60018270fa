"""The capital agent changed: it looks a capital up with a tool (one more model call)."""

from . import agent

__all__ = ["agent"]
