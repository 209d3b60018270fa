"""The guarded travel assistant after a fix that only its later turns see."""

from . import agent

__all__ = ["agent"]
