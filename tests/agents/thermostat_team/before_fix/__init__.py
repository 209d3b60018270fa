"""The thermostat team (before_fix), loadable like `adk run` loads one."""

from . import agent

__all__ = ["agent"]
