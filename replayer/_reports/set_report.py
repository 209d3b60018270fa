"""What the HTML report shows of one eval set: the result, why cases could not run, and
what each case's model calls cost when they were recorded.

A :class:`SetReport` is plain data (a pydantic model): it is built in the process that
ran the eval set and can cross a process boundary as JSON (pytest-xdist workers hand
theirs to the controller, which writes one report).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from cassettes._cassette import Exchange, load_cassette
from cassettes._eval_result import EvalSetResult
from cassettes._evalset import EvalCase, EvalSet, Invocation, load_evalset
from cassettes._file_names import cassette_beside
from cassettes._secret_shapes import mask
from replayer._reports.timeline import Usage, timeline_of

if TYPE_CHECKING:
    from replayer._adk_runner import CaseFailure
    from replayer._replay_target import EvalSetReplay

__all__ = [
    "Divergence",
    "costs_by_case",
    "merge_reports",
    "SetReport",
    "report_from_replay",
    "report_from_score",
]


class Divergence(BaseModel):
    """Why a case run could not finish: where, and what differed from the recording."""

    run: int | None = None
    """1-based run number when the case ran several times."""
    turn: int | None = None
    model_call: int | None = None
    problem: str
    """The first line of the reason (for a miss: the request and the nearest recording)."""
    changes: list[str] = Field(default_factory=list)
    """One line per differing field of the request (a miss)."""
    ignore: str | None = None
    """The option that would leave the first differing request field out of matching, in
    the words of the front end the run was in (``--ignore systemInstruction`` under rec's
    CLI, ``--rec-ignore systemInstruction`` under pytest), when that helps."""


class SetReport(BaseModel):
    """One eval set's outcome with everything the HTML report shows."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: str | None = None
    """The eval set file."""
    source: str = "replay"
    """``replay`` (``rec replay``, AgentEvaluator) or ``score`` (``rec score``)."""
    result: EvalSetResult
    divergences: dict[str, list[Divergence]] = Field(default_factory=dict)
    """Per eval id: why its runs could not finish."""
    costs: dict[str, Usage] = Field(default_factory=dict)
    """Per eval id: the model calls, tokens and recorded latency of its runs."""
    comparisons: dict[str, list[str]] = Field(default_factory=dict)
    """Per eval id: the case beside its baseline (``--baseline``): where it parts, then
    the side-by-side rows."""


def _divergence(failure: CaseFailure, run: int | None) -> Divergence:
    head, *rest = failure.reason.splitlines() or [""]
    miss = failure.miss
    changes = [mask(line) for line in (miss.diff if miss is not None else []) if line.strip()]
    if miss is None:
        changes = [mask(line.strip()) for line in rest if line.strip()]
    prefix = re.match(r"^turn \d+(, model call \d+)?: ", head)
    return Divergence(
        run=run,
        turn=failure.turn,
        model_call=failure.model_call,
        problem=mask(head[prefix.end() :] if prefix else head),
        changes=changes,
        ignore=miss.ignore if miss is not None else None,
    )


def merge_reports(reports: Sequence[SetReport]) -> list[SetReport]:
    """One report per eval set file: the reports of one file's cases (pytest runs each
    collected eval case alone) joined in the order given; reports of in-memory eval sets
    and of ``rec score`` are kept as they are."""
    merged: list[SetReport] = []
    by_path: dict[tuple[str, str], int] = {}
    for report in reports:
        key = (report.path or "", report.source)
        if report.path is None or key not in by_path:
            if report.path is not None:
                by_path[key] = len(merged)
            merged.append(report)
            continue
        into = merged[by_path[key]]
        result = into.result.model_copy(
            update={
                "eval_case_results": into.result.eval_case_results + report.result.eval_case_results
            }
        )
        merged[by_path[key]] = into.model_copy(
            update={
                "result": result,
                "divergences": {**into.divergences, **report.divergences},
                "costs": {**into.costs, **report.costs},
            }
        )
    return merged


def _user_texts(invocations: Sequence[Invocation]) -> list[str]:
    return [
        mask("\n".join(p.text for p in inv.user_content.parts or [] if p.text))
        for inv in invocations
    ]


def costs_by_case(exchanges: Sequence[Exchange], cases: Sequence[EvalCase]) -> dict[str, Usage]:
    """Which recorded exchanges belong to which case, and what they cost.

    The exchanges are threaded into conversations (as ``rec start`` does), and each
    conversation goes to the first case whose user turns it follows (a case whose run
    stopped early has a shorter conversation). Several runs of a case add up.
    """
    timeline = timeline_of(exchanges)
    wanted = [(case.eval_id, _user_texts(case.conversation or [])) for case in cases]
    costs: dict[str, Usage] = {}
    for conversation in timeline.conversations:
        said = [turn.user for turn in conversation.turns]
        owner = next(
            (eval_id for eval_id, texts in wanted if said and texts[: len(said)] == said), None
        )
        if owner is not None:
            costs[owner] = costs.get(owner, Usage()).add(conversation.usage())
    return costs


def report_from_replay(
    replay: EvalSetReplay, comparisons: Mapping[tuple[str, str], list[str]] | None = None
) -> SetReport:
    """The report of one replayed eval set (``rec replay``, AgentEvaluator), with each
    case's comparison with the baseline (by eval set id and eval id) when given."""
    set_id = replay.result.eval_set_id
    divergences: dict[str, list[Divergence]] = {}
    runs = {f.eval_id: 0 for f in replay.failures}
    for failure in replay.failures:
        runs[failure.eval_id] += 1
    for failure in replay.failures:
        items = divergences.setdefault(failure.eval_id, [])
        label = len(items) + 1 if runs[failure.eval_id] > 1 else None
        items.append(_divergence(failure, label))
    return SetReport(
        path=str(replay.path) if replay.path is not None else None,
        result=replay.result,
        divergences=divergences,
        costs=costs_by_case(_each_once(replay.traffic), replay.cases),
        comparisons={
            eval_id: rows
            for (set_of, eval_id), rows in (comparisons or {}).items()
            if set_of == set_id
        },
    )


def _each_once(traffic: Sequence[Exchange]) -> list[Exchange]:
    """The recorded exchanges a replay was answered with, each once: ``--num-runs N`` serves
    a case's recording N times, and the report shows what the recording holds."""
    seen: set[tuple[int, str]] = set()
    once = []
    for exchange in traffic:
        key = (exchange.id, exchange.recorded_at)
        if key not in seen:
            seen.add(key)
            once.append(exchange)
    return once


def _events_cost(evalset: EvalSet) -> dict[str, Usage]:
    costs: dict[str, Usage] = {}
    for case in evalset.eval_cases:
        total = Usage()
        for invocation in case.conversation or []:
            for event in getattr(invocation.intermediate_data, "invocation_events", []):
                usage = event.usage_metadata
                if usage is None:
                    continue
                total = total.add(
                    Usage(
                        model_calls=1,
                        prompt_tokens=usage.prompt_token_count or 0,
                        candidates_tokens=usage.candidates_token_count or 0,
                        total_tokens=usage.total_token_count or 0,
                    )
                )
        if total.model_calls:
            costs[case.eval_id] = total
    return costs


def report_from_score(
    result: EvalSetResult, expected: str | Path, actual: Sequence[str | Path]
) -> SetReport:
    """The report of ``rec score``: the costs come from the cassette beside each ACTUAL
    eval set when there is one (tokens and recorded latency), else from the token usage
    its invocations carry (no latency)."""
    costs: dict[str, Usage] = {}
    for path in actual:
        evalset = load_evalset(path)
        beside = cassette_beside(Path(path))
        found = (
            costs_by_case(load_cassette(beside).exchanges, evalset.eval_cases)
            if beside.is_file()
            else _events_cost(evalset)
        )
        for eval_id, usage in found.items():
            costs[eval_id] = costs.get(eval_id, Usage()).add(usage)
    return SetReport(path=str(expected), source="score", result=result, costs=costs)
