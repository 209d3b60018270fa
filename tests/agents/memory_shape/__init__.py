"""The shape of adk-python's ``memory`` sample: ``{_time}`` put into the instruction by a
callback."""

from . import agent

__all__ = ["agent"]
