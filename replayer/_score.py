"""Score an actual EvalSet (one or several runs) against an expected one -> ``EvalSetResult``.

Cases are matched by ``eval_id``. A case missing from a run, or a run with a different
number of invocations, fails that case with the reason (ADK raises and aborts the whole
eval). Per metric and case:

- one run: the evaluator's own mean and status, as ADK's eval history records them;
- several runs: every run's per-invocation scores averaged with ``statistics.mean`` and
  judged against the threshold, as ``AgentEvaluator`` does.

A case fails if any metric failed. Fail closed: a metric that could not run
(NOT_EVALUATED: a judge without a recording or credentials, an import error, a bad
criterion) fails the case with its reason, unless ``allow_not_evaluated`` is set, in which
case it counts for nothing, as in ADK. INFORMATIONAL metrics never gate: ADK's efficiency
metrics, which ``rec replay`` adds as ADK does (:mod:`replayer._scoring.efficiency`), report
a value and leave the case's status as the other metrics make it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar

from cassettes._errors import InputError
from cassettes._eval_enums import EvalStatus
from replayer._scoring.efficiency import InformationalMetric
from replayer._scoring.metrics import evaluate_metric, needs_event_loop
from replayer._scoring.outcome import MetricOutcome

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from cassettes._eval_config import EvalConfig
    from cassettes._eval_result import EvalCaseResult, EvalMetricResult, EvalSetResult
    from cassettes._evalset import EvalSet
    from replayer._scoring.plain_result import PlainEvalSetResult
    from replayer._scoring.views import (
        CaseResultView,
        EvalCaseView,
        EvalSetView,
        InvocationView,
        MetricResultView,
        MetricSpecView,
        RowView,
    )

    AnySpec = MetricSpecView | InformationalMetric
    """A configured metric, or one of ADK's informational ones."""

    _Set = TypeVar("_Set", covariant=True)
    _Result = TypeVar("_Result")

    class _Results(Protocol[_Set]):
        """How the scoring below builds its results: the models, or the plain classes."""

        def metric(
            self, spec: AnySpec, score: float | None, status: EvalStatus
        ) -> MetricResultView: ...

        def rescored(
            self, template: Any, score: float | None, status: EvalStatus
        ) -> MetricResultView: ...

        def row(
            self,
            actual: InvocationView,
            expected: InvocationView | None,
            metrics: list[MetricResultView],
        ) -> RowView: ...

        def case(self, **fields: Any) -> CaseResultView: ...

        def set(self, **fields: Any) -> _Set: ...

    class ScoreOptions(TypedDict, total=False):
        """The keyword arguments of :func:`score_evalset` that :func:`score_evalset_async`
        takes too."""

        allow_not_evaluated: bool
        app_name: str
        on_case: Callable[[int, int], None] | None

    class FileOptions(TypedDict, total=False):
        """The keyword arguments of :func:`score_files` and :func:`score_files_plain`."""

        config: str | Path | None
        allow_not_evaluated: bool
        on_case: Callable[[int, int], None] | None


__all__ = [
    "SetResultNames",
    "score_evalset",
    "score_evalset_async",
    "score_files",
    "score_files_plain",
    "set_result_names",
]


class _ModelResults:
    """``EvalSetResult`` and its parts, made with ``model_construct``: every field is
    already typed; validating 20,000 metric results per 10,000 invocations would cost more
    than the scoring itself, and would build the results' validator (every EvalSet model
    again) for nothing."""

    def __init__(self) -> None:
        from cassettes import _eval_result

        self.models = _eval_result

    def metric(self, spec: AnySpec, score: float | None, status: EvalStatus) -> EvalMetricResult:
        return self.models.EvalMetricResult.model_construct(
            metric_name=spec.name,
            threshold=spec.threshold,
            criterion=_criterion(spec),
            custom_function_path=spec.custom_function_path,
            score=score,
            eval_status=status,
            details={},
        )

    def rescored(self, template: Any, score: float | None, status: EvalStatus) -> Any:
        return template.model_copy(update={"score": score, "eval_status": status})

    def row(self, actual: Any, expected: Any, metrics: list[Any]) -> Any:
        return self.models.EvalMetricResultPerInvocation.model_construct(
            actual_invocation=actual, expected_invocation=expected, eval_metric_results=metrics
        )

    def case(self, **fields: Any) -> Any:
        return self.models.EvalCaseResult.model_construct(**fields)

    def set(self, **fields: Any) -> Any:
        return self.models.EvalSetResult.model_construct(**fields)


class _PlainResults:
    """The same results as plain classes (:mod:`replayer._scoring.plain_result`)."""

    def __init__(self) -> None:
        from replayer._scoring import plain_result

        self.classes = plain_result

    def metric(self, spec: AnySpec, score: float | None, status: EvalStatus) -> Any:
        return self.classes.PlainEvalMetricResult(
            spec.name, spec.threshold, _criterion(spec), None, score, status
        )

    def rescored(self, template: Any, score: float | None, status: EvalStatus) -> Any:
        return template.rescored(score, status)

    def row(self, actual: Any, expected: Any, metrics: list[Any]) -> Any:
        return self.classes.PlainEvalMetricResultPerInvocation(actual, expected, metrics)

    def case(self, **fields: Any) -> Any:
        return self.classes.PlainEvalCaseResult(**fields)

    def set(self, **fields: Any) -> Any:
        return self.classes.PlainEvalSetResult(**fields)


def _criterion(spec: AnySpec) -> dict[str, Any] | None:
    """The criterion as a result file holds it (None for an informational metric)."""
    return None if spec.criterion is None else spec.criterion.to_adk_dict()


class SetResultNames(TypedDict):
    """The fields that name an eval set result (keyword arguments for one)."""

    eval_set_result_id: str
    eval_set_result_name: str
    eval_set_id: str
    creation_timestamp: float


def set_result_names(app_name: str, eval_set_id: str) -> SetResultNames:
    """An eval set result's id, name and time, as ADK names them: ``{app}_{set}_{time}``,
    and the name with every ``/`` as ``_``."""
    timestamp = time.time()
    result_id = f"{app_name}_{eval_set_id}_{timestamp}"
    return {
        "eval_set_result_id": result_id,
        "eval_set_result_name": result_id.replace("/", "_"),
        "eval_set_id": eval_set_id,
        "creation_timestamp": timestamp,
    }


def _aggregate_runs(
    spec: AnySpec, outcomes: list[MetricOutcome]
) -> tuple[float | None, EvalStatus]:
    """``AgentEvaluator._process_metrics_and_get_failures`` for one metric."""
    if len(outcomes) == 1:
        return outcomes[0].overall_score, outcomes[0].overall_status
    import statistics  # several runs only (its import costs more than scoring one run)

    threshold = spec.threshold
    if threshold is None or all(o.overall_status is EvalStatus.INFORMATIONAL for o in outcomes):
        scores = [s for o in outcomes for s, _ in o.per_invocation if s is not None]
        return (statistics.mean(scores) if scores else None), EvalStatus.INFORMATIONAL
    per = [(s, st) for o in outcomes for s, st in o.per_invocation]
    scores = [s for s, _ in per if s is not None]
    if not scores:
        return None, EvalStatus.NOT_EVALUATED
    overall = statistics.mean(scores)
    directions = {
        (s > threshold) == (st is EvalStatus.PASSED)
        for s, st in per
        if s is not None and s != threshold and st in (EvalStatus.PASSED, EvalStatus.FAILED)
    }
    higher_is_better = directions.pop() if len(directions) == 1 else True
    passed = overall >= threshold if higher_is_better else overall <= threshold
    return overall, EvalStatus.PASSED if passed else EvalStatus.FAILED


async def _score_case(
    expected: EvalCaseView,
    runs: Sequence[EvalSetView],
    specs: Sequence[AnySpec],
    *,
    eval_set_id: str,
    allow_not_evaluated: bool,
    results: _Results[object],
) -> CaseResultView:
    reasons: list[str] = []
    rows: list[RowView] = []
    outcomes: dict[str, list[MetricOutcome]] = {spec.name: [] for spec in specs}
    want = expected.conversation
    for index, run in enumerate(runs):
        found = _actual_case(expected, run, f" (run {index + 1})" if len(runs) > 1 else "")
        if isinstance(found, str):
            reasons.append(found)
            continue
        got_case, got = found
        run_outcomes = [await _evaluate(spec, got, want, expected, got_case) for spec in specs]
        for spec, outcome in zip(specs, run_outcomes, strict=True):
            outcomes[spec.name].append(outcome)
        rows.extend(_rows(results, specs, got, want, run_outcomes))
    overall, statuses = _overall(specs, outcomes, results, reasons, allow_not_evaluated)
    if not reasons and all(status is EvalStatus.INFORMATIONAL for status in statuses):
        reasons.append(_NOTHING_JUDGES)
    return results.case(
        eval_set_file=eval_set_id,
        eval_set_id=eval_set_id,
        eval_id=expected.eval_id,
        final_eval_status=_final_status(statuses, failed=bool(reasons)),
        overall_eval_metric_results=overall,
        eval_metric_result_per_invocation=rows,
        user_id=expected.session_input.user_id if expected.session_input else None,
        failure_reasons=reasons,
    )


async def _evaluate(
    spec: AnySpec,
    got: Sequence[InvocationView],
    want: Sequence[InvocationView] | None,
    expected: EvalCaseView,
    got_case: EvalCaseView,
) -> MetricOutcome:
    """One metric over one run of a case."""
    if isinstance(spec, InformationalMetric):
        from replayer._scoring.efficiency import evaluate_informational

        return await evaluate_informational(spec, got)
    return await evaluate_metric(spec, got, want, expected_case=expected, actual_case=got_case)


def _actual_case(
    expected: EvalCaseView, run: EvalSetView, label: str
) -> tuple[EvalCaseView, Sequence[InvocationView]] | str:
    """The run's case of ``expected``'s id and its turns, or why it cannot be scored."""
    got_case = next((c for c in run.eval_cases if c.eval_id == expected.eval_id), None)
    if got_case is None or got_case.conversation is None:
        return f"no case with eval_id {expected.eval_id!r} in the actual eval set{label}"
    got, want = got_case.conversation, expected.conversation
    # A conversation_scenario case has no expected invocations: its metrics judge the
    # conversation the simulated user had (ADK passes expected_invocations=None).
    if want is not None and len(got) != len(want):
        return (
            f"{len(got)} invocations in the actual case{label}, {len(want)} expected: "
            "the conversations cannot be compared turn by turn"
        )
    return got_case, got


def _rows(
    results: _Results[object],
    specs: Sequence[AnySpec],
    got: Sequence[InvocationView],
    want: Sequence[InvocationView] | None,
    outcomes: Sequence[MetricOutcome],
) -> list[RowView]:
    """One run's invocations, each with every metric's score of it, in config order."""
    templates = [results.metric(spec, None, EvalStatus.NOT_EVALUATED) for spec in specs]
    rows = []
    for turn, actual in enumerate(got):
        metrics = [
            results.rescored(template, *outcome.per_invocation[turn])
            for template, outcome in zip(templates, outcomes, strict=True)
            if turn < len(outcome.per_invocation)
        ]
        rows.append(results.row(actual, None if want is None else want[turn], metrics))
    return rows


def _overall(
    specs: Sequence[AnySpec],
    outcomes: dict[str, list[MetricOutcome]],
    results: _Results[object],
    reasons: list[str],
    allow_not_evaluated: bool,
) -> tuple[list[MetricResultView], list[EvalStatus]]:
    """Each metric over every run, and its status; why a metric fails goes to ``reasons``."""
    overall: list[MetricResultView] = []
    statuses: list[EvalStatus] = []
    for spec in specs:
        if not outcomes[spec.name]:
            continue
        score, status = _aggregate_runs(spec, outcomes[spec.name])
        overall.append(results.metric(spec, score, status))
        if isinstance(spec, InformationalMetric):
            continue  # reports a value; decides nothing, as in ADK
        statuses.append(status)
        if status is EvalStatus.FAILED:
            shown = "no score" if score is None else f"{score:.4g}"
            reasons.append(f"{spec.name}: {shown} is below the threshold {spec.threshold:g}")
        elif status is EvalStatus.NOT_EVALUATED and not allow_not_evaluated:
            why = next((o.reason for o in outcomes[spec.name] if o.reason), None)
            reasons.append(
                f"{spec.name} was not evaluated: {why or 'no score was produced'} "
                "(pass --allow-not-evaluated to ignore this, as ADK does)"
            )
    return overall, statuses


_NOTHING_JUDGES = (
    "no metric judges this case: the eval config's criteria name none that can pass or "
    'fail (name one in test_config.json, e.g. "tool_trajectory_avg_score": 1.0); a case '
    "nothing judged is not a pass"
)


def _final_status(statuses: Sequence[EvalStatus], *, failed: bool) -> EvalStatus:
    """A case's status: failed if a metric failed or a reason was given, passed if a
    metric passed, else not evaluated."""
    if failed or EvalStatus.FAILED in statuses:
        return EvalStatus.FAILED
    return EvalStatus.PASSED if EvalStatus.PASSED in statuses else EvalStatus.NOT_EVALUATED


async def score_evalset_async(
    expected: EvalSet,
    actual: EvalSet | Sequence[EvalSet],
    config: EvalConfig | None = None,
    *,
    allow_not_evaluated: bool = False,
    app_name: str = "rec",
    on_case: Callable[[int, int], None] | None = None,
    efficiency: bool = False,
) -> EvalSetResult:
    """Async :func:`score_evalset` (for callers already inside an event loop).

    ``efficiency``: add the informational efficiency metrics the installed google-adk adds
    to every eval (:mod:`replayer._scoring.efficiency`), as ``rec replay`` does.
    """
    from cassettes._evalset import EvalSet

    runs = [actual] if isinstance(actual, EvalSet) else list(actual)
    specs: list[AnySpec] = list(_config(config).metrics())
    if efficiency:
        from replayer._scoring.efficiency import efficiency_metrics

        specs += efficiency_metrics([spec.name for spec in specs])
    return await _score_runs(
        expected,
        runs,
        specs,
        results=_ModelResults(),
        allow_not_evaluated=allow_not_evaluated,
        app_name=app_name,
        on_case=on_case,
    )


def _config(config: EvalConfig | None) -> EvalConfig:
    if config is not None:
        return config
    from cassettes._eval_config import DEFAULT_EVAL_CONFIG

    return DEFAULT_EVAL_CONFIG


async def _score_runs(
    expected: EvalSetView,
    runs: Sequence[EvalSetView],
    specs: Sequence[AnySpec],
    *,
    results: _Results[_Result],
    allow_not_evaluated: bool,
    app_name: str,
    on_case: Callable[[int, int], None] | None,
) -> _Result:
    cases: list[CaseResultView] = []
    for case in expected.eval_cases:
        result = await _score_case(
            case,
            runs,
            specs,
            eval_set_id=expected.eval_set_id,
            allow_not_evaluated=allow_not_evaluated,
            results=results,
        )
        cases.append(result)
        if on_case is not None:
            on_case(len(cases), len(expected.eval_cases))
    names = set_result_names(app_name, expected.eval_set_id)
    return results.set(eval_case_results=cases, **names)


def score_evalset(
    expected: EvalSet,
    actual: EvalSet | Sequence[EvalSet],
    config: EvalConfig | None = None,
    **options: Unpack[ScoreOptions],
) -> EvalSetResult:
    """Score ``actual`` (one run, or several runs of the same cases) against ``expected``.

    Args:
        expected: the reference EvalSet.
        actual: the EvalSet produced by a run, or a list of them (several runs).
        config: metrics and thresholds; ADK's defaults when omitted.
        allow_not_evaluated: count a metric that could not run as nothing (ADK's
            behaviour) instead of failing the case.
        app_name: used in ``eval_set_result_id`` as ADK does.
        on_case: called with (cases done, cases in total) after each case (progress).

    Returns:
        The ADK-shaped result; ``result.passed`` is the verdict.
    """
    config = _config(config)
    if not any(needs_event_loop(spec) for spec in config.metrics()):
        result: EvalSetResult = _run_to_completion(
            score_evalset_async(expected, actual, config, **options)
        )
        return result
    import asyncio  # only for metrics that await (importing it costs more than most scoring)

    done: list[EvalSetResult] = []

    async def run() -> None:
        # The result is handed over through a list, not as the task's result: asyncio
        # may repr a finished task, and the repr of a large EvalSetResult takes seconds.
        done.append(await score_evalset_async(expected, actual, config, **options))

    asyncio.run(run())
    return done[0]


def _run_to_completion(coroutine: Coroutine[object, object, Any]) -> Any:
    """The result of a coroutine that awaits nothing real (rec's own metrics), run without
    an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        return finished.value
    coroutine.close()
    raise RuntimeError("scoring awaited work although none of its metrics needs an event loop")


def score_files(
    expected: str | Path, actual: Sequence[str | Path], **options: Unpack[FileOptions]
) -> EvalSetResult:
    """Load the files and :func:`score_evalset` them (what ``rec score`` runs).

    Without ``config``, the ``test_config.json`` (or ``eval_config.json``) beside
    ``expected`` is used, else ADK's defaults. ``allow_not_evaluated`` and ``on_case``
    are :func:`score_evalset`'s.

    Raises:
        InputError: a file is missing or invalid.
    """
    from cassettes._eval_config import find_eval_config, load_eval_config
    from cassettes._evalset import load_evalset

    config = options.get("config")
    eval_config = load_eval_config(config) if config else find_eval_config(expected)[0]
    want = load_evalset(expected)
    runs = [load_evalset(path) for path in actual]
    score = functools.partial(
        score_evalset,
        want,
        config=eval_config,
        allow_not_evaluated=options.get("allow_not_evaluated", False),
        app_name=Path(expected).parent.name or "rec",
        on_case=options.get("on_case"),
    )
    if eval_config.multi_run_config is not None:
        return _judged_on_runs(eval_config, [score([run]) for run in runs])
    return score(runs)


def _judged_on_runs(config: EvalConfig, scored: list[EvalSetResult]) -> EvalSetResult:
    """``rec score`` under ``multi_run_config``: each ACTUAL file one run, each scored on its
    own, each case judged on its runs by ADK's aggregator.

    Raises:
        InputError: the config's ``num_runs`` differs from the files given, or a check of
            :func:`replayer._scoring.multi_run.check_multi_run` failed.
    """
    from replayer._scoring.multi_run import check_multi_run, judge_runs

    multi = config.multi_run_config
    assert multi is not None
    if multi.num_runs is not None and multi.num_runs != len(scored):
        raise InputError(
            f"multi_run_config.num_runs is {multi.num_runs}, but {len(scored)} run(s) were given",
            path=str(config.source or "eval config"),
            where="multi_run_config.num_runs",
            fix=f"Give {multi.num_runs} ACTUAL files (one per run), or change num_runs",
        )
    check_multi_run(config, len(scored), budget_takes=False)
    by_case: dict[str, list[EvalCaseResult]] = {}
    for result in scored:
        for case in result.eval_case_results:
            by_case.setdefault(case.eval_id, []).append(case)
    results, summaries = judge_runs(by_case, multi)
    return scored[0].model_copy(
        update={"eval_case_results": results, "multi_run_case_summaries": summaries}
    )


def score_files_plain(
    expected: str | Path, actual: Sequence[str | Path], **options: Unpack[FileOptions]
) -> PlainEvalSetResult | None:
    """:func:`score_files` without pydantic, for the console report: None unless the
    config and every eval set are certainly plain (:mod:`replayer._scoring.plain_config`,
    :mod:`replayer._scoring.plain_evalset`); then the caller runs :func:`score_files`,
    which names any problem. The scores are the same scorers' on the same values."""
    from replayer._scoring.plain_config import read_plain_config
    from replayer._scoring.plain_evalset import read_plain_evalset

    eval_config = read_plain_config(options.get("config"), expected)
    if eval_config is None:
        return None
    want = read_plain_evalset(expected)
    runs = [read_plain_evalset(path) for path in actual]
    if want is None or any(run is None for run in runs):
        return None
    specs = eval_config.metrics()
    assert not any(needs_event_loop(spec) for spec in specs)
    result: PlainEvalSetResult = _run_to_completion(
        _score_runs(
            want,
            [run for run in runs if run is not None],
            specs,
            results=_PlainResults(),
            allow_not_evaluated=options.get("allow_not_evaluated", False),
            app_name=Path(expected).parent.name or "rec",
            on_case=options.get("on_case"),
        )
    )
    return result
