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
from .html import render_html, write_html
from .junit import render_junit, write_junit
from .progress import ProgressBar
from .results import write_results
from .set_report import SetReport, report_from_replay, report_from_score
from .timeline import CassetteTimeline, cassette_timelines, dump_timelines, render_timelines

__all__ = [
    "CassetteTimeline",
    "ProgressBar",
    "STATUS_WORDS",
    "SetReport",
    "cassette_timelines",
    "dump_timelines",
    "render_failures",
    "render_html",
    "render_junit",
    "render_report",
    "render_summary",
    "render_timelines",
    "render_totals",
    "render_unused",
    "report_from_replay",
    "report_from_score",
    "write_html",
    "write_junit",
    "write_results",
]
