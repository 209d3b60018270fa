"""Reports: console text, JUnit XML and ADK-shaped EvalSetResult JSON."""

from __future__ import annotations

from .console import ProgressBar, render_failures, render_report, render_summary, render_totals
from .junit import render_junit, write_junit
from .results import write_results

__all__ = [
    "ProgressBar",
    "render_failures",
    "render_junit",
    "render_report",
    "render_summary",
    "render_totals",
    "write_junit",
    "write_results",
]
