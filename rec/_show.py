"""``rec show CASSETTE_OR_DIR...``: a recording as a timeline to read, or as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from rec._pydantic_plugins import skip_plugin_discovery

__all__ = ["show_command", "show_text"]


def show_text(paths: Sequence[Path], *, as_json: bool = False) -> str:
    """What ``rec show`` prints for ``paths``: the timelines as text, or as JSON.

    The cyclic garbage collector is paused throughout: a timeline is many small acyclic
    trees (exchanges, turns, steps, lines), and every collection meanwhile would rescan
    the whole recording (about half the time at 10,000 exchanges). The timelines are let go
    before it resumes: its first collection then scans the text, not every step of them.
    """
    from cassettes._gc_pause import gc_paused
    from replayer._reports.timeline import cassette_timelines, dump_timelines, render_timelines

    with gc_paused():
        timelines = cassette_timelines(paths)
        text = dump_timelines(timelines) if as_json else render_timelines(timelines)
        del timelines
    return text


@click.command("show")
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="CASSETTE_OR_DIR..."
)
@click.option("--json", "as_json", is_flag=True, help="Print the timeline as JSON instead.")
def show_command(paths: tuple[Path, ...], as_json: bool) -> None:
    """Show recordings as a timeline: per conversation and turn, the user's text, each model
    call (model, streamed or not, recorded latency, tokens), each tool call with its args and
    response (shortened), and the final reply. Secrets are masked."""
    with skip_plugin_discovery():  # the cassette's models are the first pydantic builds
        text = show_text(paths, as_json=as_json)
    click.echo(text, nl=False)
