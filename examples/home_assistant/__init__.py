"""A home-automation assistant ADK agent (loaded like ``adk run`` / ``adk eval`` load one)."""

from . import agent

__all__ = ["agent"]
