"""``--html FILE``: one self-contained HTML page a reviewer opens from a CI artifact.

A summary table (counts, a row per case linking to it, the recorded model calls, tokens
and latency per case), then per eval set and case: the status, every metric with its
threshold, the divergence of a case that could not run, and per invocation the user
turn, the expected and actual tool calls side by side (highlighted as the match type
judges them: :mod:`replayer._reports.trajectory_diff`), the final responses with a word
diff, and the tool responses folded away.

Nothing is fetched: CSS and JS are inline, and a Content-Security-Policy allows no
network and runs only the page's own script (a nonce). Every text from a model, a tool
or a file is masked (:func:`cassettes._secret_shapes.mask`) and HTML-escaped: a ``<script>``
in a reply shows as text.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cassettes._atomic_write import write_atomic
from cassettes._eval_config import MatchType
from cassettes._eval_result import EvalCaseResult, EvalMetricResult, EvalStatus
from cassettes._evalset import Invocation, invocation_tool_calls, invocation_tool_responses
from cassettes._genai_types import FunctionCall, FunctionResponse
from cassettes._secret_shapes import mask
from replayer._reports._html_assets import SCRIPT, STYLE
from replayer._reports.console import STATUS_WORDS
from replayer._reports.figures import figures_table, takes_line
from replayer._reports.set_report import Divergence, SetReport
from replayer._reports.text_diff import word_diff
from replayer._reports.timeline import Usage
from replayer._reports.trajectory_diff import CallRow, align_trajectories
from replayer._scoring.response_match import content_text

__all__ = ["REPORT_MODE", "render_html", "write_html"]

_TRAJECTORY_METRICS = (
    "tool_trajectory_avg_score",
    "tool_trajectory_rules_score",
    "tool_trajectory_f1",
)
_CLASS = {
    EvalStatus.PASSED: "passed",
    EvalStatus.FAILED: "failed",
    EvalStatus.NOT_EVALUATED: "not-evaluated",
    EvalStatus.INFORMATIONAL: "info",
}


def _e(value: object) -> str:
    """Masked, then escaped for HTML text and attribute values."""
    return html.escape(mask(str(value)), quote=True)


def _id(value: str) -> str:
    """An id as :func:`_e` gives it, with a line-break opportunity after each ``_``, ``-``,
    ``.`` and ``/`` (a long ``what_s_the_weather`` id wraps in its cell, at a word)."""
    return re.sub(r"([_\-./])", r"\1<wbr>", _e(value))


def _json(value: Any) -> str:
    return _e(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str))


def _score(metric: EvalMetricResult) -> str:
    return "–" if metric.score is None else f"{metric.score:.3f}"


def _threshold(metric: EvalMetricResult) -> str:
    """The metric's threshold; none for an informational metric, which only reports."""
    return "–" if metric.threshold is None else _e(metric.threshold)


def _chip(metric: EvalMetricResult) -> str:
    """A metric's score (and threshold, when it has one) in its status's colour."""
    threshold = "" if metric.threshold is None else f" / {_e(metric.threshold)}"
    return (
        f'<span class="chip {_CLASS[metric.eval_status]}">{_e(metric.metric_name)} '
        f"{_score(metric)}<span class=dim>{threshold}</span></span>"
    )


def _badge(status: EvalStatus) -> str:
    return f'<span class="badge {_CLASS[status]}">{_e(STATUS_WORDS[status])}</span>'


def _tokens(usage: Usage | None) -> tuple[str, str, str]:
    if usage is None:
        return "–", "–", "–"
    tokens = (
        f"{usage.total_tokens:,} "
        f'<span class="dim">({usage.prompt_tokens:,} prompt / '
        f"{usage.candidates_tokens:,} candidates)</span>"
    )
    latency = f"{usage.latency_ms / 1000:.2f} s" if usage.latency_ms else "–"
    return str(usage.model_calls), tokens, latency


def _anchor(set_index: int, case_index: int) -> str:
    return f"case-{set_index}-{case_index}"


def _summary(reports: Sequence[SetReport]) -> str:
    rows = []
    total = Usage()
    for s, report in enumerate(reports):
        for c, case in enumerate(report.result.eval_case_results):
            usage = report.costs.get(case.eval_id)
            if usage is not None:
                total = total.add(usage)
            calls, tokens, latency = _tokens(usage)
            metrics = " ".join(_chip(m) for m in case.overall_eval_metric_results) or (
                '<span class="dim">could not run</span>'
                if report.divergences.get(case.eval_id)
                else ""
            )
            rows.append(
                f'<tr class="case-row {_CLASS[case.final_eval_status]}">'
                f"<td>{_id(report.result.eval_set_id)}</td>"
                f'<td><a href="#{_anchor(s, c)}">{_id(case.eval_id)}</a></td>'
                f"<td>{_badge(case.final_eval_status)}</td><td>{metrics}</td>"
                f'<td class="num">{calls}</td><td class="num">{tokens}</td>'
                f'<td class="num">{latency}</td></tr>'
            )
    calls, tokens, latency = _tokens(total if total.model_calls else None)
    return (
        # In a box of its own: long ids wrap, and a table still too wide scrolls in the
        # box rather than the page scrolling sideways.
        '<div class="table-scroll"><table class="summary"><thead><tr><th>Eval set</th>'
        "<th>Case</th><th>Status</th>"
        "<th>Metrics (score / threshold)</th><th>Model calls</th>"
        "<th>Tokens (recorded)</th><th>Latency (recorded)</th></tr></thead><tbody>"
        + "".join(rows)
        + f'</tbody><tfoot><tr><td colspan="4">All cases</td><td class="num">{calls}</td>'
        f'<td class="num">{tokens}</td><td class="num">{latency}</td></tr></tfoot></table></div>'
    )


def _call_html(call: FunctionCall | None, row: CallRow | None, index: int | None) -> str:
    if call is None:
        return '<span class="dim">—</span>'
    keys = row.keys if row is not None else frozenset()
    args = ", ".join(
        f'<span class="arg{" changed" if key in keys else ""}"><span class="key">{_e(key)}</span>'
        f"={_e(json.dumps(value, ensure_ascii=False))}</span>"
        for key, value in (call.args or {}).items()
    )
    number = f'<span class="dim">#{index + 1}</span> ' if index is not None else ""
    return f'{number}<span class="fn">{_e(call.name)}</span>({args})'


_ROW_WORDS = {
    "match": "equal",
    "differs": "differs",
    "missing": "missing",
    "extra": "not expected",
    "allowed": "allowed by the match type",
}


def _trajectory(
    expected: list[FunctionCall], actual: list[FunctionCall], metric: EvalMetricResult | None
) -> str:
    criterion = (metric.criterion if metric is not None else None) or {}
    raw_type = str(criterion.get("match_type") or "EXACT").upper()
    match_type = MatchType[raw_type] if raw_type in MatchType.__members__ else MatchType.EXACT
    ignore_args = bool(criterion.get("ignore_args"))
    rows = align_trajectories(expected, actual, match_type, ignore_args=ignore_args)
    label = f"{metric.metric_name}: " if metric is not None else ""
    how = f"{label}{match_type.name}{', names only' if ignore_args else ''}"
    if not rows:
        body = '<tr><td colspan="3" class="dim">no tool calls on either side</td></tr>'
    else:
        body = "".join(
            f'<tr class="call {row.status}">'
            f"<td>{_call_html(row.expected, row, row.expected_index)}</td>"
            f"<td>{_call_html(row.actual, row, row.actual_index)}</td>"
            f'<td class="why">{_e(_ROW_WORDS[row.status])}'
            + (f": {_e(', '.join(sorted(row.keys)))}" if row.keys else "")
            + "</td></tr>"
            for row in rows
        )
    return (
        f'<table class="trajectory"><caption>Tool calls ({_e(how)})</caption>'
        "<thead><tr><th>Expected</th><th>Actual</th><th></th></tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def _responses(title: str, responses: list[FunctionResponse]) -> str:
    if not responses:
        return f'<div><h5>{_e(title)}</h5><p class="dim">none</p></div>'
    items = "".join(
        f"<details class=tool-response><summary>{_e(r.name)}</summary>"
        f"<pre>{_json(r.response)}</pre></details>"
        for r in responses
    )
    return f"<div><h5>{_e(title)}</h5>{items}</div>"


def _diff_html(pieces: Sequence[tuple[str, str]]) -> str:
    out = []
    for kind, text in pieces:
        if kind == "same":
            out.append(_e(text))
        else:
            tag = "del" if kind == "removed" else "ins"
            out.append(f"<{tag}>{_e(text)}</{tag}>")
    return "".join(out)


def _invocation(index: int, total: int, row: Any) -> str:
    want: Invocation | None = row.expected_invocation
    got: Invocation = row.actual_invocation
    user = content_text(got.user_content) or (content_text(want.user_content) if want else "")
    failed = any(m.eval_status is EvalStatus.FAILED for m in row.eval_metric_results)
    chips = " ".join(_chip(m) for m in row.eval_metric_results)
    trajectory_metrics = [
        m for m in row.eval_metric_results if m.metric_name in _TRAJECTORY_METRICS
    ] or [None]
    expected_calls = invocation_tool_calls(want) if want else []
    actual_calls = invocation_tool_calls(got)
    seen: set[str] = set()
    tables = []
    for metric in trajectory_metrics:
        criterion = json.dumps((metric.criterion if metric else None) or {}, sort_keys=True)
        if criterion in seen:
            continue
        seen.add(criterion)
        tables.append(_trajectory(expected_calls, actual_calls, metric))
    left, right = word_diff(
        content_text(want.final_response) if want else "", content_text(got.final_response)
    )
    return (
        f'<section class="invocation {"failed" if failed else "passed"}">'
        f"<h4>Invocation {index + 1} of {total}</h4><div class=chips>{chips}</div>"
        f'<blockquote class="user"><span class="dim">user:</span> {_e(user)}</blockquote>'
        + "".join(tables)
        + '<div class="replies"><div><h5>Expected response</h5>'
        f'<p class="reply">{_diff_html(left)}</p></div>'
        f'<div><h5>Actual response</h5><p class="reply">{_diff_html(right)}</p></div></div>'
        '<details class="responses"><summary>Tool responses</summary><div class="replies">'
        + _responses("Expected", invocation_tool_responses(want) if want else [])
        + _responses("Actual", invocation_tool_responses(got))
        + "</div></details></section>"
    )


def _divergences(items: list[Divergence]) -> str:
    out = []
    for item in items:
        where = ", ".join(
            part
            for part in (
                f"run {item.run}" if item.run else "",
                f"turn {item.turn}" if item.turn else "",
                f"model call {item.model_call}" if item.model_call else "",
            )
            if part
        )
        changes = "".join(f"<li><code>{_e(line)}</code></li>" for line in item.changes)
        ignore = (
            f"<p>To leave this field out of matching: <code>{_e(item.ignore)}</code></p>"
            if item.ignore
            else ""
        )
        out.append(
            '<div class="divergence"><h4>Could not run'
            + (f" — {_e(where)}" if where else "")
            + f"</h4><p>{_e(item.problem)}</p>"
            + (f"<p>What changed in the request:</p><ul>{changes}</ul>" if changes else "")
            + ignore
            + "</div>"
        )
    return "".join(out)


def _case(report: SetReport, s: int, c: int, case: EvalCaseResult) -> str:
    status = case.final_eval_status
    stopped = bool(report.divergences.get(case.eval_id))  # the box below says it better
    reasons = "".join(
        f"<li>{_e(r.splitlines()[0])}</li>"
        for r in case.failure_reasons
        if r.strip() and not (stopped and r.startswith("could not run"))
    )
    rows = case.eval_metric_result_per_invocation
    invocations = "".join(_invocation(i, len(rows), row) for i, row in enumerate(rows))
    open_ = " open" if status is EvalStatus.FAILED else ""
    return (
        f'<details class="case {_CLASS[status]}" id="{_anchor(s, c)}"{open_}>'
        f"<summary>{_badge(status)} <span class=case-id>{_e(case.eval_id)}</span></summary>"
        f"{_figures(report, case)}"
        + (f'<p class="cost">{_e(case.left_recording)}</p>' if case.left_recording else "")
        + (f'<p class="cost">{_e(case.replayed_reads)}</p>' if case.replayed_reads else "")
        + (f'<ul class="reasons">{reasons}</ul>' if reasons else "")
        + _divergences(report.divergences.get(case.eval_id, []))
        + _metric_table(case)
        + invocations
        + "</details>"
    )


def _metric_table(case: EvalCaseResult) -> str:
    """The case's metrics: score, threshold, status and criterion of each."""
    metrics = "".join(
        f'<tr class="{_CLASS[m.eval_status]}"><td>{_e(m.metric_name)}</td>'
        f'<td class="num">{_score(m)}</td><td class="num">{_threshold(m)}</td>'
        f"<td>{_badge(m.eval_status)}</td>"
        f"<td><code>{_e(json.dumps(m.criterion or {}, sort_keys=True))}</code></td></tr>"
        for m in case.overall_eval_metric_results
    )
    if not metrics:
        return ""
    return (
        '<table class="metrics"><thead><tr><th>Metric</th><th>Score</th><th>Threshold</th>'
        f"<th>Status</th><th>Criterion</th></tr></thead><tbody>{metrics}</tbody></table>"
    )


def _figures(report: SetReport, case: EvalCaseResult) -> str:
    """What the case's recording used, and how it compares with the baseline."""
    calls, tokens, latency = _tokens(report.costs.get(case.eval_id))
    cost = (
        f'<p class="cost">Recorded: {calls} model call(s), {tokens} tokens, {latency}</p>'
        if calls != "–"
        else ""
    )
    if case.usage is not None:  # the figures the runner read per turn
        cost = _usage_table(case)
    compared = report.comparisons.get(case.eval_id)
    if compared:
        parting, *side_by_side = compared
        cost += (
            f'<pre class="baseline">Against the baseline: {_e(parting)}\n'
            + "\n".join(_e(row) for row in side_by_side)
            + "</pre>"
        )
    return cost


def _usage_table(case: EvalCaseResult) -> str:
    """The case's takes, and its recorded figures per turn and in all, as a table."""
    assert case.usage is not None
    header, *rows = figures_table(case.usage, case.usage.turns)
    takes = f'<p class="takes">{_e(takes_line(case.takes))}</p>' if case.takes else ""
    return (
        f'{takes}<pre class="usage">Recorded usage\n{_e(header)}\n'
        + "\n".join(_e(row) for row in rows)
        + "</pre>"
    )


def render_html(reports: Sequence[SetReport], *, title: str = "rec report") -> str:
    """The whole page for one or more eval sets."""
    cases = [c for r in reports for c in r.result.eval_case_results]
    failed = sum(c.final_eval_status is EvalStatus.FAILED for c in cases)
    verdict = "FAILED" if failed else "PASSED"
    nonce = secrets.token_urlsafe(16)
    sections = []
    for s, report in enumerate(reports):
        path = f' <span class="path">{_e(report.path)}</span>' if report.path else ""
        body = "".join(
            _case(report, s, c, case) for c, case in enumerate(report.result.eval_case_results)
        )
        sections.append(
            f'<section class="evalset"><h2>Eval set {_e(report.result.eval_set_id)}{path}</h2>'
            f"{body}</section>"
        )
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    counts = (
        f"{len(cases) - failed} passed, {failed} failed, {len(cases)} case(s) "
        f"in {len(reports)} eval set(s)"
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"style-src 'unsafe-inline'; script-src 'nonce-{nonce}'; img-src data:\">"
        f"<title>{_e(title)}: {verdict}, {_e(counts)}</title><style>{STYLE}</style></head><body>"
        f"<header><h1>{_e(title)} "
        f'<span class="badge {"failed" if failed else "passed"}">{verdict}</span></h1>'
        f'<p id="counts">{_e(counts)}. Generated {_e(when)}. Tokens and latency are the '
        "recorded ones: what these cases cost when they ran live.</p>"
        '<p class="controls"><label><input type="checkbox" id="only-failed"> '
        "only failed cases</label> "
        '<button type="button" id="expand-all">expand all</button> '
        '<button type="button" id="collapse-all">collapse all</button></p></header>'
        f"<main>{_summary(reports)}{''.join(sections)}</main>"
        f'<script nonce="{nonce}">{SCRIPT}</script></body></html>\n'
    )


REPORT_MODE = 0o644
"""The HTML report's file mode. Recordings are written private (0600: they hold whole
prompts and answers), but the report is made to be shared: a CI artifact, opened by a
reviewer or served by a web server running as another user. Everything in it is masked,
so it is written readable by all, whatever mode a previous report had."""


def write_html(
    reports: Sequence[SetReport], path: str | Path, *, title: str = "rec report"
) -> Path:
    """Write :func:`render_html` to ``path`` atomically (its folder is created), with
    mode :data:`REPORT_MODE` (0644)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(target, render_html(reports, title=title), mode=REPORT_MODE)
