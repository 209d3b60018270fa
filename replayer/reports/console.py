"""Console report: a summary per eval set and, per failed case, expected vs actual.

Everything is rendered to a string (the CLI prints it) and fits ``width`` columns (80 by
default): long cells wrap inside their column instead of overflowing.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from typing import IO

from evalfiles import (
    EvalCaseResult,
    EvalSetResult,
    EvalStatus,
    FunctionCall,
    Invocation,
    invocation_tool_calls,
)
from replayer.scoring import content_text

__all__ = ["ProgressBar", "render_failures", "render_report", "render_summary", "render_totals"]

_STATUS = {
    EvalStatus.PASSED: "PASSED",
    EvalStatus.FAILED: "FAILED",
    EvalStatus.NOT_EVALUATED: "NOT EVALUATED",
    EvalStatus.INFORMATIONAL: "INFO",
}


def render_summary(result: EvalSetResult, *, width: int = 80) -> str:
    """One line per case, then the totals."""
    lines = [f"Eval set {result.eval_set_id}", "=" * min(width, 40)]
    for case in result.eval_case_results:
        scores = ", ".join(
            f"{m.metric_name}={'-' if m.score is None else f'{m.score:.3f}'}"
            for m in case.overall_eval_metric_results
        )
        head = f"{_STATUS[case.final_eval_status]:<8} {case.eval_id}"
        lines.extend(textwrap.wrap(f"{head}  {scores}", width, subsequent_indent=" " * 9))
    cases = result.eval_case_results
    failed = sum(c.final_eval_status is EvalStatus.FAILED for c in cases)
    noun = "case" if len(cases) == 1 else "cases"
    lines.append(f"{len(cases) - failed} passed, {failed} failed, {len(cases)} {noun}")
    return "\n".join(lines) + "\n"


def _calls(invocation: Invocation | None) -> str:
    if invocation is None:
        return ""
    return "\n".join(_call_text(c) for c in invocation_tool_calls(invocation)) or "(none)"


def _call_text(call: FunctionCall) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in (call.args or {}).items())
    return f"{call.name}({args})"


def _table(rows: list[tuple[str, str, str]], width: int) -> list[str]:
    label_w = max(len(r[0]) for r in rows)
    cell_w = max(10, (width - label_w - 7) // 2)
    out = [f"{'':<{label_w}} | {'expected':<{cell_w}} | actual"]
    out.append("-" * min(width, label_w + 2 * cell_w + 6))
    for label, want, got in rows:
        left = _wrap(want, cell_w)
        right = _wrap(got, cell_w)
        for i in range(max(len(left), len(right))):
            out.append(
                f"{label if i == 0 else '':<{label_w}} | "
                f"{left[i] if i < len(left) else '':<{cell_w}} | "
                f"{right[i] if i < len(right) else ''}".rstrip()
            )
    return out


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        lines.extend(textwrap.wrap(paragraph, width) or [""])
    return lines


def _case_failure(case: EvalCaseResult, width: int) -> list[str]:
    lines = [f"FAILED {case.eval_id}"]
    for reason in case.failure_reasons:
        lines.extend(textwrap.wrap(reason, width, initial_indent="  - ", subsequent_indent="    "))
    for index, row in enumerate(case.eval_metric_result_per_invocation):
        want, got = row.expected_invocation, row.actual_invocation
        rows = [
            ("user", content_text(got.user_content), ""),
            ("tool calls", _calls(want), _calls(got)),
            (
                "reply",
                content_text(want.final_response) if want else "",
                content_text(got.final_response),
            ),
        ]
        for metric in row.eval_metric_results:
            score = "-" if metric.score is None else f"{metric.score:.3f}"
            rows.append(
                (
                    metric.metric_name[:25],
                    f"threshold {metric.threshold}",
                    f"{score} {_STATUS[metric.eval_status]}",
                )
            )
        lines.append(f"  invocation {index + 1}")
        lines.extend("  " + line for line in _table(rows, width - 2))
    return lines


def render_failures(result: EvalSetResult, *, width: int = 80) -> str:
    """For each failed case: its reasons and an expected-vs-actual table per invocation."""
    lines: list[str] = []
    for case in result.eval_case_results:
        if case.final_eval_status is EvalStatus.FAILED:
            lines.extend(_case_failure(case, width))
            lines.append("")
    return "\n".join(lines)


def render_report(result: EvalSetResult, *, width: int = 80) -> str:
    """Failures first (details), then the summary."""
    failures = render_failures(result, width=width)
    return (failures + "\n" if failures else "") + render_summary(result, width=width)


class ProgressBar:
    """A one-line progress bar on stderr, drawn only when that stream is a terminal.

    Example:
        >>> with ProgressBar(total=len(cases)) as bar:
        ...     for case in cases:
        ...         bar.advance()
    """

    def __init__(self, total: int, *, stream: IO[str] | None = None, width: int = 40) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())

    def advance(self, step: int = 1) -> None:
        """Count ``step`` more items and redraw."""
        self.done += step
        if self.enabled:
            filled = self.width * self.done // self.total
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r[{bar}] {self.done}/{self.total}")
            self.stream.flush()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


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
