"""A one-call, no-tool agent: takes, usage and budgets are tested on it."""

from . import agent

__all__ = ["agent"]
