"""``rec replay AGENT EVALSET_OR_DIR...``: run eval cases on recorded model traffic, score them."""

from __future__ import annotations

import atexit
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rec._options import (
    build_match_rules,
    match_rules_option,
    output_option,
    replay_flag,
    report_options,
)
from rec._replay_flags import STREAMING

if TYPE_CHECKING:
    from cassettes._eval_config import TakesRule
    from cassettes._record_mode import RecordMode
    from replayer._gate import GateOutcome
    from replayer._replay_target import EvalSetReplay, ReplayOptions

__all__ = ["replay_command"]

_STREAMING = STREAMING
"""``--streaming``'s choices (:mod:`rec._replay_flags`)."""


def _silence_adk_logs() -> None:
    """Keep ADK's log lines off the terminal for this command, without raising the logger's
    level: rec's judge metrics read ADK's warnings (the reason a judge could not run)."""
    adk = logging.getLogger("google_adk")
    quiet, propagate = logging.NullHandler(), adk.propagate
    adk.addHandler(quiet)
    adk.propagate = False

    def restore() -> None:
        adk.removeHandler(quiet)
        adk.propagate = propagate

    click.get_current_context().call_on_close(restore)


@click.command("replay")
@click.argument("agent")
@click.argument(
    "evalsets",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path),
    metavar="EVALSET_OR_DIR...",
)
@replay_flag("recording")
@replay_flag("mode")
@click.option("--live", is_flag=True, help="Same as --mode live.")
@click.option("--record-missing", is_flag=True, help="Same as --mode auto.")
@replay_flag("upstream")
@replay_flag("live-tools")
@replay_flag("in-process")
@replay_flag("config")
@replay_flag("num-runs")
@replay_flag("prices")
@replay_flag("budget")
@replay_flag("baseline")
@click.option(
    "--case", "cases", multiple=True, metavar="ID", help="Only this eval id (repeatable)."
)
@click.option(
    "--parallel",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="Cases run concurrently (ADK agents).",
)
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(1),
    metavar="N",
    help="Worker processes to run the cases in (default: the number of cores; 1 runs them "
    "in this process). Record and auto modes use one.",
)
@click.option(
    "--shard",
    default=None,
    metavar="I/N",
    help="Run only the I-th of N shards of the cases (one CI job each; the split is "
    "stable as cases are added). Merge the jobs' --results with `rec merge`.",
)
@replay_flag("agent-name")
@replay_flag("allow-empty")
@replay_flag("streaming")
@replay_flag("no-freeze-time")
@output_option(
    "--otlp",
    metavar="FILE",
    help="Write the replay's spans (ADK's, marked rec.replayed) as OTLP JSON lines, to open "
    "beside the production trace (Phoenix, Langfuse, Jaeger). The cases run in one process.",
)
@replay_flag("live-clock")
@report_options
@match_rules_option
def replay_command(**flags: Any) -> None:
    """Replay EVALSET_OR_DIR against AGENT (an ADK agent folder or module, or module:function).

    The model is served from the recordings, tools return their recorded responses, and
    no credentials are needed. FILE.evalset.json:ID1,ID2 runs only those cases of the file
    (as adk eval). Exit status 0 if every case ran and passed, 1 if any failed or none ran
    (without --allow-empty), 2 for a usage or input error.
    """
    from replayer._gate import Gates, gate_replays
    from replayer._reports.comparison import render_gates

    given = _ReplayFlags(**flags)
    _start_workers_early(given)
    chosen_mode = _chosen_mode(given)
    # Both read before any case runs: a bad budget or baseline is said at once (exit 2).
    held_to = Gates.load(given.budget, given.baseline, prices=given.prices)
    options = _replay_options(given, chosen_mode, held_to.takes)
    _silence_adk_logs()
    replays = _replay_with_progress(given, options)
    gates = gate_replays(replays, held_to, parallel=given.parallel > 1)
    _render(given, replays, gates)
    outcomes = [r.result for r in replays]
    _some_ran(outcomes, given.shard, allow_empty=given.allow_empty)
    click.echo(render_gates(replays, gates), nl=False)
    if not all(o.passed for o in outcomes) or not gates.passed:
        # SystemExit, not ctx.exit(1): under standalone_mode=False click turns ctx.exit into
        # a return value that rec.cli.main ignores.
        raise SystemExit(1)


@dataclass(frozen=True)
class _ReplayFlags:
    """``rec replay``'s arguments and flags, as click parsed them."""

    agent: str
    evalsets: tuple[Path, ...]
    recording: Path | None
    mode: str | None
    live: bool
    record_missing: bool
    upstream: str | None
    live_tools: bool
    in_process: bool
    config: Path | None
    num_runs: int | None
    prices: Path | None
    budget: Path | None
    baseline: Path | None
    cases: tuple[str, ...]
    parallel: int
    workers: int | None
    shard: str | None
    agent_name: str | None
    allow_empty: bool
    streaming: str | None
    no_freeze_time: bool
    live_clock: bool
    junit: Path | None
    results: Path | None
    html: Path | None
    otlp: Path | None
    allow_not_evaluated: bool
    ignore: tuple[str, ...]
    live_audio: str


def _start_workers_early(given: _ReplayFlags) -> None:
    """Start the workers' fork server now when the cases will run in worker processes."""
    from replayer._worker_start import (
        default_workers,
        may_split,
        start_workers_early,
        stop_workers_early,
    )

    live, auto = given.live, given.record_missing
    named = "live" if live else "auto" if auto else given.mode or "replay"
    splits = (given.workers or default_workers()) > 1 and may_split(
        given.evalsets, cases=given.cases
    )
    if named in ("replay", "live") and splits and given.otlp is None:
        # The workers' fork server imports ADK and the replay code while this process
        # goes on, so the workers start loaded (replayer._worker_start); it is stopped
        # when the command ends.
        start_workers_early()
        atexit.register(stop_workers_early)


def _chosen_mode(given: _ReplayFlags) -> RecordMode:
    """The one mode --mode, --live and --record-missing ask for (a usage error if more),
    with a note on stderr for a --workers or --parallel the mode does not use."""
    from cassettes._record_mode import RecordMode

    chosen = {RecordMode(given.mode)} if given.mode else set()
    if given.live:
        chosen.add(RecordMode.LIVE)
    if given.record_missing:
        chosen.add(RecordMode.AUTO)
    if len(chosen) > 1:
        names = " and ".join(sorted(str(m) for m in chosen))
        raise click.UsageError(
            f"choose one mode, not {names} (--live is --mode live, --record-missing is --mode auto)"
        )
    mode = chosen.pop() if chosen else RecordMode.REPLAY
    workers, parallel = given.workers, given.parallel
    if workers is not None and workers > 1 and mode in (RecordMode.RECORD, RecordMode.AUTO):
        click.echo(
            f"note: --mode {mode} writes one recording, so the cases run in one process "
            f"(--workers {workers} is not used)",
            err=True,
        )
    if parallel > 1 and mode is RecordMode.AUTO:
        click.echo(
            "note: --mode auto follows each case along its recording, so the cases run one "
            f"at a time (--parallel {parallel} is not used)",
            err=True,
        )
    return mode


def _replay_options(
    given: _ReplayFlags, mode: RecordMode, takes_rule: TakesRule | None
) -> ReplayOptions:
    """The one options object the flags make for the replay run."""
    from cassettes._divergence import CLI_HINTS
    from recorder._traffic import DEFAULT_UPSTREAM
    from replayer._replay_target import ReplayOptions
    from replayer._sharding import Shard
    from replayer._worker_start import default_workers

    return ReplayOptions(
        mode=mode,
        recording=given.recording,
        live_tools=given.live_tools,
        in_process=given.in_process,
        config=given.config,
        num_runs=given.num_runs,
        prices=given.prices,
        takes_rule=takes_rule,
        cases=given.cases,
        parallel=given.parallel,
        workers=given.workers if given.workers is not None else default_workers(),
        allow_not_evaluated=given.allow_not_evaluated,
        rules=build_match_rules(given.ignore, given.live_audio),
        upstream=given.upstream or DEFAULT_UPSTREAM,
        agent_name=given.agent_name,
        shard=Shard.parse(given.shard) if given.shard is not None else None,
        streaming=given.streaming,  # type: ignore[arg-type]  # one of click's choices
        freeze_time=not (given.no_freeze_time or given.live_clock),
        recorded_reads=not given.live_clock,
        hints=CLI_HINTS,
        otlp=given.otlp,
        allow_empty=given.allow_empty,
    )


def _replay_with_progress(given: _ReplayFlags, options: ReplayOptions) -> list[EvalSetReplay]:
    """Run the replay, a progress bar on stderr advancing as each case finishes."""
    from replayer._replay_run import replay_evalsets
    from replayer._reports.progress import ProgressBar

    with ProgressBar(total=1) as bar:

        def advance(done: int, total: int) -> None:
            bar.total = total
            bar.advance()

        return replay_evalsets(given.agent, list(given.evalsets), options, on_case=advance)


def _render(given: _ReplayFlags, replays: list[EvalSetReplay], gates: GateOutcome) -> None:
    """Write the --junit, --results and --html files and print each eval set's report."""
    from replayer._reports.comparison import comparisons
    from replayer._reports.console import (
        render_not_compared,
        render_reads,
        render_report,
        render_totals,
        render_unused,
    )
    from replayer._reports.html import write_html
    from replayer._reports.junit import write_junit
    from replayer._reports.results import write_results
    from replayer._reports.set_report import report_from_replay

    outcomes = [r.result for r in replays]
    if given.junit:
        write_junit(outcomes, given.junit)
    if given.results:
        write_results(outcomes, given.results)
    # A shard (or --case) may hold none of an eval set's cases: such a set prints no block,
    # on the console or in the HTML report.
    shown = [r for r in replays if r.result.eval_case_results or not (given.cases or given.shard)]
    if given.html:
        compared = comparisons(replays, gates)
        write_html([report_from_replay(r, compared) for r in shown], given.html)
    for replay in shown:
        click.echo(render_report(replay.result), nl=False)
    click.echo(render_reads(shown), nl=False)
    # A shard leaves the other shards' exchanges unused: that is no sign of a shorter path.
    filtered = bool(given.cases) or given.shard is not None
    click.echo(render_unused(replays, filtered=filtered), nl=False)
    click.echo(render_not_compared(replays), nl=False)
    if len(shown) > 1:
        click.echo(render_totals([r.result for r in shown]), nl=False)


def _some_ran(outcomes: list[Any], shard: str | None, *, allow_empty: bool) -> None:
    """A run that replayed no case says so in one line, and fails unless --allow-empty."""
    if any(outcome.eval_case_results for outcome in outcomes):
        return
    click.echo(_none_ran(shard, len(outcomes), allowed=allow_empty), err=True)
    if not allow_empty:
        raise SystemExit(1)


def _none_ran(shard: str | None, evalsets: int, *, allowed: bool) -> str:
    """The line of a run that replayed no case."""
    sets = f"{evalsets} eval set{'s' if evalsets != 1 else ''}"
    if shard is not None:
        said = (
            f"rec replay: shard {shard} holds none of the cases of the {sets} (each case "
            "goes to the shard its ids hash to), so it tested nothing"
        )
        fix = "In a CI matrix with more shards than cases, pass --allow-empty"
    else:
        said = f"rec replay: no case of the {sets} ran, so nothing was tested"
        fix = "Pass --allow-empty if that is expected"
    return f"{said} (--allow-empty: not a failure)" if allowed else f"{said}. {fix}"
