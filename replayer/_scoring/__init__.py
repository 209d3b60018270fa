"""Scorers: ADK's built-in metrics with bit-identical floats, rec's extra metrics, custom
metrics and ADK's own judge evaluators."""

from __future__ import annotations

from replayer._scoring.custom import load_metric_function, run_custom_metric
from replayer._scoring.judge import run_adk_metric
from replayer._scoring.metrics import evaluate_metric, response_match_scores, tool_trajectory_scores
from replayer._scoring.outcome import MetricOutcome, status_for
from replayer._scoring.response_match import content_text, rouge1_fmeasure, tokenize
from replayer._scoring.trajectory import (
    args_under_rule,
    calls_equal,
    trajectory_f1,
    trajectory_matches,
)

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
