"""Two research branches in a ParallelAgent, then a merger that reads both."""

from . import agent

__all__ = ["agent"]
