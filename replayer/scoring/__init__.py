"""Scorers: ADK's built-in metrics with bit-identical floats, rec's extra metrics, custom
metrics and ADK's own judge evaluators."""

from __future__ import annotations

from .custom import load_metric_function, run_custom_metric
from .judge import run_adk_metric
from .metrics import evaluate_metric, response_match_scores, tool_trajectory_scores
from .outcome import MetricOutcome, status_for
from .response_match import content_text, rouge1_fmeasure, tokenize
from .trajectory import args_under_rule, calls_equal, trajectory_f1, trajectory_matches

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
