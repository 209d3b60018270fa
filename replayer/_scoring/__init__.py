"""Scorers: ADK's built-in metrics with bit-identical floats, rec's extra metrics, custom
metrics and ADK's own judge evaluators.

The names below load on first use: ``rec score`` imports only the scorers its metrics
need (the judge and custom metrics bring pydantic and google-adk).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "MetricOutcome",
    "args_under_rule",
    "calls_equal",
    "content_text",
    "evaluate_metric",
    "load_metric_function",
    "response_match_scores",
    "rouge1_fmeasure",
    "run_adk_metric",
    "run_custom_metric",
    "status_for",
    "tokenize",
    "tool_trajectory_scores",
    "trajectory_f1",
    "trajectory_matches",
]

_HOMES = {
    "MetricOutcome": "outcome",
    "status_for": "outcome",
    "args_under_rule": "trajectory",
    "calls_equal": "trajectory",
    "trajectory_f1": "trajectory",
    "trajectory_matches": "trajectory",
    "content_text": "response_match",
    "rouge1_fmeasure": "response_match",
    "tokenize": "response_match",
    "evaluate_metric": "metrics",
    "response_match_scores": "metrics",
    "tool_trajectory_scores": "metrics",
    "load_metric_function": "custom",
    "run_custom_metric": "custom",
    "run_adk_metric": "judge",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
