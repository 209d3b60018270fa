"""An agent folder loadable the way ``adk eval`` loads one."""

from . import agent

__all__ = ["agent"]
