"""``rec replay AGENT EVALSET_OR_DIR...``: run eval cases on recorded model traffic, score them."""

from __future__ import annotations

import atexit
import logging
from pathlib import Path
from typing import Any

import click

from rec._options import (
    build_match_rules,
    match_rules_option,
    replay_flag,
    report_options,
    writable_output,
)
from rec._replay_flags import STREAMING

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
@click.option(
    "--otlp",
    type=click.Path(dir_okay=False, path_type=Path),
    callback=writable_output,
    metavar="FILE",
    help="Write the replay's spans (ADK's, marked rec.replayed) as OTLP JSON lines, to open "
    "beside the production trace (Phoenix, Langfuse, Jaeger). The cases run in one process.",
)
@replay_flag("live-clock")
@report_options
@match_rules_option
def replay_command(  # noqa: C901
    agent: str,
    evalsets: tuple[Path, ...],
    recording: Path | None,
    mode: str | None,
    live: bool,
    record_missing: bool,
    upstream: str | None,
    live_tools: bool,
    in_process: bool,
    config: Path | None,
    num_runs: int,
    prices: Path | None,
    budget: Path | None,
    baseline: Path | None,
    cases: tuple[str, ...],
    parallel: int,
    workers: int | None,
    shard: str | None,
    agent_name: str | None,
    allow_empty: bool,
    streaming: str | None,
    no_freeze_time: bool,
    live_clock: bool,
    junit: Path | None,
    results: Path | None,
    html: Path | None,
    otlp: Path | None,
    allow_not_evaluated: bool,
    ignore: tuple[str, ...],
    live_audio: str,
) -> None:
    """Replay EVALSET_OR_DIR against AGENT (an ADK agent folder or module, or module:function).

    The model is served from the recordings, tools return their recorded responses, and
    no credentials are needed. FILE.evalset.json:ID1,ID2 runs only those cases of the file
    (as adk eval). Exit status 0 if every case ran and passed, 1 if any failed or none ran
    (without --allow-empty), 2 for a usage or input error.
    """
    from replayer._worker_start import (
        default_workers,
        may_split,
        start_workers_early,
        stop_workers_early,
    )

    named = "live" if live else "auto" if record_missing else mode or "replay"
    splits = (workers or default_workers()) > 1 and may_split(evalsets, cases=cases)
    if named in ("replay", "live") and splits and otlp is None:
        # The workers' fork server imports ADK and the replay code while this process
        # goes on, so the workers start loaded (replayer._worker_start); it is stopped
        # when the command ends.
        start_workers_early()
        atexit.register(stop_workers_early)

    from cassettes._divergence import CLI_HINTS
    from cassettes._record_mode import RecordMode
    from recorder._traffic import DEFAULT_UPSTREAM
    from replayer._baseline import load_baseline
    from replayer._budget import load_budget
    from replayer._gate import gate_replays
    from replayer._prices import load_prices
    from replayer._replay_run import replay_evalsets
    from replayer._replay_target import ReplayOptions
    from replayer._reports.comparison import comparisons, render_gates
    from replayer._reports.console import (
        render_not_compared,
        render_reads,
        render_report,
        render_totals,
        render_unused,
    )
    from replayer._reports.html import write_html
    from replayer._reports.junit import write_junit
    from replayer._reports.progress import ProgressBar
    from replayer._reports.results import write_results
    from replayer._reports.set_report import report_from_replay
    from replayer._sharding import Shard

    chosen = {RecordMode(mode)} if mode else set()
    if live:
        chosen.add(RecordMode.LIVE)
    if record_missing:
        chosen.add(RecordMode.AUTO)
    if len(chosen) > 1:
        names = " and ".join(sorted(str(m) for m in chosen))
        raise click.UsageError(
            f"choose one mode, not {names} (--live is --mode live, --record-missing is --mode auto)"
        )
    chosen_mode = chosen.pop() if chosen else RecordMode.REPLAY
    if workers is not None and workers > 1 and chosen_mode in (RecordMode.RECORD, RecordMode.AUTO):
        click.echo(
            f"note: --mode {chosen_mode} writes one recording, so the cases run in one process "
            f"(--workers {workers} is not used)",
            err=True,
        )
    if parallel > 1 and chosen_mode is RecordMode.AUTO:
        click.echo(
            "note: --mode auto follows each case along its recording, so the cases run one "
            f"at a time (--parallel {parallel} is not used)",
            err=True,
        )
    # Both read before any case runs: a bad budget or baseline is said at once (exit 2).
    limits = load_budget(budget, has_baseline=baseline is not None) if budget else None
    base = load_baseline(baseline, load_prices(prices)) if baseline else None
    options = ReplayOptions(
        mode=chosen_mode,
        recording=recording,
        live_tools=live_tools,
        in_process=in_process,
        config=config,
        num_runs=num_runs,
        prices=prices,
        takes_rule=limits.takes if limits is not None else None,
        cases=cases,
        parallel=parallel,
        workers=workers if workers is not None else default_workers(),
        allow_not_evaluated=allow_not_evaluated,
        rules=build_match_rules(ignore, live_audio),
        upstream=upstream or DEFAULT_UPSTREAM,
        agent_name=agent_name,
        shard=Shard.parse(shard) if shard is not None else None,
        streaming=streaming,  # type: ignore[arg-type]  # one of click's choices
        freeze_time=not (no_freeze_time or live_clock),
        recorded_reads=not live_clock,
        hints=CLI_HINTS,
        otlp=otlp,
        allow_empty=allow_empty,
    )
    _silence_adk_logs()
    with ProgressBar(total=1) as bar:

        def advance(done: int, total: int) -> None:
            bar.total = total
            bar.advance()

        replays = replay_evalsets(agent, list(evalsets), options, on_case=advance)
    gates = gate_replays(replays, budget=limits, baseline=base, parallel=parallel > 1)
    outcomes = [r.result for r in replays]
    if junit:
        write_junit(outcomes, junit)
    if results:
        write_results(outcomes, results)
    # A shard (or --case) may hold none of an eval set's cases: such a set prints no block,
    # on the console or in the HTML report.
    shown = [r for r in replays if r.result.eval_case_results or not (cases or shard)]
    if html:
        compared = comparisons(replays, gates)
        write_html([report_from_replay(r, compared) for r in shown], html)
    for replay in shown:
        click.echo(render_report(replay.result), nl=False)
    click.echo(render_reads(shown), nl=False)
    # A shard leaves the other shards' exchanges unused: that is no sign of a shorter path.
    click.echo(render_unused(replays, filtered=bool(cases) or shard is not None), nl=False)
    click.echo(render_not_compared(replays), nl=False)
    if len(shown) > 1:
        click.echo(render_totals([r.result for r in shown]), nl=False)
    _some_ran(outcomes, shard, allow_empty=allow_empty)
    click.echo(render_gates(replays, gates), nl=False)
    if not all(o.passed for o in outcomes) or not gates.passed:
        # SystemExit, not ctx.exit(1): under standalone_mode=False click turns ctx.exit into
        # a return value that rec.cli.main ignores.
        raise SystemExit(1)


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
