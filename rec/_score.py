"""``rec score EXPECTED ACTUAL...``: score recorded EvalSets without running any agent."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click

from rec._options import UrlParam, report_options, writable_output
from rec._pydantic_plugins import skip_plugin_discovery

if TYPE_CHECKING:
    from cassettes._eval_result import EvalSetResult
    from replayer._reports.progress import ProgressBar

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
@report_options
@click.option(
    "--judge-recording",
    type=click.Path(path_type=Path),
    help="Serve LLM-judge model calls from this cassette (file or folder); no credentials "
    "needed, and a judge call with no recording fails closed.",
)
@click.option(
    "--record-judge",
    type=click.Path(file_okay=False, path_type=Path),
    callback=writable_output,
    help="Record the LLM-judge model calls (made live, with your credentials) into this folder "
    "as judge.cassette.json, for later --judge-recording.",
)
@click.option(
    "--upstream",
    default=None,
    type=UrlParam(),
    help="Model API base URL for --record-judge (default: the Gemini API).",
)
def score_command(
    expected: Path,
    actual: tuple[Path, ...],
    config: Path | None,
    as_json: bool,
    junit: Path | None,
    results: Path | None,
    html: Path | None,
    judge_recording: Path | None,
    record_judge: Path | None,
    upstream: str | None,
    allow_not_evaluated: bool,
) -> None:
    """Score ACTUAL eval set(s) against EXPECTED (several ACTUAL files = several runs).

    Exit status 0 if every case passed, 1 if any failed, 2 for a usage or input error.
    """
    if not (as_json or junit or results or html or judge_recording or record_judge):
        # The console report alone: scored without pydantic when every input is plain
        from replayer._reports.console import render_report
        from replayer._reports.progress import ProgressBar
        from replayer._score import score_files_plain

        with ProgressBar(total=1) as bar:
            plain = score_files_plain(
                expected,
                actual,
                config=config,
                allow_not_evaluated=allow_not_evaluated,
                on_case=_advance(bar),
            )
        if plain is not None:
            click.echo(render_report(plain), nl=False)
            if not plain.passed:
                sys.exit(1)  # rec.cli.main turns SystemExit into the exit status
            return
    if judge_recording is not None and record_judge is not None:
        raise click.UsageError("use either --judge-recording or --record-judge, not both")
    with skip_plugin_discovery():
        _score(
            expected,
            actual,
            config=config,
            allow_not_evaluated=allow_not_evaluated,
            as_json=as_json,
            reports=_Reports(junit=junit, results=results, html=html),
            judge_traffic=_judge_traffic(judge_recording, record_judge, upstream),
        )


class _Reports(NamedTuple):
    """The report files asked for (None: not asked for)."""

    junit: Path | None
    results: Path | None
    html: Path | None


def _advance(bar: ProgressBar) -> Callable[[int, int], None]:
    """The ``on_case`` that moves ``bar``."""

    def advance(done: int, total: int) -> None:
        bar.total = total
        bar.advance()

    return advance


def _judge_traffic(
    judge_recording: Path | None, record_judge: Path | None, upstream: str | None
) -> contextlib.AbstractContextManager[object]:
    """Where the LLM judges' model calls go: replayed, recorded, or (neither) live."""
    if judge_recording is not None:
        from replayer._replay_api import replay

        return replay(judge_recording)
    if record_judge is not None:
        from recorder._api import record
        from recorder._traffic import DEFAULT_UPSTREAM

        return record(
            record_judge, name="judge", upstream=upstream or DEFAULT_UPSTREAM, write_evalset=False
        )
    return contextlib.nullcontext()


def _score(
    expected: Path,
    actual: tuple[Path, ...],
    *,
    config: Path | None,
    allow_not_evaluated: bool,
    as_json: bool,
    reports: _Reports,
    judge_traffic: contextlib.AbstractContextManager[object],
) -> None:
    from replayer._reports.console import render_report
    from replayer._reports.progress import ProgressBar
    from replayer._score import score_files

    with judge_traffic, ProgressBar(total=1) as bar:
        result = score_files(
            expected,
            actual,
            config=config,
            allow_not_evaluated=allow_not_evaluated,
            on_case=_advance(bar),
        )
    _write_reports(result, reports, expected, actual)
    if as_json:
        from replayer._reports.results import result_json

        click.echo(result_json(result), nl=False)
    else:
        click.echo(render_report(result), nl=False)
    if not result.passed:
        sys.exit(1)  # rec.cli.main turns SystemExit into the exit status


def _write_reports(
    result: EvalSetResult, reports: _Reports, expected: Path, actual: tuple[Path, ...]
) -> None:
    if reports.junit:
        from replayer._reports.junit import write_junit

        write_junit([result], reports.junit)
    if reports.results:
        from replayer._reports.results import write_results

        write_results([result], reports.results)
    if reports.html:  # the HTML report reads cassettes: imported only when one is asked for
        from replayer._reports.html import write_html
        from replayer._reports.set_report import report_from_score

        write_html([report_from_score(result, expected, actual)], reports.html)
