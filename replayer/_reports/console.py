"""Console report: per eval set a header, then its cases, each failure's details under it.

Everything is rendered to a string (the CLI prints it) that fits ``width`` columns (the
terminal's width by default): a case is one line (its scores cut with ``...`` when they do
not fit), and every wrapped line breaks at a space or between a tool call's arguments,
never inside a word (:mod:`replayer._reports.layout`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cassettes._eval_enums import EvalStatus
from replayer._reports.figures import figures_table, suite_takes_line, takes_line
from replayer._reports.layout import PIPE_WIDTH, fit_line, terminal_width, wrap_call, wrap_words
from replayer._reports.masking import masked_result
from replayer._scoring.response_match import content_text

if TYPE_CHECKING:
    from cassettes._eval_result import EvalSetResult
    from replayer._replay_target import EvalSetReplay
    from replayer._scoring.views import (
        CaseResultView,
        InvocationView,
        MetricResultView,
        RowView,
        SetResultView,
    )

__all__ = [
    "STATUS_WORDS",
    "render_failures",
    "render_report",
    "render_summary",
    "render_totals",
    "render_reads",
    "render_not_compared",
    "render_unused",
]

STATUS_WORDS = {
    EvalStatus.PASSED: "PASSED",
    EvalStatus.FAILED: "FAILED",
    EvalStatus.NOT_EVALUATED: "NOT EVALUATED",
    EvalStatus.INFORMATIONAL: "INFO",
}
"""How each status is written in every report."""

_COLUMN = 8  # "PASSED  " / "FAILED  ": the case id starts here


def _score(metric: MetricResultView) -> str:
    return "-" if metric.score is None else f"{metric.score:.3f}"


def _case_line(case: CaseResultView, width: int | None) -> str:
    """One line; cut to ``width`` (None: a pipe or a log, where a case's scores are whole
    and the start of a reason that could not run is cut at :data:`PIPE_WIDTH`: the whole
    reason follows, wrapped)."""
    status = STATUS_WORDS[case.final_eval_status]
    head = f"{status:<{_COLUMN - 2}}  {case.eval_id} "
    metrics: Sequence[MetricResultView] = case.overall_eval_metric_results
    if not metrics:  # the case could not run: the start of the reason, cut at a word
        reason = case.failure_reasons[0].splitlines()[0] if case.failure_reasons else ""
        return fit_line(head, reason.split(" "), width or PIPE_WIDTH, separator=" ").rstrip()
    width = width or 1_000_000
    # Failed metrics first, so the line shows what matters even when it is cut; the
    # informational ones (ADK's efficiency metrics: a value, never a verdict) last.
    ordered = sorted(metrics, key=_line_order)
    line = fit_line(head, [f"{m.metric_name}={_score(m)}" for m in ordered], width)
    if line == head + "...":  # not even one score fits: count them instead
        judged = [m for m in metrics if m.eval_status is not EvalStatus.INFORMATIONAL]
        failed = sum(m.eval_status is EvalStatus.FAILED for m in judged)
        noun = "metric" if len(judged) == 1 else "metrics"
        tally = (
            f"{failed} of {len(judged)} {noun} failed" if failed else f"{len(judged)} {noun} passed"
        )
        line = f"{head} ({tally})"
    return line


def _line_order(metric: MetricResultView) -> int:
    if metric.eval_status is EvalStatus.FAILED:
        return 0
    return 2 if metric.eval_status is EvalStatus.INFORMATIONAL else 1


def _metric_line(metric: MetricResultView) -> str:
    """A metric's score on one invocation; an informational one's value alone, as ``adk
    eval`` prints it (it never passes or fails)."""
    if metric.eval_status is EvalStatus.INFORMATIONAL:
        value = "n/a" if metric.score is None else f"{metric.score:g}"
        return f"{metric.metric_name} {value} (informational)"
    verdict = STATUS_WORDS[metric.eval_status]
    return f"{metric.metric_name} {_score(metric)} {verdict} (threshold {metric.threshold})"


def _header(result: SetResultView, width: int) -> list[str]:
    files = {c.eval_set_file for c in result.eval_case_results if c.eval_set_file}
    where = f"  ({files.pop()})" if len(files) == 1 else ""
    title = f"Eval set {result.eval_set_id}{where}"
    return [
        title if len(title) <= width else f"Eval set {result.eval_set_id}",
        "=" * min(width, 40),
    ]


def _counts(result: SetResultView) -> str:
    cases = result.eval_case_results
    failed = sum(c.final_eval_status is EvalStatus.FAILED for c in cases)
    noun = "case" if len(cases) == 1 else "cases"
    return f"{len(cases) - failed} passed, {failed} failed, {len(cases)} {noun}"


def render_summary(result: SetResultView, *, width: int | None = None) -> str:
    """The eval set's header, one line per case, then the counts.

    ``width`` defaults to the terminal's; with no terminal, lines are not cut.
    """
    width = width or terminal_width()
    result = masked_result(result)
    lines = _header(result, width or PIPE_WIDTH)
    lines.extend(_case_line(case, width) for case in result.eval_case_results)
    lines.append(_counts(result))
    return "\n".join(lines) + "\n"


def _calls(invocation: InvocationView | None, width: int) -> list[str]:
    if invocation is None:
        return []
    calls = invocation.tool_calls
    if not calls:
        return ["(none)"]
    return [line for call in calls for line in wrap_call(call, width)]


def _table(rows: list[tuple[str, list[str], list[str]]], width: int) -> list[str]:
    label_w = max(len(label) for label, _, _ in rows)
    cell_w = max(16, (width - label_w - 6) // 2)
    out = [f"{'':<{label_w}} | {'expected':<{cell_w}} | actual"]
    out.append("-" * min(width, label_w + 2 * cell_w + 6))
    for label, left, right in rows:
        for i in range(max(len(left), len(right), 1)):
            out.append(
                f"{label if i == 0 else '':<{label_w}} | "
                f"{left[i] if i < len(left) else '':<{cell_w}} | "
                f"{right[i] if i < len(right) else ''}".rstrip()
            )
    return out


def _reply(invocation: InvocationView | None, width: int) -> list[str]:
    if invocation is None:
        return []
    return wrap_words(content_text(invocation.final_response), width)


def _reason_lines(reason: str, width: int) -> list[str]:
    """A failure reason as a bullet; its further lines (a miss's diff) indented under it."""
    head, *details = reason.splitlines() or [""]
    lines = wrap_words(head, width, first="  - ", indent="    ")
    for detail in details:
        if detail.strip():
            lines.extend(wrap_words(detail.strip(), width, first="      ", indent="        "))
    return lines


def _case_details(case: CaseResultView, width: int) -> list[str]:
    lines: list[str] = []
    for reason in case.failure_reasons:
        lines.extend(_reason_lines(reason, width))
    rows: Sequence[RowView] = case.eval_metric_result_per_invocation
    for index, row in enumerate(rows):
        label = f"  invocation {index + 1} of {len(rows)}"
        failed = [m for m in row.eval_metric_results if m.eval_status is EvalStatus.FAILED]
        if not failed and row.eval_metric_results:
            lines.append(f"{label}: passed")
            continue
        want, got = row.expected_invocation, row.actual_invocation
        user = content_text(got.user_content) or (content_text(want.user_content) if want else "")
        lines.extend(wrap_words(f'"{user}"', width, first=f"{label}: ", indent="    "))
        for metric in row.eval_metric_results:
            lines.extend(wrap_words(_metric_line(metric), width, first="    ", indent="      "))
        cell = max(16, (width - 4 - len("tool calls") - 6) // 2)
        table = _table(
            [
                ("tool calls", _calls(want, cell), _calls(got, cell)),
                ("reply", _reply(want, cell), _reply(got, cell)),
            ],
            width - 4,
        )
        lines.extend("    " + line for line in table)
    return lines


def render_failures(result: SetResultView, *, width: int | None = None) -> str:
    """For each failed case: its line, its reasons and, per failing invocation, expected
    vs actual (tool calls and reply) with every metric's score and threshold."""
    width = width or terminal_width()
    result = masked_result(result)
    lines: list[str] = []
    for case in result.eval_case_results:
        if case.final_eval_status is EvalStatus.FAILED:
            lines.append(_case_line(case, width))
            lines.extend(_case_details(case, width or PIPE_WIDTH))
    return "\n".join(lines) + ("\n" if lines else "")


def _figure_lines(case: CaseResultView, width: int) -> list[str]:
    """The case's takes, and its recorded figures (each turn's under them when several)."""
    lines: list[str] = []
    if case.takes is not None:
        lines.extend(wrap_words(takes_line(case.takes), width, first="  ", indent="    "))
    if case.multi_run is not None:
        lines.extend(wrap_words(case.multi_run, width, first="  ", indent="    "))
    if case.usage is not None:
        lines.extend("  " + line for line in figures_table(case.usage, case.usage.turns))
    return lines


def _suite_figures(result: SetResultView, width: int) -> list[str]:
    cases = result.eval_case_results
    usages = [c.usage for c in cases if c.usage is not None]
    lines: list[str] = []
    if usages:  # `rec score` has none, and loads none of this
        from cassettes._eval_result import Figures
        from replayer._usage import summed

        total = Figures.model_validate(summed(usages))
        lines.append(f"recorded usage of {len(usages)} of {len(cases)} cases:")
        lines.extend("  " + line for line in figures_table(total))
    takes = [c.takes for c in cases if c.takes is not None]
    if takes:
        lines.extend(wrap_words(suite_takes_line(takes), width, first="", indent="  "))
    return lines


def render_report(result: SetResultView, *, width: int | None = None) -> str:
    """The eval set's header, then each case (a failed case followed by its details, every
    case by its takes and recorded figures), then the counts and the set's figures."""
    width = width or terminal_width()
    result = masked_result(result)
    lines = _header(result, width or PIPE_WIDTH)
    for case in result.eval_case_results:
        lines.append(_case_line(case, width))
        if case.left_recording:  # auto mode: where the run stopped replaying
            lines.extend(
                wrap_words(case.left_recording, width or PIPE_WIDTH, first="  ", indent="    ")
            )
        lines.extend(_figure_lines(case, width or PIPE_WIDTH))
        if case.final_eval_status is EvalStatus.FAILED:
            lines.extend(_case_details(case, width or PIPE_WIDTH))
    lines.append(_counts(result))
    lines.extend(_suite_figures(result, width or PIPE_WIDTH))
    return "\n".join(lines) + "\n"


def render_totals(results: Sequence[EvalSetResult]) -> str:
    """One closing line over several eval sets, e.g. for a CI log."""
    cases = [c for result in results for c in result.eval_case_results]
    failed = sum(c.final_eval_status is EvalStatus.FAILED for c in cases)
    noun = "case" if len(cases) == 1 else "cases"
    sets = "eval set" if len(results) == 1 else "eval sets"
    verdict = "PASSED" if not failed else "FAILED"
    return (
        f"{verdict}: {len(cases) - failed} of {len(cases)} {noun} passed in {len(results)} {sets}\n"
    )


def render_reads(replays: Sequence[EvalSetReplay]) -> str:
    """One note per case that was served recorded reads of the clock, randomness or ids:
    what it was served, and what it read beyond the recording."""
    lines = [
        f"note: case {case}: {line}\n" for replay in replays for case, line in replay.reads.items()
    ]
    return "".join(lines)


def render_unused(
    replays: Sequence[EvalSetReplay], *, filtered: bool = False, width: int | None = None
) -> str:
    """One note per cassette whose unplayed exchanges say something about the agent.

    Recorded exchanges nothing asked for are worth a word only when every case replayed
    from that cassette ran to its end and at least one of them failed its metrics: then
    the agent made fewer (or other) model calls than recorded. They mean nothing when the
    run passed, when ``--case`` picked some cases (``filtered``), or when a case stopped
    early (its miss already says why the rest went unplayed).
    """
    width = width or terminal_width() or PIPE_WIDTH
    counts: dict[Path, int] = {}
    stopped: set[Path] = set()
    failed: set[Path] = set()
    for replay in replays:
        for cassette, count in replay.unused.items():
            counts[cassette] = count
            if replay.failures:
                stopped.add(cassette)
            if not replay.result.passed:
                failed.add(cassette)
    lines: list[str] = []
    for cassette, count in counts.items():
        if filtered or not count or cassette in stopped or cassette not in failed:
            continue
        noun = "exchange was" if count == 1 else "exchanges were"
        text = (
            f"note: {cassette}: {count} recorded model {noun} never replayed. The agent made "
            "fewer or different model calls than were recorded (it took another path), or "
            "the recording holds sessions no eval case replays; "
            f"`rec show {cassette}` shows the recorded timeline."
        )
        lines.extend(wrap_words(text, width, first="", indent="  "))
    return "\n".join(lines) + ("\n" if lines else "")


def render_not_compared(replays: Sequence[EvalSetReplay], *, width: int | None = None) -> str:
    """One note per cassette rebuilt from a trace: the request parts its trace does not
    hold, which the replay did not compare (a pass proves no more than the trace)."""
    width = width or terminal_width() or PIPE_WIDTH
    seen: dict[Path, tuple[str, list[str]]] = {}
    for replay in replays:
        seen.update(replay.not_compared)
    lines: list[str] = []
    for cassette, (source, parts) in seen.items():
        text = (
            f"note: {cassette} was imported from a trace ({source}): these parts of each "
            f"model request were not compared, as the trace does not hold them: "
            f"{', '.join(parts)}."
        )
        lines.extend(wrap_words(text, width, first="", indent="  "))
    return "\n".join(lines) + ("\n" if lines else "")
