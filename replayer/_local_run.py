"""A replay run in this process: run every chosen case of each eval set, then score.

For each eval set (resolved by :func:`replayer._replay_target.resolve_targets`): start the
model source (:mod:`replayer._model_backend`), run every case (ADK:
:func:`replayer._adk_runner.run_adk_case`; programs:
:func:`replayer._program_runner.run_program_case`) ``num_runs`` times, ``parallel`` at a
time, and score the actual invocations against the eval set with the eval config (the
``test_config.json`` beside it, ``--config``, or ADK's defaults). A case whose run could
not finish fails with its reason; the others are scored as ADK scores them. Each worker
process of ``--workers N`` runs its share of the cases here (:mod:`replayer._worker_pool`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassettes._cassette import Cassette, Exchange
from cassettes._errors import InputError
from cassettes._eval_config import (
    DEFAULT_EVAL_CONFIG,
    DEFAULT_LIVE_TIMEOUT_SECONDS,
    EvalConfig,
    TakesRule,
    find_eval_config,
    load_eval_config,
)
from cassettes._eval_result import EvalCaseResult, EvalSetResult, MultiRunCaseSummary
from cassettes._evalset import EvalCase, EvalSet, Invocation
from cassettes._record_mode import RecordMode
from recorder._traffic import mcp_toolsets
from replayer._agent_loading import LoadedAgent, is_program_spec, load_agent_async
from replayer._case_failure import CaseFailure
from replayer._otlp_export import CaseSpans, case_spans
from replayer._prices import PriceTable, load_prices
from replayer._recorded_clock import ClockPlan, frozen_clock
from replayer._recorded_path import Departure, RecordedPath
from replayer._replay_channel import ChannelMark
from replayer._replay_target import (
    EvalSetReplay,
    ReplayOptions,
    ReplayTarget,
    failed_result,
    resolve_targets,
    selected_cases,
)
from replayer._streaming_mode import (
    StreamingChoice,
    case_streaming,
    case_text,
    recorded_live,
    recorded_streaming,
)
from replayer._usage import case_usage

if TYPE_CHECKING:
    from replayer._mock_tools import ToolResponseBook
    from replayer._model_backend import ModelBackend
    from replayer._run_cassettes import RunCassettes
    from replayer._served_reads import CaseReads

# What runs the cases (google-adk, google-genai) is imported when a case runs in this
# process: the parent of ``--workers N`` only deals cases out and merges (and never
# imports ADK; tests/replayer/test_worker_pool.py pins it).

__all__ = ["replay_locally_async"]

log = logging.getLogger(__name__)


def _book(
    case: EvalCase, pool: Sequence[object], label: str, path: RecordedPath | None
) -> ToolResponseBook:
    from replayer._mock_tools import ToolResponseBook, recorded_tool_calls

    return ToolResponseBook(
        [recorded_tool_calls(inv) for inv in case.conversation or []],
        pool=pool,  # type: ignore[arg-type]
        label=label,
        path=path,
    )


class _Recorded:
    """The exchanges of a run's cassettes, for what a case was recorded in: only those
    that hold the case's first user turn are parsed when that settles it."""

    def __init__(self, cassettes: Sequence[Cassette]) -> None:
        self._cassettes = cassettes
        self._every: list[Exchange] | None = None

    def every(self) -> list[Exchange]:
        """All of them (each parsed), in order."""
        if self._every is None:
            self._every = [e for cassette in self._cassettes for e in cassette.exchanges]
        return self._every

    def streaming(self, case: EvalCase) -> StreamingChoice:
        """:func:`~replayer._streaming_mode.recorded_streaming` of ``case``."""
        from replayer._run_cassettes import mentioning

        text = case_text(case)
        if text:
            candidates = [
                e for cassette in self._cassettes for e in mentioning(cassette.exchanges, text)
            ]
            found = case_streaming(case, candidates)
            if found is not None:
                return found
        return recorded_streaming(case, self.every())


def _config_for(target: ReplayTarget, options: ReplayOptions) -> EvalConfig:
    if isinstance(options.config, EvalConfig):
        return options.config
    if options.config is not None:
        return load_eval_config(options.config)
    return find_eval_config(target.path)[0] if target.path is not None else DEFAULT_EVAL_CONFIG


async def _replay_one(
    agent: LoadedAgent,
    target: ReplayTarget,
    options: ReplayOptions,
    on_case: Callable[[int, int], None] | None,
    backend: ModelBackend,
    plugins: tuple[Any, ...] = (),
    recordings: RunCassettes | None = None,
) -> EvalSetReplay:
    """Replay one eval set: run each chosen case's takes, then judge and annotate them."""
    from replayer._run_cassettes import RunCassettes

    recordings = recordings or RunCassettes()
    config = _config_for(target, options)
    cases = selected_cases(target, options)
    pool = (
        recordings.tool_pool(target.recordings)
        if target.recordings and not options.live_tools and not agent.is_program
        else []
    )
    existing = recordings.existing(target.recordings)
    untraced, not_compared = _trace_gaps([p for p in target.recordings if p.exists()], existing)
    runs_wanted = config.num_runs(options.num_runs)
    takes = _takes_per_case(cases, options, existing, runs_wanted, suite=target.evalset.eval_cases)
    _check_multi_run(config, options, min(takes.values(), default=runs_wanted))
    runs = _SetRun(agent, target, options, backend, plugins, config, pool, existing, cases)
    runs.untraced = untraced
    total = sum(takes.values())
    jobs = (runs.run_takes(case, takes[case.eval_id], on_case, total) for case in cases)
    start = backend.channel.mark()
    await asyncio.gather(*jobs)
    traffic, _ = backend.channel.since(start)
    done = runs.done
    judged = await _judge(
        agent, target.evalset, cases, takes, done.outputs, config, options, target.label
    )
    _annotate(judged.results, done, target.label, load_prices(options.prices))
    return EvalSetReplay(
        path=target.path,
        result=_set_result(agent, target.evalset, judged.results, judged.summaries),
        recordings=target.recordings,
        failures=judged.failures,
        traffic=traffic,
        cases=cases,
        reads=done.reads,
        not_compared=not_compared,
    )


class _SetRun:
    """The runs of one eval set's cases: what every take shares, and what they gave."""

    def __init__(
        self,
        agent: LoadedAgent,
        target: ReplayTarget,
        options: ReplayOptions,
        backend: ModelBackend,
        plugins: tuple[Any, ...],
        config: EvalConfig,
        pool: Sequence[object],
        existing: Sequence[Cassette],
        cases: Sequence[EvalCase],
    ) -> None:
        self.agent, self.target, self.options = agent, target, options
        self.backend, self.plugins, self.config, self.pool = backend, plugins, config, pool
        self.untraced: dict[str, str] = {}
        """Per case the trace it was imported from cannot replay, why (it fails with it)."""
        self.recorded = _Recorded(existing)
        self.live_sessions = [
            s for cassette in existing if cassette.live is not None for s in cassette.live.sessions
        ]
        self.done = _Runs()
        # Each case's clock is its own (a context variable), so cases on the recording's
        # clock run together; a plain program's cases take turns.
        self.frozen = _freezes(options, backend)
        self.one = agent.is_program or options.mode is RecordMode.AUTO
        self.ends = _recorded_ends(cases)
        self.names = tuple(p.name for p in target.recordings)  # the recordings a case's spans name
        # What each turn was answered with is read between the channel's marks: exact when
        # one case runs at a time (a program's cases always do).
        self.attributed = self.one or options.parallel <= 1
        # Auto mode follows one case at a time along its recording (replayer._recorded_path).
        self.limit = asyncio.Semaphore(1 if self.one else max(1, options.parallel))

    async def run_takes(
        self,
        case: EvalCase,
        takes: int,
        on_case: Callable[[int, int], None] | None,
        total: int,
    ) -> None:
        """Run the case's takes one after another: the n-th take gets the n-th recorded
        answers (replayer._takes)."""
        async with self.limit:
            for run in range(takes):
                await self.run_take(case, run)
                if on_case is not None:
                    on_case(self.done.count, total)

    async def run_take(self, case: EvalCase, run: int) -> None:
        """Run take ``run`` of ``case`` on its clock, reads and spans, and note what it gave."""
        options, backend, config = self.options, self.backend, self.config
        streaming = options.streaming or self.recorded.streaming(case)
        live = _live_settings(self.agent, case, options, config, self.recorded, self.live_sessions)
        marks: list[ChannelMark] = []
        # Read outside the case's clock, which may be frozen at the recording's time.
        began = time.perf_counter()
        served = _case_reads(case, backend, options)
        spans = CaseSpans(self.target.evalset.eval_set_id, case.eval_id, self.names)
        with (
            _case_clock(case, backend, self.frozen, until=self.ends.get(case.eval_id)) as on_turn,
            _on_recording(backend, on_turn) as (followed, on_turn),
            case_spans(spans),
            _serving_reads(served) as reads,
        ):
            output = await _run_case(
                self.agent,
                case,
                run,
                backend,
                options,
                self.pool,
                self.target.label,
                self.plugins,
                streaming=streaming,
                live=live,
                on_turn=_marking(backend, marks, on_turn),
                followed=followed,
                user_simulator_config=config.user_simulator_config,
                live_timeout_seconds=config.live_timeout_seconds(),
                reads=reads,
                untraced=self.untraced.get(case.eval_id),
            )
        if reads is not None and (line := reads.summary()) is not None:
            self.done.reads[case.eval_id] = line
        self.done.add(case.eval_id, run, output, time.perf_counter() - began, followed)
        if self.attributed and marks:
            self.done.turns[(case.eval_id, run)] = _split_turns(backend, marks)


def _annotate(results: list[EvalCaseResult], done: _Runs, path: str, prices: PriceTable) -> None:
    """Add what the runs measured to each case's result: its file, time, departure, usage."""
    for result in results:
        result.eval_set_file = path
        result.duration_seconds = done.seconds.get(result.eval_id)
        departure = done.departures.get(result.eval_id)
        result.left_recording = departure.describe() if departure is not None else None
        result.replayed_reads = done.reads.get(result.eval_id)
        output = done.outputs.get((result.eval_id, 0))
        if (result.eval_id, 0) in done.turns and not isinstance(output, CaseFailure):
            result.usage = case_usage(done.turns[(result.eval_id, 0)], output or [], prices)


def _live_settings(
    agent: LoadedAgent,
    case: EvalCase,
    options: ReplayOptions,
    config: EvalConfig,
    recorded: _Recorded,
    live_sessions: Sequence[Any],
) -> dict[str, Any] | None:
    """The Live settings ``case`` runs with (it was recorded live, or the config says to run
    live), or None: not a Live case."""
    live = None
    if options.streaming is None and not agent.is_program:
        if live_sessions:  # else no case was recorded live: no exchange is read
            live = recorded_live(case, recorded.every(), live_sessions)
        if live is None and config.live_model_config is not None:
            live = {}  # the config says run live (as `adk eval` does): no recorded settings
    return live


@dataclass
class _Runs:
    """What an eval set's case runs gave, as they finish."""

    outputs: dict[tuple[str, int], list[Invocation] | CaseFailure] = field(default_factory=dict)
    """Per (eval id, run): the actual invocations, or why the run could not finish."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Per case, its runs' wall time (the JUnit ``time=``)."""
    departures: dict[str, Departure] = field(default_factory=dict)
    """Auto mode: per case, where its first run that left its recording left it."""
    reads: dict[str, str] = field(default_factory=dict)
    """Per case, the recorded reads it was served (one line for the report)."""
    turns: dict[tuple[str, int], list[list[Exchange]]] = field(default_factory=dict)
    """Per (eval id, take): the exchanges that answered each turn (when attributed)."""
    count: int = 0

    def add(
        self,
        eval_id: str,
        run: int,
        output: list[Invocation] | CaseFailure,
        seconds: float,
        followed: RecordedPath | None,
    ) -> None:
        self.outputs[(eval_id, run)] = output
        self.seconds[eval_id] = self.seconds.get(eval_id, 0.0) + seconds
        if followed is not None and followed.departure is not None:
            self.departures.setdefault(eval_id, followed.departure)
        self.count += 1


def _marking(
    backend: ModelBackend, marks: list[ChannelMark], on_turn: Callable[[int], None] | None
) -> Callable[[int], None]:
    """``on_turn``, also marking the channel where each turn starts (its exchanges are
    read between the marks: :func:`_split_turns`)."""

    def turn_started(index: int) -> None:
        marks.append(backend.channel.mark())
        if on_turn is not None:
            on_turn(index)

    return turn_started


def _set_result(
    agent: LoadedAgent,
    evalset: EvalSet,
    results: list[EvalCaseResult],
    summaries: list[MultiRunCaseSummary] | None,
) -> EvalSetResult:
    """The eval set's result, named as ADK names it (app, eval set, time)."""
    from replayer._score import set_result_names

    names = set_result_names(agent.app_name, evalset.eval_set_id)
    return EvalSetResult(eval_case_results=results, multi_run_case_summaries=summaries, **names)


def _takes_per_case(
    cases: Sequence[EvalCase],
    options: ReplayOptions,
    existing: Sequence[Cassette],
    runs: int,
    *,
    suite: Sequence[EvalCase],
) -> dict[str, int]:
    """How many takes of each case run: ``runs`` (``--num-runs``, else the config's
    ``multi_run_config.num_runs``) when the model answers live, and at least every
    recorded take when answers come from recordings."""
    wanted = {case.eval_id: runs for case in cases}
    if options.mode not in (RecordMode.REPLAY, RecordMode.AUTO) or not existing:
        return wanted
    from replayer._run_cassettes import mentioning
    from replayer._takes import recorded_takes

    texts = {case_text(case) for case in cases} - {""}
    found = {
        text: [e for cassette in existing for e in mentioning(cassette.exchanges, text)]
        for text in texts
    }
    counted = recorded_takes(cases, found, suite=suite)
    return {eval_id: max(runs, counted[eval_id]) for eval_id, runs in wanted.items()}


def _check_multi_run(config: EvalConfig, options: ReplayOptions, fewest_runs: int) -> None:
    """Before any case runs, the checks of a config with ``multi_run_config``."""
    if config.multi_run_config is not None:
        from replayer._scoring.multi_run import check_multi_run

        check_multi_run(config, fewest_runs, budget_takes=options.takes_rule is not None)


def _split_turns(backend: ModelBackend, marks: Sequence[ChannelMark]) -> list[list[Exchange]]:
    """The exchanges answered in each turn, the turns starting at ``marks``."""
    served, _ = backend.channel.since(marks[0])
    bounds = [m.exchanges - marks[0].exchanges for m in marks] + [len(served)]
    return [list(served[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


async def _judge(
    agent: LoadedAgent,
    evalset: EvalSet,
    cases: Sequence[EvalCase],
    takes: dict[str, int],
    outputs: dict[tuple[str, int], list[Invocation] | CaseFailure],
    config: EvalConfig,
    options: ReplayOptions,
    path: str,
) -> _Judged:
    """Each case's result, in suite order: each take scored on its own, a case with several
    takes judged over them (:func:`replayer._takes.judge_takes`), or every case judged on
    its runs by ADK's aggregator when the config has ``multi_run_config``
    (:func:`replayer._scoring.multi_run.judge_runs`)."""
    from replayer._score import score_evalset_async

    failures: list[CaseFailure] = []
    per_take: dict[tuple[str, int], EvalCaseResult] = {}
    for run in range(max(takes.values(), default=0)):
        scorable: list[EvalCase] = []
        actual = EvalSet(eval_set_id=evalset.eval_set_id, eval_cases=[])
        for case in cases:
            if run >= takes[case.eval_id]:
                continue
            output = outputs[(case.eval_id, run)]
            if isinstance(output, CaseFailure):
                failures.append(output)
                label = f" (take {run + 1})" if takes[case.eval_id] > 1 else ""
                # One reason; a miss keeps its diff on the lines below its first.
                reason = f"could not run{label}: {output.reason}"
                per_take[(case.eval_id, run)] = failed_result(evalset, case, [reason])
                continue
            scorable.append(case)
            actual.eval_cases.append(case.model_copy(update={"conversation": output}))
        if not scorable:
            continue
        scored = await score_evalset_async(
            evalset.model_copy(update={"eval_cases": scorable}),
            [actual],
            config,
            allow_not_evaluated=options.allow_not_evaluated,
            app_name=agent.app_name,
            efficiency=True,
        )
        for result in scored.eval_case_results:
            per_take[(result.eval_id, run)] = result
    by_case = {
        case.eval_id: [per_take[(case.eval_id, run)] for run in range(takes[case.eval_id])]
        for case in cases
    }
    return _over_runs(by_case, failures, config, options)


def _over_runs(
    by_case: dict[str, list[EvalCaseResult]],
    failures: list[CaseFailure],
    config: EvalConfig,
    options: ReplayOptions,
) -> _Judged:
    """Each case judged on its takes: by ADK's aggregator under ``multi_run_config``, else
    by the takes rule (a case with one take keeps its result)."""
    if config.multi_run_config is not None:
        from replayer._scoring.multi_run import judge_runs

        results, summaries = judge_runs(by_case, config.multi_run_config)
        return _Judged(results, failures, summaries)
    from replayer._takes import judge_takes

    rule = options.takes_rule or config.takes or TakesRule()
    results = [each[0] if len(each) == 1 else judge_takes(each, rule) for each in by_case.values()]
    return _Judged(results, failures, None)


@dataclass
class _Judged:
    """What :func:`_judge` gives: each case's result, the runs that could not finish, and
    the cross-run summaries (``multi_run_config`` only)."""

    results: list[EvalCaseResult]
    failures: list[CaseFailure]
    summaries: list[MultiRunCaseSummary] | None


async def _run_case(
    agent: LoadedAgent,
    case: EvalCase,
    run: int,
    backend: ModelBackend,
    options: ReplayOptions,
    pool: Sequence[object],
    label: str,
    plugins: tuple[Any, ...] = (),
    *,
    streaming: StreamingChoice = "none",
    live: dict[str, Any] | None = None,
    on_turn: Callable[[int], None] | None = None,
    followed: RecordedPath | None = None,
    user_simulator_config: dict[str, Any] | None = None,
    live_timeout_seconds: float = DEFAULT_LIVE_TIMEOUT_SECONDS,
    reads: CaseReads | None = None,
    untraced: str | None = None,
) -> list[Invocation] | CaseFailure:
    reason = untraced or _unrunnable(agent, case)
    if reason is not None:
        return CaseFailure(case.eval_id, reason)
    if agent.is_program:
        from replayer._program_runner import run_program_case

        running = run_program_case(agent, case, backend, run=run, on_turn=on_turn, reads=reads)
        return await _closed(case, running)
    from replayer._adk_runner import AdkRunSettings, run_adk_case
    from replayer._compat import adk_retry_plugin

    extra: tuple[Any, ...] = plugins
    if options.mode is RecordMode.LIVE:
        extra += (adk_retry_plugin(),)
    settings = AdkRunSettings(
        extra_plugins=extra,
        find_miss=backend.channel.miss_behind,
        streaming=streaming == "sse",
        live=live,
        on_turn=on_turn,
        user_simulator_config=user_simulator_config,
        live_timeout_seconds=live_timeout_seconds,
        reads=reads,
    )
    label = f"{label} case {case.eval_id}"
    book = None if options.live_tools else _book(case, pool, label, followed)
    result = await _closed(case, run_adk_case(agent, case, run=run, book=book, settings=settings))
    if isinstance(result, CaseFailure):
        result.reason = _with_app_mismatch(agent, case, result.reason)
    return result


async def _closed(
    case: EvalCase, running: Awaitable[list[Invocation] | CaseFailure]
) -> list[Invocation] | CaseFailure:
    """What ``running`` (a case's run) gave, or the first tool request replay refused in it.

    A refused request raises the client's connection error, which the agent may swallow
    (ADK turns a failed A2A call into an error event; a tool may fall back to a default):
    the case fails with it all the same, as its first cause — what followed (a model
    request off the recording) is its echo.
    """
    from replayer._tool_replay import noting_refusals

    with noting_refusals() as refused:
        output = await running
    if refused and (not isinstance(output, CaseFailure) or refused[0] not in output.reason):
        return CaseFailure(case.eval_id, refused[0])
    return output


_UNKNOWN_APP = "rec"
"""The ``app_name`` a recording writes when it does not know the app (any agent may run it)."""


def _with_app_mismatch(agent: LoadedAgent, case: EvalCase, reason: str) -> str:
    """``reason``, led by the app mismatch when the case was recorded for another app.

    ADK runs a case whatever its ``session_input.app_name``; when it then fails (the
    agent's instruction asks for state the other app's session never had: ADK's
    "Context variable not found"), the mismatch is the cause to name first.
    """
    recorded = case.session_input.app_name if case.session_input else None
    if not recorded or recorded in (agent.app_name, _UNKNOWN_APP):
        return reason
    return (
        f"the case was recorded for app {recorded!r}, not for the agent being replayed "
        f"({agent.app_name!r}): replay it against {recorded!r}, or set its "
        f"session_input.app_name to {agent.app_name!r} if it is the same agent. "
        f"The run failed at {reason}"
    )


def _trace_gaps(
    paths: Sequence[Path], cassettes: Sequence[Cassette]
) -> tuple[dict[str, str], dict[Path, tuple[str, list[str]]]]:
    """Of the cassettes rebuilt from a trace: per eval case the trace cannot replay, why
    (the case fails with it); per cassette, its trace's shape and the request parts the
    trace does not hold (the report says they were not compared)."""
    reasons: dict[str, str] = {}
    gaps: dict[Path, tuple[str, list[str]]] = {}
    for path, cassette in zip(paths, cassettes, strict=True):
        trace = cassette.trace
        if trace is None:
            continue
        for eval_id, why in trace.unreplayable.items():
            reasons[eval_id] = f"the trace it was imported from cannot replay it: {why}"
        if trace.not_compared:
            gaps[path] = (trace.source, list(trace.not_compared))
    return reasons, gaps


def _unrunnable(agent: LoadedAgent, case: EvalCase) -> str | None:
    """Why rec cannot run ``case`` against ``agent`` (the case then fails), or None."""
    if case.conversation is None and agent.is_program:
        return (
            "the case has a conversation_scenario (ADK's user simulator), which rec runs "
            "only for ADK agents, not for a plain program: give it a recorded conversation, "
            "or replay an ADK agent"
        )
    return None


def _freezes(options: ReplayOptions, backend: ModelBackend) -> bool:
    """Whether cases run on the recording's clock: asked, and answered from recordings."""
    replaying = options.mode in (RecordMode.REPLAY, RecordMode.AUTO)
    return options.freeze_time and replaying and backend.replaying is not None


def _recorded_ends(cases: Sequence[EvalCase]) -> dict[str, float]:
    """Per case, the recorded start of the case recorded after it (none for the last): the
    end of the span whose answers move its clock (see ``ClockPlan.for_case``)."""
    starts = sorted(
        (start, case.eval_id)
        for case in cases
        if (start := ClockPlan.for_case(case, []).start) is not None
    )
    return {
        eval_id: following for (_, eval_id), (following, _) in zip(starts, starts[1:], strict=False)
    }


def _note_unused(replays: Sequence[EvalSetReplay], backend: ModelBackend) -> None:
    """Give each eval set's replay the exchanges of its recordings that nothing played."""
    unused = _unused_ids(backend)
    for done in replays:
        done.unused_ids = {c: unused.get(c.resolve(), frozenset()) for c in done.recordings}
        done.unused = {c: len(ids) for c, ids in done.unused_ids.items()}


def _unused_ids(backend: ModelBackend) -> dict[Path, frozenset[int]]:
    """Per cassette (its resolved path), the ids of the exchanges nothing played."""
    if backend.replaying is None:
        return {}
    found: dict[Path, frozenset[int]] = {}
    for path, ids in backend.replaying.unused_ids().items():
        resolved = path.resolve()
        found[resolved] = found.get(resolved, frozenset()) | ids
    return found


@contextlib.contextmanager
def _on_recording(
    backend: ModelBackend, on_turn: Callable[[int], None] | None
) -> Iterator[tuple[RecordedPath | None, Callable[[int], None] | None]]:
    """In auto mode, the case run's position on its recording (:mod:`replayer._recorded_path`),
    followed by the model source for the block, and the turn hook that moves it (and calls
    ``on_turn``); in record mode one off the recording from the start (the tools run);
    else (None, ``on_turn``)."""
    if backend.mode is RecordMode.RECORD:
        yield RecordedPath(anew=True), on_turn
        return
    handler = backend.replaying
    if backend.mode is not RecordMode.AUTO or handler is None:
        yield None, on_turn
        return
    path = RecordedPath()

    def turn(index: int) -> None:
        path.start_turn(index)
        if on_turn is not None:
            on_turn(index)

    handler.path = path
    try:
        yield path, turn
    finally:
        handler.path = None


@contextlib.contextmanager
def _case_clock(
    case: EvalCase, backend: ModelBackend, frozen: bool, *, until: float | None
) -> Iterator[Callable[[int], None] | None]:
    """The recording's clock for one case (see :mod:`replayer._recorded_clock`): yields the
    turn hook that moves it, or None when the case runs on the real clock. Entered in the
    case's own task: the clock is that task's."""
    if not frozen or backend.replaying is None:
        yield None
        return
    cassettes = [loaded.cassette.exchanges for loaded in backend.replaying.cassettes]
    with frozen_clock(ClockPlan.for_case(case, cassettes, until=until)) as clock:
        if clock is None:
            yield None
            return
        with backend.channel.listening(clock.answered):
            yield clock.start_turn


def _case_reads(case: EvalCase, backend: ModelBackend, options: ReplayOptions) -> CaseReads | None:
    """The case's recorded reads of the clock, randomness and ids, to serve (None: none,
    not asked for, or not answered from recordings); in record mode, the case's reads to
    record."""
    replaying = options.mode in (RecordMode.REPLAY, RecordMode.AUTO)
    if not options.recorded_reads:
        return None
    if backend.reads_journal is not None:  # --mode record: recorded for the next replay
        from replayer._served_reads import recording_case_reads

        return recording_case_reads(case, backend.reads_journal)
    if not replaying:
        return None
    if backend.replaying is None:
        return None
    from replayer._served_reads import case_reads

    sections = [c.cassette.reads for c in backend.replaying.cassettes if c.cassette.reads]
    return case_reads(case, sections) if sections else None


@contextlib.contextmanager
def _serving_reads(reads: CaseReads | None) -> Iterator[CaseReads | None]:
    """Serve ``reads`` to the case's task (its zone applied, the reads patched in); yields
    None when there is nothing to serve, or freezegun keeps the clock."""
    if reads is None:
        yield None
        return
    from recorder._traffic import reads_patched
    from replayer._served_reads import recorded_zone

    with contextlib.ExitStack() as serving:
        try:
            serving.enter_context(reads_patched())
        except RuntimeError as exc:  # freezegun froze the clock: the caller's choice
            log.warning(
                "rec: case %s reads the caller's clock, not the recording's (%s)",
                reads.eval_id,
                exc,
            )
            yield None
            return
        serving.enter_context(recorded_zone(reads))
        yield reads


async def replay_locally_async(
    agent: str | LoadedAgent,
    evalsets: Sequence[str | Path | EvalSet],
    options: ReplayOptions,
    *,
    on_case: Callable[[int, int], None] | None = None,
    recordings: RunCassettes | None = None,
) -> list[EvalSetReplay]:
    """Replay and score eval sets in this process (``options.workers`` is not looked at).

    The steps: resolve the eval sets, start the model source, load the agent, wire its
    models and tools to the recordings, run every eval set, count what nothing played.

    Args and raises as :func:`replayer._replay_run.replay_evalsets`; ``recordings`` holds
    the cassettes the run loads (a new one by default).
    """
    from replayer._run_cassettes import RunCassettes

    try:
        targets = resolve_targets(evalsets, options)
        unresolved: InputError | None = None
    except InputError as exc:  # said after the agent loads: an agent that cannot load comes first
        targets, unresolved = [], exc
    # One backend (one proxy URL) for every eval set of the run: ADK caches each agent's
    # model client per event loop, so a second proxy on another port would never be used.
    every = list(dict.fromkeys(p for target in targets for p in target.recordings))
    if recordings is None:
        recordings = RunCassettes()  # each file read once, shared by everything below
    run = _Run(options, every, recordings, label=", ".join(map(str, every)) or "the recording")
    async with contextlib.AsyncExitStack() as stack:
        # The model source starts before the agent is imported: a module that creates its
        # genai.Client() at import gets the placeholder credentials and the proxy's URL.
        is_program = agent.is_program if isinstance(agent, LoadedAgent) else is_program_spec(agent)
        backend: ModelBackend | None = None
        if unresolved is None:
            try:
                backend = await run.start_backend(stack, is_program=is_program)
            except InputError as exc:  # said after the agent loads, as above
                unresolved = exc
        loaded = await run.load(agent)
        if unresolved is not None:
            raise unresolved
        assert backend is not None
        if options.otlp is not None:
            from replayer._otlp_export import exporting_spans

            stack.enter_context(exporting_spans(options.otlp, cassettes=every))
        plugins = run.wire(stack, loaded, backend)
        replays = [
            await _replay_one(loaded, target, options, on_case, backend, plugins, recordings)
            for target in targets
        ]
        _note_unused(replays, backend)
        return replays


class _Run:
    """The steps of :func:`replay_locally_async` that share its recordings and tool replay."""

    def __init__(
        self, options: ReplayOptions, every: list[Path], recordings: RunCassettes, *, label: str
    ) -> None:
        from replayer._tool_replay import ToolTrafficReplay

        self.options = options
        self.every = every
        self.recordings = recordings
        self.label = label
        self.tools: ToolTrafficReplay | None = None
        if options.mode is not RecordMode.RECORD:
            # Tools' own HTTP calls are answered from the recordings, whatever the mode:
            # programs' tools and --live-tools run for real, and replay never reaches the
            # network unless asked (an unrecorded tool call fails closed; auto mode sends
            # and records it, see ``start_backend``). Record mode records every one.
            self.tools = ToolTrafficReplay(
                recordings.tool_exchanges(every),
                pass_hosts=("googleapis.com",) if options.mode is RecordMode.LIVE else (),
                label=label,
                # MCP transport reaches the real servers only when asked; otherwise it
                # fails closed (an McpToolset replays without its transport).
                live_mcp=options.live_tools,
            )

    async def start_backend(
        self, stack: contextlib.AsyncExitStack, *, is_program: bool
    ) -> ModelBackend:
        """The run's model source, entered on ``stack``; the tools know its URL as rec's own."""
        from replayer._model_backend import model_backend_async, recording_tool_calls

        options = self.options
        backend = await stack.enter_async_context(
            model_backend_async(
                options.mode,
                self.every,
                rules=options.rules,
                upstream=options.upstream,
                observe=is_program,
                hints=options.hints,
                preloaded=self.recordings.loaded(self.every)
                if options.mode is RecordMode.REPLAY
                else None,
                # An ADK agent with mock tools calls the model only through ADK's
                # async path: its replay is served on this loop (no thread hop).
                same_loop=not is_program and not options.live_tools,
                serve_tools=False,  # served by the run (self.tools), with its own rules
            )
        )
        own = [backend.url] if backend.url else []
        if self.tools is not None:
            # A model call (while the module loads, or later) is not a tool's.
            self.tools.own = tuple(own)
        if backend.tool_traffic is not None:
            # Recorded beside the model's exchanges: in auto mode the tools' HTTP calls the
            # recording does not hold, in record mode every one (a toolset's fetch while the
            # agent loads too); left before the recording is.
            stack.enter_context(
                recording_tool_calls(backend.tool_traffic, own=own, tools=self.tools)
            )
        return backend

    async def load(self, agent: str | LoadedAgent) -> LoadedAgent:
        """The agent, imported with its tools' HTTP calls served from the recordings."""
        if isinstance(agent, LoadedAgent):
            return agent
        with self.tools.serving() if self.tools is not None else contextlib.nullcontext():
            # A toolset that fetches its spec while the agent module loads (an OpenAPI
            # spec over HTTP) gets the recorded one; an unrecorded fetch fails closed.
            return await load_agent_async(agent, agent_name=self.options.agent_name)

    def wire(
        self, stack: contextlib.AsyncExitStack, loaded: LoadedAgent, backend: ModelBackend
    ) -> tuple[Any, ...]:
        """Point the agent's models and tools at the recordings (on ``stack``); the plugins
        the runner needs for it."""
        from replayer._model_clients import shared_tls

        options = self.options
        if options.mode is not RecordMode.LIVE and not loaded.is_program:
            # The models talk plain HTTP to rec: one TLS context for the whole run instead
            # of three per case (replayer._model_clients).
            stack.enter_context(shared_tls(loaded.root_agent))
        if options.in_process:
            from replayer._in_process import models_in_process

            if loaded.is_program or backend.replaying is None:
                raise InputError(
                    "--in-process answers an ADK agent's models; a program's model calls go "
                    "through the proxy",
                    path="--in-process",
                    fix="Drop --in-process for this program",
                )
            stack.enter_context(models_in_process(loaded.root_agent, backend.replaying))
        plugins: tuple[Any, ...] = ()
        if not options.live_tools and not loaded.is_program:
            # Imported here: a plain google-genai program replays without google-adk.
            from replayer._mcp_replay import replaying_mcp

            # MCP toolsets list their recorded tools; no MCP server is started.
            mcp = stack.enter_context(
                replaying_mcp(
                    loaded.root_agent,
                    [c.mcp for c in self.recordings.existing(self.every)],
                    label=self.label,
                )
            )
            plugins = (mcp.guard,)
        if self.tools is not None:
            if not loaded.is_program:
                self.tools.mcp_urls = tuple(
                    str(t.connection_params.url)
                    for t in mcp_toolsets(loaded.root_agent)
                    if getattr(t.connection_params, "url", None)
                )
            stack.enter_context(self.tools.serving())
        return plugins
