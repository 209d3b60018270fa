"""An agent whose requests hold what its code read: the time, a uuid and a random draw."""

from . import agent

__all__ = ["agent"]
