"""A weather ADK agent on a LiteLLM OpenAI model, loadable the way ``adk eval`` loads one."""

from . import agent

__all__ = ["agent"]
