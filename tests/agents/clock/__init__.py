"""An agent whose instruction holds the current time (as ADK's memory sample's does)."""

from . import agent

__all__ = ["agent"]
