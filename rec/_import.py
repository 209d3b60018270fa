"""``rec import SOURCE``: ADK session, session database, legacy file, recording or trace ->
EvalSet (and, for a trace, its cassette)."""

from __future__ import annotations

from pathlib import Path

import click

from rec._options import writable_output

__all__ = ["import_command"]


@click.command("import")
@click.argument("source")
@click.option(
    "--session",
    "session_id",
    default=None,
    metavar="ID",
    help="Import only this session (session databases, session files and traces).",
)
@click.option(
    "--latest",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Import the N most recently updated sessions.",
)
@click.option(
    "--out",
    "out_dir",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    callback=writable_output,
    help="Folder to write to.",
)
@click.option("--name", default=None, help="Output name: writes NAME.evalset.json.")
@click.option(
    "--overwrite",
    is_flag=True,
    help="Replace NAME.evalset.json if it exists (without it such a name is refused).",
)
def import_command(
    source: str,
    session_id: str | None,
    latest: int | None,
    out_dir: Path,
    name: str | None,
    overwrite: bool,
) -> None:
    """Convert SOURCE into an ADK EvalSet (plus test_config.json if there is none).

    SOURCE is an ADK session JSON (GET /apps/APP/users/USER/sessions/ID, or saved from adk
    web), an ADK session database (a SQLite file or a SQLAlchemy URL), a legacy .test.json
    file, a recording folder / .cassette.json to re-extract, or an ADK agent's trace (OTLP
    JSON as the OpenTelemetry Collector's file exporter writes it, or adk web's
    /dev/apps/APP/debug/trace/session/ID): a trace gives one case per session and the
    cassette that replays it with no key.
    """
    from recorder._importers import import_source

    if session_id is not None and latest is not None:
        raise click.UsageError("--session and --latest exclude each other")
    result = import_source(
        source,
        session_id=session_id,
        latest=latest,
        out_dir=out_dir,
        name=name,
        overwrite=overwrite,
    )
    for path in result.paths:
        click.echo(f"rec: wrote {path}", err=True)
    click.echo(f"rec: {result.cases} eval case(s)", err=True)
    if result.skipped_sessions:
        click.echo(
            f"rec: skipped {result.skipped_sessions} session(s) with no turns (nothing to replay)",
            err=True,
        )
    for note in result.notes:
        click.echo(f"rec: note: {note}", err=True)
    for line in result.lacks:
        click.echo(f"rec: the trace lacks: {line}", err=True)
    if result.not_compared:
        click.echo(
            "rec: replay will not compare these request parts (the trace does not hold "
            f"them): {', '.join(result.not_compared)}",
            err=True,
        )
    if result.redacted:
        click.echo(f"rec: redacted {result.redacted} credential-shaped value(s)", err=True)
    if result.hints:
        click.echo("Check the expectations by hand (JSON paths in the EvalSet):")
        for hint in result.hints:
            click.echo(f"  {hint}")
