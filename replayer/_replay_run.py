"""``rec replay``: run eval cases against an agent whose model (and tools) are replayed, then score.

For each eval set: find its recording (``<name>.cassette.json`` beside it, or
``--recording``), start the model source (:mod:`replayer._model_backend`), run every case
(ADK: :func:`replayer._adk_runner.run_adk_case`; programs:
:func:`replayer._program_runner.run_program_case`) ``num_runs`` times, ``parallel`` at a
time, and score the actual invocations against the eval set with the eval config (the
``test_config.json`` beside it, ``--config``, or ADK's defaults). A case whose run could
not finish fails with its reason; the others are scored as ADK scores them.

Example::

    results = replay_evalsets("agents/travel", ["agents/travel/travel.evalset.json"])
    assert all(r.result.passed for r in results)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassettes._cassette import Exchange
from cassettes._errors import InputError
from cassettes._eval_config import (
    DEFAULT_EVAL_CONFIG,
    EvalConfig,
    find_eval_config,
    load_eval_config,
)
from cassettes._eval_result import EvalCaseResult, EvalSetResult, EvalStatus
from cassettes._evalset import EvalCase, EvalSet, Invocation, load_evalset
from cassettes._matching import MatchRules
from cassettes._record_mode import RecordMode
from recorder._forwarding import DEFAULT_UPSTREAM
from recorder._mcp_capture import mcp_toolsets
from replayer._agent_loading import LoadedAgent, is_program_spec, load_agent_async
from replayer._case_failure import CaseFailure
from replayer._file_search import EVALSET_SUFFIXES, cassette_beside, expand_paths, find_cassettes
from replayer._recorded_clock import ClockPlan, frozen_clock
from replayer._sharding import Shard
from replayer._streaming_mode import STREAMING_CHOICES, StreamingChoice, recorded_streaming

if TYPE_CHECKING:
    from replayer._mock_tools import ToolResponseBook
    from replayer._model_backend import ModelBackend
    from replayer._run_cassettes import RunCassettes

# What runs the cases (google-adk, google-genai) is imported when a case runs in this
# process: the parent of ``--workers N`` only deals cases out and merges (and never
# imports ADK; tests/replayer/test_worker_pool.py pins it).

__all__ = [
    "EvalSetReplay",
    "ReplayOptions",
    "find_evalsets",
    "recording_for",
    "replay_evalsets",
    "replay_evalsets_async",
]


@dataclass(frozen=True)
class ReplayOptions:
    """How ``rec replay`` runs (one field per flag)."""

    mode: RecordMode = RecordMode.REPLAY
    """replay (cassettes, fail closed), record (write anew), auto (record what is missing)
    or live (the real model, nothing recorded). A mode name is accepted too."""
    recording: Path | None = None
    """A cassette or a folder of them (default: ``<name>.cassette.json`` beside the eval set;
    required for an in-memory eval set)."""
    live_tools: bool = False
    """Run the real tools instead of returning recorded responses. Tools' own httpx calls
    are served from the recording in every mode but record (``replayer._tool_replay``)."""
    config: Path | EvalConfig | None = None
    """Eval config file or object (default: ``test_config.json`` beside the eval set, else
    ADK's defaults)."""
    num_runs: int = 1
    cases: tuple[str, ...] = ()
    """Only these eval ids (all when empty)."""
    parallel: int = 1
    """Cases run concurrently (ADK agents; plain programs, and in replay and auto modes
    cases on the recording's clock (``freeze_time``), run one at a time)."""
    allow_not_evaluated: bool = False
    rules: MatchRules | None = None
    upstream: str = DEFAULT_UPSTREAM
    """Where record and auto modes forward requests."""
    agent_name: str | None = None
    """Evaluate this sub-agent instead of the root agent."""
    shard: Shard | None = None
    """Run only this shard's cases (``--shard I/N``, see :mod:`replayer._sharding`)."""
    streaming: StreamingChoice | None = None
    """Run ADK agents with streaming (``sse``) or without (``none``); None (the default):
    each case in the mode it was recorded in (:mod:`replayer._streaming_mode`)."""
    freeze_time: bool = True
    """In replay and auto modes, the process's clock reads the recording's time while each
    case runs (:mod:`replayer._recorded_clock`); the cases then run one at a time."""
    rerecord: str | None = None
    """How a miss says to record what is missing (default: rec's CLI flags)."""
    in_process: bool = False
    """Answer an ADK agent's google-genai models through an in-process transport
    (:mod:`replayer._in_process`) instead of a loopback round trip; replay mode only."""
    workers: int = 1
    """Worker processes to run the cases in (``--workers N``, see :mod:`replayer._worker_pool`);
    1 runs them in this process. Record and auto modes, and an already loaded agent, run in
    this process whatever is asked."""
    only: frozenset[tuple[str, str]] | None = None
    """Only these ``(eval_set_id, eval_id)`` cases (what one worker process is given)."""

    def __post_init__(self) -> None:
        # A frozen dataclass: set the parsed mode through object.__setattr__.
        object.__setattr__(self, "mode", RecordMode.parse(self.mode, source="mode"))
        if self.streaming is not None and self.streaming not in STREAMING_CHOICES:
            raise InputError(
                f"unknown streaming mode {self.streaming!r}",
                path="--streaming",
                fix=f"Use one of: {', '.join(STREAMING_CHOICES)} (or leave it out: as recorded)",
            )
        if self.in_process and self.mode is not RecordMode.REPLAY:
            raise InputError(
                f"--in-process replays from the recordings; {self.mode} mode reaches the model",
                path="--in-process",
                fix="Drop --in-process, or replay with --mode replay",
            )


@dataclass
class EvalSetReplay:
    """The outcome of replaying one eval set."""

    path: Path | None
    """The eval set file (None for an in-memory eval set)."""
    result: EvalSetResult
    recordings: list[Path] = field(default_factory=list)
    failures: list[CaseFailure] = field(default_factory=list)
    """Case runs that could not finish (misses, unrecorded tools, errors)."""
    traffic: list[Exchange] = field(default_factory=list)
    """The recorded exchanges this eval set's runs were answered with, in order (what the
    HTML report's per-case model calls, tokens and latency come from)."""
    cases: list[EvalCase] = field(default_factory=list)
    """The eval cases that ran (the HTML report tells their traffic apart by user text)."""
    unused: dict[Path, int] = field(default_factory=dict)
    """Per cassette of ``recordings``: its exchanges nothing asked for by the end of the
    whole run (cassettes can be shared by several eval sets)."""
    unused_ids: dict[Path, frozenset[int]] = field(default_factory=dict)
    """The ids of those exchanges (worker processes' runs are merged by them)."""


@dataclass(frozen=True)
class _Target:
    """One eval set to replay, resolved: its cases, recordings and config."""

    evalset: EvalSet
    path: Path | None
    recordings: list[Path]

    @property
    def label(self) -> str:
        """The file, or the eval set id of an in-memory eval set (messages, results)."""
        return str(self.path) if self.path is not None else self.evalset.eval_set_id


def find_evalsets(paths: Sequence[str | Path]) -> list[Path]:
    """Expand files and folders into eval set files (``*.evalset.json``, ``*.test.json``).

    Raises:
        InputError: a path does not exist, a folder holds no eval set, or a file is a cassette.
    """
    found = expand_paths(
        paths,
        inside=lambda folder: sorted(
            p for p in folder.rglob("*.json") if p.name.endswith(EVALSET_SUFFIXES)
        ),
        empty="no *.evalset.json or *.test.json in this folder",
        fix="Record one with `rec start`, or name the eval set file",
    )
    for path in found:
        if path.name.endswith(".cassette.json"):
            raise InputError(
                "this is a cassette (the recording), not an eval set",
                path=path,
                fix=f"Pass {path.name.removesuffix('.cassette.json')}.evalset.json or the "
                "folder that holds both (the cassette beside an eval set is found by its "
                "name), or pass the cassette with --recording",
            )
    return found


def recording_for(
    evalset_path: Path, recording: Path | None = None, *, create: bool = False
) -> list[Path]:
    """The cassettes that back an eval set: ``recording`` or ``<name>.cassette.json`` beside it.

    With ``create`` (record and auto modes) a cassette that does not exist yet is returned
    anyway, so the run starts it.
    """
    if recording is not None:
        if create and recording.suffix == ".json" and not recording.exists():
            return [recording]
        return find_cassettes([recording])
    beside = cassette_beside(evalset_path)
    return [beside] if beside.is_file() or create else []


def _book(case: EvalCase, pool: Sequence[object], label: str) -> ToolResponseBook:
    from replayer._mock_tools import ToolResponseBook, recorded_tool_calls

    return ToolResponseBook(
        [recorded_tool_calls(inv) for inv in case.conversation or []],
        pool=pool,  # type: ignore[arg-type]
        label=label,
    )


def _failed_result(evalset: EvalSet, case: EvalCase, reasons: list[str]) -> EvalCaseResult:
    return EvalCaseResult(
        eval_set_file=evalset.eval_set_id,
        eval_set_id=evalset.eval_set_id,
        eval_id=case.eval_id,
        final_eval_status=EvalStatus.FAILED,
        user_id=case.session_input.user_id if case.session_input else None,
        failure_reasons=reasons,
    )


def _config_for(target: _Target, options: ReplayOptions) -> EvalConfig:
    if isinstance(options.config, EvalConfig):
        return options.config
    if options.config is not None:
        return load_eval_config(options.config)
    return find_eval_config(target.path)[0] if target.path is not None else DEFAULT_EVAL_CONFIG


def _selected_cases(target: _Target, options: ReplayOptions) -> list[EvalCase]:
    """The cases of ``target`` this run replays (``--case``, ``--shard``, a worker's share).

    Raises:
        InputError: ``--case`` names no case of this eval set.
    """
    evalset = target.evalset
    cases = [c for c in evalset.eval_cases if c.conversation is not None]
    if options.cases:
        known = {c.eval_id for c in evalset.eval_cases}
        unknown = [c for c in options.cases if c not in known]
        if unknown and not any(c in known for c in options.cases):
            raise InputError(
                f"no case {unknown[0]!r} in this eval set",
                path=target.label,
                where="--case",
                fix=f"Use one of: {', '.join(sorted(known))}",
            )
        cases = [c for c in cases if c.eval_id in options.cases]
    if options.shard is not None:
        cases = [c for c in cases if options.shard.contains(evalset.eval_set_id, c.eval_id)]
    if options.only is not None:
        cases = [c for c in cases if (evalset.eval_set_id, c.eval_id) in options.only]
    return cases


async def _replay_one(
    agent: LoadedAgent,
    target: _Target,
    options: ReplayOptions,
    on_case: Callable[[int, int], None] | None,
    backend: ModelBackend,
    plugins: tuple[Any, ...] = (),
    recordings: RunCassettes | None = None,
) -> EvalSetReplay:
    from replayer._run_cassettes import RunCassettes
    from replayer._score import score_evalset_async

    evalset, path, cassettes = target.evalset, target.label, target.recordings
    config = _config_for(target, options)
    cases = _selected_cases(target, options)
    pool = (
        (recordings or RunCassettes()).tool_pool(cassettes)
        if cassettes and not options.live_tools and not agent.is_program
        else []
    )
    recorded = [
        e
        for cassette in (recordings or RunCassettes()).existing(cassettes)
        for e in cassette.exchanges
    ]
    jobs = [(case, run) for case in cases for run in range(options.num_runs)]
    outputs: dict[tuple[str, int], list[Invocation] | CaseFailure] = {}
    done = 0

    # One clock per process: under the recording's clock, cases take turns.
    frozen = _freezes(options, backend)
    one_at_a_time = agent.is_program or frozen
    limit = asyncio.Semaphore(1 if one_at_a_time else max(1, options.parallel))

    async def run_job(case: EvalCase, run: int) -> None:
        nonlocal done
        async with limit:
            streaming = options.streaming or recorded_streaming(case, recorded)
            with _case_clock(case, backend, frozen) as on_turn:
                outputs[(case.eval_id, run)] = await _run_case(
                    agent,
                    case,
                    run,
                    backend,
                    options,
                    pool,
                    path,
                    plugins,
                    streaming=streaming,
                    on_turn=on_turn,
                )
        done += 1
        if on_case is not None:
            on_case(done, len(jobs))

    start = backend.channel.mark()
    await asyncio.gather(*(run_job(case, run) for case, run in jobs))
    traffic, _ = backend.channel.since(start)

    failures: list[CaseFailure] = []
    broken: dict[str, list[str]] = {}
    runs = [
        EvalSet(eval_set_id=evalset.eval_set_id, eval_cases=[]) for _ in range(options.num_runs)
    ]
    for case, run in jobs:
        output = outputs[(case.eval_id, run)]
        if isinstance(output, CaseFailure):
            failures.append(output)
            label = f" (run {run + 1})" if options.num_runs > 1 else ""
            # One reason; a miss keeps its diff on the lines below its first.
            broken.setdefault(case.eval_id, []).append(f"could not run{label}: {output.reason}")
            continue
        runs[run].eval_cases.append(case.model_copy(update={"conversation": output}))
    scorable = [c for c in cases if c.eval_id not in broken]
    scored = await score_evalset_async(
        evalset.model_copy(update={"eval_cases": scorable}),
        runs,
        config,
        allow_not_evaluated=options.allow_not_evaluated,
        app_name=agent.app_name,
    )
    by_id = {r.eval_id: r for r in scored.eval_case_results}
    results = [
        by_id[c.eval_id] if c.eval_id in by_id else _failed_result(evalset, c, broken[c.eval_id])
        for c in cases
    ]
    for result in results:
        result.eval_set_file = path
    return EvalSetReplay(
        path=target.path,
        result=scored.model_copy(update={"eval_case_results": results}),
        recordings=cassettes,
        failures=failures,
        traffic=traffic,
        cases=cases,
    )


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
    on_turn: Callable[[int], None] | None = None,
) -> list[Invocation] | CaseFailure:
    if agent.is_program:
        from replayer._program_runner import run_program_case

        return await run_program_case(agent, case, backend, run=run, on_turn=on_turn)
    from replayer._adk_runner import run_adk_case
    from replayer._compat import adk_retry_plugin

    extra: tuple[Any, ...] = plugins
    if options.mode is RecordMode.LIVE:
        extra += (adk_retry_plugin(),)
    return await run_adk_case(
        agent,
        case,
        run=run,
        book=None if options.live_tools else _book(case, pool, f"{label} case {case.eval_id}"),
        extra_plugins=extra,
        find_miss=backend.channel.miss_behind,
        streaming=streaming == "sse",
        on_turn=on_turn,
    )


def _freezes(options: ReplayOptions, backend: ModelBackend) -> bool:
    """Whether cases run on the recording's clock: asked, and answered from recordings."""
    replaying = options.mode in (RecordMode.REPLAY, RecordMode.AUTO)
    return options.freeze_time and replaying and backend.replaying is not None


@contextlib.contextmanager
def _case_clock(
    case: EvalCase, backend: ModelBackend, frozen: bool
) -> Iterator[Callable[[int], None] | None]:
    """The recording's clock for one case (see :mod:`replayer._recorded_clock`): yields the
    turn hook that moves it, or None when the case runs on the real clock."""
    if not frozen or backend.replaying is None:
        yield None
        return
    cassettes = [loaded.cassette.exchanges for loaded in backend.replaying.cassettes]
    with frozen_clock(ClockPlan.for_case(case, cassettes)) as clock:
        if clock is None:
            yield None
            return
        with backend.channel.listening(clock.answered):
            yield clock.start_turn


def _targets(evalsets: Sequence[str | Path | EvalSet], options: ReplayOptions) -> list[_Target]:
    """Eval set files (folders expanded) and in-memory eval sets, with their recordings."""
    create = options.mode in (RecordMode.RECORD, RecordMode.AUTO)
    targets: list[_Target] = []
    for given in evalsets:
        if isinstance(given, EvalSet):
            if options.recording is None:
                raise InputError(
                    "an in-memory eval set has no file beside which to find its recording",
                    path=given.eval_set_id,
                    fix="Pass the cassette (or its folder) as ReplayOptions(recording=...)",
                )
            found = recording_for(Path(given.eval_set_id), options.recording, create=create)
            targets.append(_Target(given, None, found))
            continue
        for path in find_evalsets([given]):
            found = recording_for(path, options.recording, create=create)
            if options.mode is RecordMode.REPLAY and not found:
                raise InputError(
                    "no recording beside this eval set",
                    path=path,
                    fix=f"Expected {path.name.split('.')[0]}.cassette.json beside it; pass "
                    "--recording DIR, or run with --live",
                )
            targets.append(_Target(load_evalset(path), path, found))
    return targets


async def replay_evalsets_async(
    agent: str | LoadedAgent,
    evalsets: Sequence[str | Path | EvalSet],
    options: ReplayOptions = ReplayOptions(),
    *,
    on_case: Callable[[int, int], None] | None = None,
) -> list[EvalSetReplay]:
    """Async :func:`replay_evalsets`."""
    if options.num_runs < 1:
        raise InputError("must be at least 1", path="--num-runs", fix="Pass --num-runs 1 or more")
    if _in_workers(agent, options):
        from replayer._worker_pool import replay_in_workers

        return await asyncio.to_thread(replay_in_workers, agent, evalsets, options, on_case=on_case)
    from replayer._model_backend import model_backend_async
    from replayer._run_cassettes import RunCassettes
    from replayer._tool_replay import ToolTrafficReplay, tool_exchanges

    try:
        targets = _targets(evalsets, options)
        unresolved: InputError | None = None
    except InputError as exc:  # said after the agent loads: an agent that cannot load comes first
        targets, unresolved = [], exc
    # One backend (one proxy URL) for every eval set of the run: ADK caches each agent's
    # model client per event loop, so a second proxy on another port would never be used.
    every = list(dict.fromkeys(p for target in targets for p in target.recordings))
    label = ", ".join(str(p) for p in every) or "the recording"
    recordings = RunCassettes()  # each file read once, shared by everything below
    tools: ToolTrafficReplay | None = None
    if options.mode is not RecordMode.RECORD:
        # Tools' own HTTP calls are answered from the recordings, whatever the mode:
        # programs' tools and --live-tools run for real, and replay never reaches the
        # network unless asked (an unrecorded tool call fails closed).
        tools = ToolTrafficReplay(
            tool_exchanges([e for c in recordings.existing(every) for e in c.exchanges]),
            pass_hosts=("googleapis.com",) if options.mode is RecordMode.LIVE else (),
            label=label,
        )
    async with contextlib.AsyncExitStack() as stack:
        # The model source starts before the agent is imported: a module that creates its
        # genai.Client() at import gets the placeholder credentials and the proxy's URL.
        is_program = agent.is_program if isinstance(agent, LoadedAgent) else is_program_spec(agent)
        backend: ModelBackend | None = None
        if unresolved is None:
            try:
                backend = await stack.enter_async_context(
                    model_backend_async(
                        options.mode,
                        every,
                        rules=options.rules,
                        upstream=options.upstream,
                        observe=is_program,
                        rerecord=options.rerecord,
                        preloaded=recordings.loaded(every)
                        if options.mode is RecordMode.REPLAY
                        else None,
                        # An ADK agent with mock tools calls the model only through ADK's
                        # async path: its replay is served on this loop (no thread hop).
                        same_loop=not is_program and not options.live_tools,
                    )
                )
            except InputError as exc:  # said after the agent loads, as above
                unresolved = exc
        if tools is not None and backend is not None and backend.url:
            tools.own = (backend.url,)  # a model call while the module loads is not a tool's
        if isinstance(agent, LoadedAgent):
            loaded = agent
        else:
            with tools.serving() if tools is not None else contextlib.nullcontext():
                # A toolset that fetches its spec while the agent module loads (an OpenAPI
                # spec over HTTP) gets the recorded one; an unrecorded fetch fails closed.
                loaded = await load_agent_async(agent, agent_name=options.agent_name)
        if unresolved is not None:
            raise unresolved
        assert backend is not None
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
                    [c.mcp for c in recordings.existing(every)],
                    label=label,
                )
            )
            plugins = (mcp.guard,)
        if tools is not None:
            tools.own = (backend.url,) if backend.url else ()
            if not loaded.is_program:
                tools.mcp_urls = tuple(
                    str(t.connection_params.url)
                    for t in mcp_toolsets(loaded.root_agent)
                    if getattr(t.connection_params, "url", None)
                )
            stack.enter_context(tools.serving())
        replays = [
            await _replay_one(loaded, target, options, on_case, backend, plugins, recordings)
            for target in targets
        ]
        for done in replays:
            done.unused_ids = {
                c: frozenset(e.id for e in backend.unused([c])) for c in done.recordings
            }
            done.unused = {c: len(ids) for c, ids in done.unused_ids.items()}
        return replays


def replay_evalsets(
    agent: str | LoadedAgent,
    evalsets: Sequence[str | Path | EvalSet],
    options: ReplayOptions = ReplayOptions(),
    *,
    on_case: Callable[[int, int], None] | None = None,
) -> list[EvalSetReplay]:
    """Replay and score eval sets against AGENT (what ``rec replay`` runs).

    Args:
        agent: an ADK agent folder or module, ``module:function``, or a loaded agent.
        evalsets: eval set files or folders of them, or in-memory :class:`EvalSet` objects
            (their recording is ``options.recording``).
        options: the flags (see :class:`ReplayOptions`).
        on_case: progress callback, (case runs done, case runs in total).

    Returns:
        One :class:`EvalSetReplay` per eval set; ``.result.passed`` is the verdict.

    Raises:
        InputError: an agent, eval set, recording or config cannot be used.
    """
    if _in_workers(agent, options):
        from replayer._worker_pool import replay_in_workers

        return replay_in_workers(agent, evalsets, options, on_case=on_case)
    return asyncio.run(replay_evalsets_async(agent, evalsets, options, on_case=on_case))


def _in_workers(agent: str | LoadedAgent, options: ReplayOptions) -> bool:
    """Whether this run goes to worker processes (see :mod:`replayer._worker_pool`)."""
    return (
        options.workers > 1
        and not isinstance(agent, LoadedAgent)
        and options.mode not in (RecordMode.RECORD, RecordMode.AUTO)
    )
