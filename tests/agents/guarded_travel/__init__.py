"""The travel assistant behind a guardrail: a ``before_model_callback`` answers some turns."""

from . import agent

__all__ = ["agent"]
