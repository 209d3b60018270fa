"""A travel assistant ADK agent, loadable the way ``adk eval`` loads one."""

from . import agent

__all__ = ["agent"]
