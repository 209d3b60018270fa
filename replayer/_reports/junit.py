"""JUnit XML: one testsuite per eval set, one testcase per eval case, metrics as properties.

A case's recorded figures are properties named ``rec.prompt_tokens``, ``rec.cost_usd``
(``unknown`` without a price), ... its takes ``rec.takes`` and the recorded reads of the
clock, randomness and ids it was served ``rec.reads``.

Each testcase's ``time`` is the wall time its runs took (``duration_seconds``), ``0`` for a
case rec did not run (``rec score``); each testsuite's is the sum of its cases'.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from cassettes._atomic_write import write_atomic
from cassettes._eval_result import EvalCaseResult, EvalSetResult, EvalStatus
from replayer._reports.console import render_failures
from replayer._reports.figures import figure_properties, takes_line
from replayer._reports.masking import masked_result

__all__ = ["render_junit", "write_junit"]


def render_junit(results: list[EvalSetResult]) -> str:
    """The JUnit XML document for one or more eval set results."""
    root = ET.Element("testsuites")
    for result in map(masked_result, results):
        cases = result.eval_case_results
        failed = [c for c in cases if c.final_eval_status is EvalStatus.FAILED]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=result.eval_set_id,
            tests=str(len(cases)),
            failures=str(len(failed)),
            errors="0",
            skipped="0",
            time=_seconds(sum(c.duration_seconds or 0.0 for c in cases)),
        )
        for case in cases:
            _testcase(suite, result, case)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(suite: ET.Element, result: EvalSetResult, case: EvalCaseResult) -> None:
    """One case's testcase: its metrics and figures as properties, and why it failed."""
    element = ET.SubElement(
        suite,
        "testcase",
        classname=result.eval_set_id,
        name=case.eval_id,
        time=_seconds(case.duration_seconds or 0.0),
    )
    properties = ET.SubElement(element, "properties")
    for name, value in _properties(case):
        ET.SubElement(properties, "property", name=name, value=value)
    if case.final_eval_status is EvalStatus.FAILED:
        failure = ET.SubElement(
            element,
            "failure",
            message="; ".join(r.splitlines()[0] for r in case.failure_reasons if r)
            or "case failed",
            type="EvalCaseFailed",
        )
        single = result.model_copy(update={"eval_case_results": [case]})
        failure.text = render_failures(single, width=100)


def _properties(case: EvalCaseResult) -> list[tuple[str, str]]:
    """(name, value) of each metric, each recorded figure and the takes."""
    properties = [
        (
            metric.metric_name,
            f"score={'none' if metric.score is None else repr(metric.score)} "
            f"threshold={metric.threshold} status={metric.eval_status.name}",
        )
        for metric in case.overall_eval_metric_results
    ]
    if case.usage is not None:
        properties.extend(figure_properties(case.usage))
    if case.takes is not None:
        properties.append(("rec.takes", takes_line(case.takes)))
    if case.replayed_reads:
        properties.append(("rec.reads", case.replayed_reads))
    return properties


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def write_junit(results: list[EvalSetResult], path: str | Path) -> Path:
    """Write :func:`render_junit` to ``path`` atomically."""
    return write_atomic(path, render_junit(results))
