"""``rec merge RESULTS...``: put the results of a sharded run back together."""

from __future__ import annotations

from pathlib import Path

import click

from rec._options import writable_output

__all__ = ["merge_command"]


@click.command("merge")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--junit",
    type=click.Path(dir_okay=False, path_type=Path),
    callback=writable_output,
    help="Write one JUnit XML for every shard's cases.",
)
@click.option(
    "--results",
    type=click.Path(file_okay=False, path_type=Path),
    callback=writable_output,
    help="Write one EvalSetResult JSON per eval set into this folder.",
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Results that hold no case pass. Default: they fail (the shards tested nothing).",
)
def merge_command(
    paths: tuple[Path, ...], junit: Path | None, results: Path | None, allow_empty: bool
) -> None:
    """Merge the EvalSetResults that `rec replay --shard I/N --results DIR` jobs wrote.

    PATHS are those folders (or the files in them). Prints one report over every shard;
    exit status 0 if every case ran and passed, 1 if any failed or the results hold no case
    (without --allow-empty), 2 for a usage or input error.
    """
    from replayer._reports.console import render_report, render_totals
    from replayer._reports.junit import write_junit
    from replayer._reports.results import write_results
    from replayer._sharding import load_results, merge_results

    merged = merge_results(load_results(paths))
    if junit:
        write_junit(merged, junit)
    if results:
        write_results(merged, results)
    for result in merged:
        click.echo(render_report(result), nl=False)
    if len(merged) > 1:
        click.echo(render_totals(merged), nl=False)
    if not any(result.eval_case_results for result in merged):
        said = "rec merge: the results hold no case, so the shards tested nothing"
        click.echo(
            f"{said} (--allow-empty: not a failure)"
            if allow_empty
            else f"{said}. Check that the jobs replayed the eval sets, or pass --allow-empty",
            err=True,
        )
        if not allow_empty:
            raise SystemExit(1)
    if not all(result.passed for result in merged):
        raise SystemExit(1)
