"""A weather ADK agent on a LiteLLM Anthropic model, loadable the way ``adk eval`` loads one."""

from . import agent

__all__ = ["agent"]
