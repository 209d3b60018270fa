"""``rec score EXPECTED ACTUAL...``: score recorded EvalSets without running any agent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click

from cassettes import dump_eval_set_result
from replayer import ProgressBar, render_report, score_files, write_junit, write_results

__all__ = ["score_command"]


@click.command("score")
@click.argument("expected", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("actual", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Eval config (default: test_config.json beside EXPECTED, else ADK's defaults).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the EvalSetResult JSON instead.")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), help="Write JUnit XML.")
@click.option(
    "--results",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write EvalSetResult JSON into this folder, like ADK's eval history.",
)
@click.option(
    "--allow-not-evaluated",
    is_flag=True,
    help="A metric that cannot run counts for nothing (ADK's behaviour) instead of failing.",
)
def score_command(
    expected: Path,
    actual: tuple[Path, ...],
    config: Optional[Path],
    as_json: bool,
    junit: Optional[Path],
    results: Optional[Path],
    allow_not_evaluated: bool,
) -> None:
    """Score ACTUAL eval set(s) against EXPECTED (several ACTUAL files = several runs).

    Exit status 0 if every case passed, 1 if any failed, 2 for a usage or input error.
    """
    with ProgressBar(total=1) as bar:

        def advance(done: int, total: int) -> None:
            bar.total = total
            bar.advance()

        result = score_files(
            expected, actual, config=config, allow_not_evaluated=allow_not_evaluated,
            on_case=advance,
        )
    if junit:
        write_junit([result], junit)
    if results:
        write_results([result], results)
    if as_json:
        click.echo(dump_eval_set_result(result), nl=False)
    else:
        click.echo(render_report(result), nl=False)
    if not result.passed:
        sys.exit(1)  # rec.cli.main turns SystemExit into the exit status
