"""What a replay run is asked and what it gives back: the options, each eval set's outcome,
and the eval sets resolved with their recordings and the cases chosen from them.

Both ways a run goes share these: one process (:mod:`replayer._local_run`) and worker
processes (:mod:`replayer._worker_pool`, which resolves and deals the cases out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cassettes._cassette import Exchange
from cassettes._divergence import CLI_HINTS, MissHints
from cassettes._errors import InputError
from cassettes._eval_config import EvalConfig, TakesRule
from cassettes._eval_result import EvalCaseResult, EvalSetResult, EvalStatus
from cassettes._evalset import EvalCase, EvalSet, load_evalset
from cassettes._file_names import (
    CASSETTE_SUFFIX,
    EVALSET_SUFFIX,
    EVALSET_SUFFIXES,
    LEGACY_EVALSET_SUFFIX,
    cassette_beside,
    recording_name,
)
from cassettes._matching import MatchRules
from cassettes._record_mode import RecordMode
from recorder._traffic import DEFAULT_UPSTREAM
from replayer._case_failure import CaseFailure
from replayer._file_search import expand_paths, find_cassettes
from replayer._sharding import Shard
from replayer._streaming_mode import STREAMING_CHOICES, StreamingChoice

__all__ = [
    "EvalSetReplay",
    "ReplayOptions",
    "ReplayTarget",
    "failed_result",
    "find_evalsets",
    "recording_for",
    "resolve_targets",
    "selected_cases",
    "split_selector",
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
    num_runs: int | None = None
    """Takes of each case to run live or record; a replay runs at least every recorded
    take (``replayer._takes``). None: the eval config's ``multi_run_config.num_runs``, else
    1 (:meth:`cassettes._eval_config.EvalConfig.num_runs`)."""
    takes_rule: TakesRule | None = None
    """The verdict rule over a case's takes (``--budget``'s ``takes``; default: the eval
    config's, else every take must pass)."""
    prices: Path | None = None
    """A price table file (``--prices``; default: the one rec ships)."""
    cases: tuple[str, ...] = ()
    """Only these eval ids (all when empty)."""
    parallel: int = 1
    """Cases run concurrently (ADK agents, each case on its own clock; plain programs, and
    every case in auto mode, run one at a time)."""
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
    """In replay and auto modes, each case's clock reads its recording's time while the case
    runs (:mod:`replayer._recorded_clock`); concurrent cases each read their own."""
    recorded_reads: bool = True
    """In replay and auto modes, what an ADK agent's code reads of the clock, ``uuid4``,
    ``random`` and ``secrets`` is served from the recording where it was recorded
    (:mod:`replayer._served_reads`); ``--live-clock`` turns this and ``freeze_time`` off."""
    hints: MissHints = CLI_HINTS
    """Whose options a miss's fix names: rec's CLI (the default), pytest or
    ``AgentEvaluator`` (:class:`cassettes._divergence.MissHints`)."""
    in_process: bool = False
    """Answer an ADK agent's google-genai models through an in-process transport
    (:mod:`replayer._in_process`) instead of a loopback round trip; replay mode only."""
    workers: int = 1
    """Worker processes to run the cases in (``--workers N``, see :mod:`replayer._worker_pool`);
    1 runs them in this process. Record and auto modes, and an already loaded agent, run in
    this process whatever is asked."""
    only: frozenset[tuple[str, str]] | None = None
    """Only these ``(eval_set_id, eval_id)`` cases (what one worker process is given)."""
    otlp: Path | None = None
    """Write the replay's spans (ADK's, marked ``rec.replayed``) to this file as OTLP JSON
    lines (``rec replay --otlp FILE``, :mod:`replayer._otlp_export`); the cases then run in
    this process, as in record and auto modes."""
    allow_empty: bool = False
    """An eval set with no cases is replayed as nothing instead of refused (``--allow-empty``)."""

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
    reads: dict[str, str] = field(default_factory=dict)
    """Per case that read recorded values, what was served (and what ran past the
    recording): one line for the report."""
    not_compared: dict[Path, tuple[str, list[str]]] = field(default_factory=dict)
    """Per cassette of ``recordings`` rebuilt from a trace: the trace's shape and schema,
    and the request parts it does not hold, which matching did not compare."""


@dataclass(frozen=True)
class ReplayTarget:
    """One eval set to replay, resolved: its cases, recordings and config."""

    evalset: EvalSet
    path: Path | None
    recordings: list[Path]
    picked: tuple[str, ...] = ()
    """Only these eval ids of this eval set (ADK's ``file.evalset.json:id1,id2``); all
    when empty."""

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
        empty=f"no *{EVALSET_SUFFIX} or *{LEGACY_EVALSET_SUFFIX} in this folder",
        fix="Record one with `rec start`, or name the eval set file",
    )
    for path in found:
        if path.name.endswith(CASSETTE_SUFFIX):
            raise InputError(
                "this is a cassette (the recording), not an eval set",
                path=path,
                fix=f"Pass {recording_name(path)}{EVALSET_SUFFIX} or the "
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
    # exists, not is_file: a FIFO or a device there is read, and refused by name, by the loader
    return [beside] if beside.exists() or create else []


def failed_result(evalset: EvalSet, case: EvalCase, reasons: list[str]) -> EvalCaseResult:
    return EvalCaseResult(
        eval_set_file=evalset.eval_set_id,
        eval_set_id=evalset.eval_set_id,
        eval_id=case.eval_id,
        final_eval_status=EvalStatus.FAILED,
        user_id=case.session_input.user_id if case.session_input else None,
        failure_reasons=reasons,
    )


def selected_cases(target: ReplayTarget, options: ReplayOptions) -> list[EvalCase]:
    """The cases of ``target`` this run replays (``--case``, ``file:ids``, ``--shard``, a
    worker's share; :func:`resolve_targets` has checked that each id names a case).

    Every case of the eval set is one of them unless a flag leaves it out: a case rec cannot
    run fails with its reason, it is never dropped.
    """
    evalset = target.evalset
    cases = list(evalset.eval_cases)
    if options.cases:
        cases = [c for c in cases if c.eval_id in options.cases]
    if target.picked:
        cases = [c for c in cases if c.eval_id in target.picked]
    if options.shard is not None:
        cases = [c for c in cases if options.shard.contains(evalset.eval_set_id, c.eval_id)]
    if options.only is not None:
        cases = [c for c in cases if (evalset.eval_set_id, c.eval_id) in options.only]
    return cases


def _check_selection(targets: Sequence[ReplayTarget], options: ReplayOptions) -> None:
    """Every eval id asked for names a case, and no eval set is empty unless allowed.

    Raises:
        InputError: an eval set holds no case (without ``allow_empty``), an id of
            ``file:ids`` is not in that file, or a ``--case`` id is in none of the eval sets.
    """
    for target in targets:
        known = [c.eval_id for c in target.evalset.eval_cases]
        if not known and not options.allow_empty:
            raise InputError(
                "this eval set holds no eval cases, so a run of it would test nothing",
                path=target.label,
                where="eval_cases",
                fix="Add a case (`rec start` records one), or allow a run of nothing "
                "(rec replay --allow-empty, pytest --rec-allow-empty)",
            )
        unknown = [c for c in target.picked if c not in known]
        if unknown:
            raise InputError(
                f"no case {unknown[0]!r} in this eval set",
                path=target.label,
                where=":".join(target.picked),
                fix=f"Use one of: {', '.join(sorted(known))}",
            )
    everywhere = {c.eval_id for t in targets for c in t.evalset.eval_cases}
    missing = [c for c in options.cases if c not in everywhere]
    if missing and not any(c in everywhere for c in options.cases):
        labels = ", ".join(t.label for t in targets)
        raise InputError(
            f"no case {missing[0]!r} in {labels}",
            path="--case",
            fix=f"Use one of: {', '.join(sorted(everywhere))}",
        )


def split_selector(given: str | Path) -> tuple[Path, tuple[str, ...]]:
    """ADK's ``file.evalset.json:id1,id2`` as the file and its eval ids; a path that
    exists, or has no such tail, is returned whole with no ids."""
    path = Path(given)
    head, colon, tail = str(given).rpartition(":")
    if not colon or path.exists() or not Path(head).is_file():
        return path, ()
    ids = tuple(part.strip() for part in tail.split(",") if part.strip())
    return (Path(head), ids) if ids else (path, ())


def resolve_targets(
    evalsets: Sequence[str | Path | EvalSet], options: ReplayOptions
) -> list[ReplayTarget]:
    """Eval set files (folders expanded) and in-memory eval sets, with their recordings."""
    create = options.mode in (RecordMode.RECORD, RecordMode.AUTO)
    targets: list[ReplayTarget] = []
    for given in evalsets:
        if isinstance(given, EvalSet):
            if options.recording is None:
                raise InputError(
                    "an in-memory eval set has no file beside which to find its recording",
                    path=given.eval_set_id,
                    fix="Pass the cassette (or its folder) as ReplayOptions(recording=...)",
                )
            found = recording_for(Path(given.eval_set_id), options.recording, create=create)
            targets.append(ReplayTarget(given, None, found))
            continue
        file, picked = split_selector(given)
        for path in find_evalsets([file]):
            evalset = load_evalset(path)  # first: a file that cannot be read is named for that
            found = recording_for(path, options.recording, create=create)
            if options.mode is RecordMode.REPLAY and not found:
                raise InputError(
                    "no recording beside this eval set",
                    path=path,
                    fix=f"Expected {cassette_beside(path).name} beside it; pass "
                    "--recording DIR, or run with --live",
                )
            targets.append(ReplayTarget(evalset, path, found, picked))
    _check_selection(targets, options)
    return targets
