"""Reports: console text, JUnit XML and ADK-shaped EvalSetResult JSON."""

from __future__ import annotations

from replayer._reports.console import (
    STATUS_WORDS,
    render_failures,
    render_report,
    render_summary,
    render_totals,
    render_unused,
)
from replayer._reports.html import render_html, write_html
from replayer._reports.junit import render_junit, write_junit
from replayer._reports.progress import ProgressBar
from replayer._reports.results import write_results
from replayer._reports.set_report import SetReport, report_from_replay, report_from_score
from replayer._reports.timeline import (
    CassetteTimeline,
    cassette_timelines,
    dump_timelines,
    render_timelines,
)

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
