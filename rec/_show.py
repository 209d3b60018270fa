"""``rec show CASSETTE_OR_DIR...``: a recording as a timeline to read, or as JSON."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["show_command"]


@click.command("show")
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="CASSETTE_OR_DIR..."
)
@click.option("--json", "as_json", is_flag=True, help="Print the timeline as JSON instead.")
def show_command(paths: tuple[Path, ...], as_json: bool) -> None:
    """Show recordings as a timeline: per conversation and turn, the user's text, each model
    call (model, streamed or not, recorded latency, tokens), each tool call with its args and
    response (shortened), and the final reply. Secrets are masked."""
    from replayer._reports.timeline import cassette_timelines, dump_timelines, render_timelines

    timelines = cassette_timelines(paths)
    click.echo(dump_timelines(timelines) if as_json else render_timelines(timelines), nl=False)
