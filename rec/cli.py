"""The ``rec`` command: parse flags, call one package function, render the result.

Exit statuses are decided in one place (:func:`main`): 0 success, 1 a run failed
(``RunError``, failed evals), 2 usage or input errors (bad flags, files, configs).
Errors print as ``Type: message``; ``--debug`` adds the traceback.

Every command is registered here, by name, and imports what it needs inside its own
function (as httpx's ``_main.py`` does): ``rec --help``, ``rec status`` or ``rec check``
never pay for google-adk, google-genai, NLTK or the HTTP server they do not use
(``tests/test_cli_imports.py`` pins this per command). The commands with a module of their
own (:data:`_COMMAND_MODULES`) are imported when they run or are listed, so ``rec show``
loads no other command's module.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import logging
import os
import shlex
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from rec import __version__
from rec._options import (
    NO_PROXY_EXPORT,
    UrlParam,
    build_match_rules,
    match_rules_option,
    quiet_option,
    recording_folder_option,
    upstream_option,
)

if TYPE_CHECKING:
    from recorder import Recorder
    from recorder._adk_launch import AdkLaunch
    from recorder._recording import FinalizeResult

__all__ = ["NO_PROXY_EXPORT", "cli", "main"]


def _echo_exports(url: str) -> None:
    """The lines that point every model client in the user's shell at rec's proxy."""
    click.echo(f"export GOOGLE_GEMINI_BASE_URL={url}")
    click.echo(f"export GOOGLE_VERTEX_BASE_URL={url}")
    click.echo(NO_PROXY_EXPORT)
    click.echo(live_reach_export())
    _echo_provider_exports(url)


def _echo_provider_exports(url: str) -> None:
    """The exports that point OpenAI and Anthropic clients (and LiteLLM) at rec too."""
    from recorder._traffic import provider_base_urls

    for name, value in provider_base_urls(url).items():
        click.echo(f"export {name}={value}")


def live_reach_export() -> str:
    """The line that lets Pythons started from the user's shell reach rec for Gemini Live
    (google-genai's Live client takes only ``wss`` from a base URL): rec's sitecustomize
    on ``PYTHONPATH`` (``recorder._traffic._compat.install_live_reach``)."""
    from recorder._instrumentation import INSTRUMENT_ENV, SITECUSTOMIZE_DIR

    folder = shlex.quote(str(SITECUSTOMIZE_DIR))
    return f'export PYTHONPATH={folder}"${{PYTHONPATH:+:$PYTHONPATH}}" {INSTRUMENT_ENV}=1'


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record is emitted (click's test runner
    swaps it per invocation; a handler bound to an old stream would write to a closed one)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass


class _MaskingFormatter(logging.Formatter):
    """Every log line rec prints passes through :func:`cassettes._secret_shapes.mask` (a tool's
    URL with ``apikey=…`` in a capture warning, a key echoed in an upstream's error)."""

    def format(self, record: logging.LogRecord) -> str:
        from cassettes._secret_shapes import (
            mask,  # imported when a line is logged: `rec --help` stays light
        )

        return mask(super().format(record))


def _setup_logging(quiet: bool) -> None:
    """Send rec's log records to stderr for the duration of the current command."""
    handler = _StderrHandler()
    handler.setFormatter(_MaskingFormatter("rec: %(message)s"))
    saved = []
    for name in ("cassettes", "evalfiles", "loopback", "recorder", "replayer"):
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.level, logger.propagate))
        logger.handlers[:] = [handler]
        logger.setLevel(logging.WARNING if quiet else logging.INFO)
        logger.propagate = False

    def restore() -> None:
        for logger, handlers, level, propagate in saved:
            logger.handlers[:] = handlers
            logger.setLevel(level)
            logger.propagate = propagate

    click.get_current_context().call_on_close(restore)


_COMMAND_MODULES = {
    "check": "rec._check",
    "import": "rec._import",
    "merge": "rec._merge",
    "replay": "rec._replay",
    "score": "rec._score",
    "show": "rec._show",
    "standin": "rec._standin_command",
}
"""The commands defined in modules of their own: name -> the module, whose click command
``NAME_command`` it is."""


class _Commands(click.Group):
    """rec's commands: those defined here, and each of :data:`_COMMAND_MODULES`, imported
    when it is looked up (to run it, or for ``rec --help``). A module that fails to import
    fails the command with its error; no command is skipped."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMAND_MODULES:
            module = importlib.import_module(_COMMAND_MODULES[cmd_name])
            self.add_command(getattr(module, f"{cmd_name}_command"), cmd_name)
        return self.commands.get(cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.version_option(__version__, prog_name="rec", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """rec: record an agent's model traffic, turn it into ADK eval cases, replay them in CI."""
    ctx.obj = {"debug": debug}


def _default_name() -> str:
    import datetime as dt

    return "session-" + dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def _new_exchanges(result: FinalizeResult) -> str:
    """The new exchanges as the proxy echoed them (#0, #1, ...), then the tools' own calls."""
    tools = result.new_tool_exchanges
    proxied = f"{result.new_exchanges - tools} new exchanges"
    if not tools:
        return proxied
    return f"{proxied} + {tools} tool call(s) captured in the agent's process"


def _render_finalize(result: FinalizeResult) -> None:
    verb = "recovered" if result.recovered else "wrote"
    if result.empty:
        why = (
            "every exchange held a credential"
            if result.refused_exchanges
            else "no model call reached the proxy"
        )
        click.echo(
            f"rec: nothing was recorded ({why}), so no cassette "
            f"and no eval set were written to {result.cassette_path.parent}",
            err=True,
        )
    elif result.unchanged:
        click.echo(
            f"rec: {result.cassette_path} was complete already ({result.exchanges} exchanges); "
            "left as it is",
            err=True,
        )
    else:
        click.echo(
            f"rec: {verb} {result.cassette_path} ({_new_exchanges(result)}, "
            f"{result.exchanges} in all"
            + (f"; {result.live_sessions} Live session(s)" if result.live_sessions else "")
            + ")",
            err=True,
        )
    if result.lost_exchanges:
        click.echo(
            f"rec: {result.lost_exchanges} exchange(s) were answered but NOT recorded: "
            f"{result.lost_reason}",
            err=True,
        )
    if result.refused_exchanges:
        click.echo(
            f"rec: {result.refused_exchanges} exchange(s) were answered but left out of the "
            "recording because they held a credential; each is named above with the "
            "redaction rule that removes it",
            err=True,
        )
    if result.torn_lines:
        click.echo(f"rec: skipped {result.torn_lines} incomplete journal line(s)", err=True)
    if result.evalset_path is not None:
        click.echo(f"rec: wrote {result.evalset_path}", err=True)


@cli.command(
    # Options are rec's only before the command's first word; everything from there on
    # (its own --port, --name, ...) belongs to the command. `--` stays accepted.
    context_settings={"ignore_unknown_options": False, "allow_interspersed_args": False}
)
@recording_folder_option
@click.option("--name", default=None, help="Recording name (default: session-<time>).")
@click.option(
    "--port", default=0, type=click.IntRange(0, 65535), help="Port (default: a free one)."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on. Anything but loopback exposes your traffic.",
)
@upstream_option("Gemini API base URL to forward to")
@click.option(
    "--vertex-upstream",
    default=None,
    type=UrlParam(),
    help="Vertex AI base URL (default: https://LOCATION-aiplatform.googleapis.com).",
)
@click.option(
    "--mode",
    type=click.Choice(["record", "auto"]),  # RecordMode values (declaring imports nothing)
    default="record",
    show_default=True,
    help="record: forward everything; auto: replay what the cassette has, record the rest.",
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="In record mode, replace a recording of this name that already holds data "
    "(without it such a name is refused).",
)
@click.option("--redact-header", multiple=True, help="Extra header to drop (repeatable).")
@click.option(
    "--redact-path",
    multiple=True,
    help="Extra JSON path to redact in bodies, e.g. contents[*].parts[*].text (repeatable).",
)
@click.option("--app-name", default=None, help="app_name for the EvalSet's session_input.")
@click.option("--no-evalset", is_flag=True, help="Write only the cassette.")
@click.option(
    "--no-adk-plugin",
    is_flag=True,
    help="Don't attach rec's ADK capture plugin to `adk web`/`adk api_server` (the EvalSet "
    "then comes from the traffic alone).",
)
@click.option(
    "--no-instrument",
    is_flag=True,
    help="Don't put rec's sitecustomize on the command's PYTHONPATH (no capture plugin on "
    "scripts' ADK Runners, no project/location for Vertex AI clients configured from the "
    "environment). REC_NO_INSTRUMENT=1 does the same.",
)
@match_rules_option
@quiet_option
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def start(
    out_dir: Path,
    name: str | None,
    port: int,
    host: str,
    upstream: str | None,
    vertex_upstream: str | None,
    mode: str,
    overwrite: bool,
    redact_header: Sequence[str],
    redact_path: Sequence[str],
    app_name: str | None,
    no_evalset: bool,
    no_adk_plugin: bool,
    no_instrument: bool,
    ignore: Sequence[str],
    live_audio: str,
    quiet: bool,
    command: Sequence[str],
) -> None:
    """Record model traffic through a loopback proxy.

    With `COMMAND ARGS...` (after rec's options, `--` optional) rec runs the command with
    GOOGLE_GEMINI_BASE_URL and GOOGLE_VERTEX_BASE_URL pointing at the proxy and rec's
    sitecustomize on its PYTHONPATH (every ADK Runner gets the capture plugin; see
    --no-instrument), finishes when it exits and exits with its status. Options after the
    command's first word are the command's. Without a command it prints the lines to export
    and records until Ctrl-C or `rec stop --out DIR`.
    """
    from cassettes._record_mode import RecordMode
    from cassettes._redaction import RedactionRules
    from recorder._adk_eval_command import adk_eval_run
    from recorder._foreground import run_foreground
    from recorder._traffic import DEFAULT_UPSTREAM, Upstreams
    from replayer._auto_mode import recorder_for

    _setup_logging(quiet)
    upstream = upstream or DEFAULT_UPSTREAM
    auto = RecordMode(mode) is RecordMode.AUTO
    recorder = recorder_for(
        mode,
        out_dir,
        name=name or _default_name(),
        rules=build_match_rules(ignore, live_audio) if auto else None,
        upstreams=Upstreams(gemini=upstream, vertex=vertex_upstream),
        redaction=RedactionRules(headers=frozenset(redact_header), json_paths=tuple(redact_path)),
        host=host,
        port=port,
        write_evalset=not no_evalset,
        app_name=app_name,
        overwrite=overwrite,
        worker_at_start=True,
        adk_eval=adk_eval_run(command),
    )
    notes: list[str] = []  # said once the recorder runs: a folder it cannot use comes first
    launch, env = _command_launch(
        recorder, command, notes, adk_plugin=not no_adk_plugin, instrument=not no_instrument
    )
    if launch.attached and not quiet:
        click.echo("rec: attached rec's ADK capture plugin (--no-adk-plugin to skip)", err=True)

    def ready(url: str) -> None:
        _announce(recorder, url, mode, notes, quiet=quiet)
        if not command:
            _print_exports(url, out_dir, quiet=quiet)

    outcome = run_foreground(recorder, command=launch.command, env=env, on_ready=ready)
    atexit.register(_exit_without_collecting)
    _render_finalize(outcome.result)
    if outcome.exit_code:
        sys.exit(outcome.exit_code)
    if outcome.result.lost_exchanges:
        sys.exit(1)


def _exit_without_collecting() -> None:
    """At the exit of a process that recorded: the interpreter's last garbage collections
    are skipped (every object it still holds is frozen out of their reach). Everything is
    written and closed by then, and the memory goes back with the process; walking a
    recorder's heap once more would cost 0.1-0.2 s of CPU after 6,000 exchanges
    (bench/bench_stop.py)."""
    gc.disable()
    gc.freeze()


def _command_launch(
    recorder: Recorder,
    command: Sequence[str],
    notes: list[str],
    *,
    adk_plugin: bool,
    instrument: bool,
) -> tuple[AdkLaunch, dict[str, str]]:
    """The command to run and its environment: rec's ADK capture plugin attached to an
    ``adk`` command, and rec's sitecustomize instrumenting its Pythons (said in ``notes``)."""
    from recorder._adk_launch import AdkLaunch, with_adk_capture
    from recorder._instrumentation import instrumented_environment

    launch = AdkLaunch(list(command))
    if command and adk_plugin:
        launch = with_adk_capture(command, capture=recorder.paths.capture)
    env = dict(launch.env)
    if command and instrument:
        capture = recorder.paths.capture if adk_plugin else None
        added = instrumented_environment(os.environ, capture=capture)
        env.update(added)
        if added:
            what = "ADK Runners get rec's capture plugin, " if capture is not None else ""
            notes.append(
                f"rec: instrumenting Python in the command ({what}Vertex AI clients their "
                "project and location; --no-instrument to skip)"
            )
    return launch, env


def _announce(recorder: Recorder, url: str, mode: str, notes: list[str], *, quiet: bool) -> None:
    """Once the proxy listens: the recordings it recovered, and (unless quiet) the notes,
    where it records and each upstream it forwards to."""
    for result in recorder.recovered:
        _render_finalize(result)
    if quiet:
        return
    for note in notes:
        click.echo(note, err=True)
    click.echo(f"rec: recording to {recorder.paths.cassette} ({mode} mode)", err=True)
    for mount, where in recorder.upstreams.routes():
        click.echo(f"rec: proxy {url}{mount} -> {where}", err=True)


def _print_exports(url: str, out_dir: Path, *, quiet: bool) -> None:
    """Without a command: the lines to export in the shell that runs the agent."""
    _echo_exports(url)
    if not quiet:
        click.echo(f"rec: stop with Ctrl-C or `rec stop --out {out_dir}`", err=True)


@cli.command()
@recording_folder_option
@quiet_option
def stop(out_dir: Path, quiet: bool) -> None:
    """Stop the recorder(s) on a folder, or recover one that crashed."""
    from recorder._control import stop_recorders

    _setup_logging(quiet)
    reports = stop_recorders(out_dir)
    for report in reports:
        if report.stopped_pid is not None:
            click.echo(f"rec: stopped {report.name!r} (pid {report.stopped_pid})", err=True)
        if report.result is not None:
            _render_finalize(report.result)
    if any(report.failure is not None for report in reports):
        sys.exit(1)  # each failure was said above


@cli.command()
@recording_folder_option
def status(out_dir: Path) -> None:
    """Show the recorders on a folder: URL, exchanges recorded, streams in flight."""
    from recorder._control import recorder_statuses

    statuses = recorder_statuses(out_dir)
    if not statuses:
        click.echo(f"rec: no recorder on {out_dir}")
        return
    for item in statuses:
        state = item.state
        if item.running:
            counters = item.counters
            click.echo(
                f"{state.name}: recording at {state.url} (pid {state.pid}, {state.mode} mode), "
                f"{counters.get('recorded', item.journal_exchanges)} exchanges recorded, "
                f"{counters.get('streams_in_flight', 0)} streams in flight"
            )
        else:
            click.echo(
                f"{state.name}: not running (pid {state.pid} is gone); "
                f"{item.journal_exchanges} exchanges in its journal; "
                f"`rec stop --out {out_dir}` recovers them"
            )


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--port", default=0, type=click.IntRange(0, 65535), help="Port (default: a free one)."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--realtime", is_flag=True, help="Pace streamed events as they were recorded.")
@match_rules_option
@quiet_option
def serve(
    paths: Sequence[Path],
    port: int,
    host: str,
    realtime: bool,
    ignore: Sequence[str],
    live_audio: str,
    quiet: bool,
) -> None:
    """Serve recordings (cassette files or folders) to any process, replay only."""
    _setup_logging(quiet)
    from replayer._serve import serve_forever

    def ready(url: str, count: int) -> None:
        if not quiet:
            click.echo(f"rec: serving {count} cassette(s) at {url} (replay only)", err=True)
        _echo_exports(url)

    summary = serve_forever(
        paths,
        rules=build_match_rules(ignore, live_audio),
        host=host,
        port=port,
        realtime=realtime,
        on_ready=ready,
    )
    click.echo(
        f"rec: served {summary.served} request(s) and {summary.live_sessions} Live session(s), "
        f"{summary.misses} miss(es)",
        err=True,
    )


def _command_path(args: Sequence[str]) -> str:
    """``rec replay`` for ``--debug replay ...``: rec and the command's name, as typed."""
    names = {*cli.commands, *_COMMAND_MODULES}
    named = next((a for a in args if a in names), None)
    return f"rec {named}" if named else "rec"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; the only place exceptions become exit statuses."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        returned = cli.main(args=args, prog_name="rec", standalone_mode=False)
    except (click.exceptions.Abort, click.exceptions.ClickException, click.exceptions.Exit) as exc:
        return _click_status(exc)
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    except OSError as exc:
        return _disk_failure(exc, debug=debug)
    except Exception as exc:
        status = _rec_failure(exc, args, debug=debug)
        if status is None:
            raise
        return status
    # With standalone_mode=False click returns ctx.exit(n)'s n instead of raising.
    return returned if isinstance(returned, int) else 0


def _click_status(
    exc: click.exceptions.Abort | click.ClickException | click.exceptions.Exit,
) -> int:
    """The exit status of click's own ending (Ctrl-C, a usage error, ``ctx.exit``), said."""
    if isinstance(exc, click.exceptions.Abort):
        click.echo("Aborted.", err=True)
        return 130
    if isinstance(exc, click.UsageError):
        command = exc.ctx.command_path if exc.ctx is not None else "rec"
        click.echo(f"UsageError: {exc.format_message()} See `{command} --help`.", err=True)
        return 2
    if isinstance(exc, click.ClickException):
        exc.show()
        return exc.exit_code
    return int(exc.exit_code)


def _disk_failure(exc: OSError, *, debug: bool) -> int:
    """A disk that fills up (or fails) while an output is written: the paths were checked
    writable before the run, so this is the disk, said in one line."""
    if debug:
        traceback.print_exc()
    where = f"{exc.filename}: " if exc.filename else ""
    click.echo(
        f"OSError: {where}could not write ({exc.strerror or exc}). Free some space, or "
        "write to another place",
        err=True,
    )
    return 2


def _rec_failure(exc: Exception, args: Sequence[str], *, debug: bool) -> int | None:
    """The exit status of a missing extra or a ``RecError`` (said), or None: not rec's."""
    # Imported here: a command that raised a RecError has loaded cassettes already.
    from cassettes._errors import InputError, RecError
    from cassettes._extras import missing_extra

    needs = missing_extra(exc, command=_command_path(args))
    if needs is not None:
        if debug:
            traceback.print_exc()
        click.echo(needs, err=True)
        return 2
    if not isinstance(exc, RecError):
        return None
    if debug:
        traceback.print_exc()
    click.echo(f"{type(exc).__name__}: {exc}", err=True)
    return 2 if isinstance(exc, InputError) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
