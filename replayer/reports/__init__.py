"""Reports: console text, JUnit XML and ADK-shaped EvalSetResult JSON."""

from __future__ import annotations

from .console import (
    STATUS_WORDS,
    render_failures,
    render_report,
    render_summary,
    render_totals,
    render_unused,
)
from .junit import render_junit, write_junit
from .progress import ProgressBar
from .results import write_results

__all__ = [
    "STATUS_WORDS",
    "ProgressBar",
    "render_failures",
    "render_junit",
    "render_report",
    "render_summary",
    "render_totals",
    "render_unused",
    "write_junit",
    "write_results",
]
