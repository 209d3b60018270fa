"""A weather ADK agent on a LiteLLM model (OpenAI's wire), loadable as `adk eval` loads one."""

from . import agent

__all__ = ["agent"]
