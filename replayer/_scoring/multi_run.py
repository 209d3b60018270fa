"""A case judged on all of its runs by the eval config's ``multi_run_config``, with ADK's numbers.

Each run is scored on its own first, as a single run is. The runs' results are then handed
to google-adk's own aggregator (``summarize_eval_case_results``, what ``adk eval`` and ADK's
local eval service call) as ADK ``EvalCaseResult`` objects, so every cross-run verdict, score
and pass@k is ADK's by construction. A run that could not finish is a run without metric
results, which ADK counts as crashed. The case's result in rec's report is its first failing
run (else its first) carrying the cross-run status, each metric's result over all of the
runs, and a line saying how the runs were judged; the summaries go to the result file's
``multi_run_case_summaries``, as ADK writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cassettes._errors import InputError
from cassettes._eval_config import EvalConfig, MultiRunConfig
from cassettes._eval_result import (
    EvalCaseResult,
    EvalStatus,
    MethodResult,
    MultiRunCaseSummary,
)

__all__ = ["check_multi_run", "judge_runs"]

_REC_ONLY = {
    "failure_reasons",
    "duration_seconds",
    "left_recording",
    "usage",
    "takes",
    "replayed_reads",
    "multi_run",
}
"""rec's own fields of a case result, which ADK's model does not have."""

_FIX_ADK = "Install google-adk 2.15 or later (pip install 'google-adk[eval]>=2.15')"


def _aggregator() -> Any:
    """ADK's aggregator module, or an InputError when the installed google-adk has none."""
    from replayer._compat import adk_multi_run_aggregator

    aggregator = adk_multi_run_aggregator()
    if aggregator is None:
        raise InputError(
            "multi_run_config needs google-adk's multi-run aggregator, which the installed "
            "google-adk does not have",
            path="multi_run_config",
            fix=_FIX_ADK + ", or remove multi_run_config from the eval config",
        )
    return aggregator


def _adk_config(config: MultiRunConfig) -> Any:
    from google.adk.evaluation.eval_config import MultiRunConfig as AdkMultiRunConfig

    return AdkMultiRunConfig.model_validate(config.model_dump(exclude_unset=True))


def check_multi_run(config: EvalConfig, num_runs: int, *, budget_takes: bool) -> None:
    """The checks before any run of a config with ``multi_run_config``: ADK's aggregator is
    installed, no pass@k or pass^k criterion draws more runs than each case gets (ADK's
    check), and no budget's ``takes`` rule would be left unused.

    Raises:
        InputError: a check failed (names the config file, the rule and the fix).
    """
    multi = config.multi_run_config
    assert multi is not None
    source = str(config.source or "eval config")
    if budget_takes:
        raise InputError(
            "the budget's takes rule and the eval config's multi_run_config both judge a "
            "case on its runs",
            path=source,
            where="multi_run_config",
            fix="Keep one: remove takes from the budget, or multi_run_config from the config",
        )
    aggregator = _aggregator()
    try:
        aggregator.check_pass_k_criteria_against_num_runs(_adk_config(multi), num_runs)
    except ValueError as exc:
        place, _, problem = str(exc).partition(": ")
        raise InputError(
            problem.split(". ")[0].rstrip("."),
            path=source,
            where=place,
            fix="Lower k, or raise multi_run_config.num_runs or --num-runs",
        ) from None


def _adk_result(result: EvalCaseResult, run: int) -> Any:
    from google.adk.evaluation.eval_result import EvalCaseResult as AdkEvalCaseResult

    data = result.model_dump(mode="json", exclude=_REC_ONLY, exclude_none=True)
    data["repetition_index"] = run
    return AdkEvalCaseResult.model_validate(data)


def _method_line(method: MethodResult) -> str:
    value = "-" if method.value is None else f"{method.value:.2f}"
    threshold = "" if method.threshold is None else f" >= {method.threshold:g}"
    return f"{method.name} {value}{threshold} {method.status.name.lower()}"


def _verdict_line(summary: MultiRunCaseSummary, *, failed_only: bool = False) -> str:
    """``3 runs: 2 passed, 1 failed; pass_rate 0.67 >= 0.5 passed; pass@2 1.00 informational``
    (with ``failed_only``, the rules that failed alone)."""
    runs = "run" if summary.num_runs == 1 else "runs"
    counts = (
        f"{summary.num_runs} {runs}: {summary.passed_runs} passed, {summary.failed_runs} failed"
    )
    if summary.crashed_runs:
        counts += f", {summary.crashed_runs} crashed (at most {summary.max_crashed_runs} may)"
    named = [(f"{metric} by ", m) for metric, m in summary.metric_methods.items()]
    named += [("", method) for method in summary.cross_run_results]
    methods = [
        prefix + _method_line(method)
        for prefix, method in named
        if not failed_only or method.status is EvalStatus.FAILED
    ]
    return "; ".join([counts, *methods])


def _case_result(runs: Sequence[EvalCaseResult], summary: MultiRunCaseSummary) -> EvalCaseResult:
    """The case's result: its first failing run (else its first), with the cross-run status
    and each metric's result judged on all of the runs (ADK's aggregated results)."""
    index = next((i for i, r in enumerate(runs) if r.final_eval_status is EvalStatus.FAILED), 0)
    shown = runs[index]
    reasons: list[str] = []
    if summary.final_eval_status is EvalStatus.FAILED:
        reasons.append(
            "failed on its runs (multi_run_config): " + _verdict_line(summary, failed_only=True)
        )
        label = f"run {index + 1} of {len(runs)}"
        reasons += [f"{label}: {reason}" for reason in shown.failure_reasons]
    return shown.model_copy(
        update={
            "final_eval_status": summary.final_eval_status,
            "overall_eval_metric_results": list(summary.overall_eval_metric_results),
            "failure_reasons": reasons,
            "multi_run": _verdict_line(summary),
        }
    )


def judge_runs(
    runs: dict[str, list[EvalCaseResult]], config: MultiRunConfig
) -> tuple[list[EvalCaseResult], list[MultiRunCaseSummary]]:
    """Each case judged on its runs (in run order) by ADK's aggregator.

    Args:
        runs: per eval id, the result of each run of the case, in run order.
        config: the eval config's ``multi_run_config``.

    Returns:
        One result per case (in the order of ``runs``) and ADK's summaries.
    """
    aggregator = _aggregator()
    adk_results = [
        _adk_result(result, index) for each in runs.values() for index, result in enumerate(each)
    ]
    adk_summaries = aggregator.summarize_eval_case_results(
        adk_results, multi_run_config=_adk_config(config)
    )
    summaries = {
        s.eval_id: MultiRunCaseSummary.model_validate(s.model_dump(mode="json"))
        for s in adk_summaries
    }
    results = [_case_result(each, summaries[eval_id]) for eval_id, each in runs.items()]
    return results, [summaries[eval_id] for eval_id in runs]
