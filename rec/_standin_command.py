"""``rec standin``: the stand-in Gemini API on loopback, to try recording without a key.

It is :class:`rec.standin.StandinGemini` (the scripted fake model rec's own tests use) as a
command: it prints its URL and the lines to export, and answers until Ctrl-C or SIGTERM.
Its default model is :class:`rec.standin.RuleBrain` with no rules: it echoes the user's text
(``[agent #tag] You said: ...``) and, after tool responses, summarises them. ``--brain
module:function`` (imported from the current folder) gives it other rules.
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading
from typing import Any

import click

from rec._options import NO_PROXY_EXPORT

__all__ = ["standin_command"]


def _responder(spec: str | None) -> Any:
    """The brain ``--brain module:function`` returns, or a rule-less :class:`RuleBrain`."""
    from cassettes._errors import InputError
    from rec.standin.brain import RuleBrain

    if spec is None:
        return RuleBrain()
    module_name, _, function_name = spec.partition(":")
    fix = "Pass --brain module:function, the function returning a responder (e.g. a RuleBrain)"
    if not module_name or not function_name:
        raise InputError("is not of the form module:function", path=spec, fix=fix)
    sys.path.insert(0, "")  # the current folder, as `python -m` has it
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"cannot import {module_name!r}: {exc}", path=spec, fix=fix) from exc
    function = getattr(module, function_name, None)
    if not callable(function):
        raise InputError(f"{module_name} has no function {function_name!r}", path=spec, fix=fix)
    return function()


@click.command("standin")
@click.option(
    "--port", default=0, type=click.IntRange(0, 65535), help="Port (default: a free one)."
)
@click.option(
    "--brain",
    default=None,
    metavar="MODULE:FUNCTION",
    help="A function returning the responder that decides the replies (default: a RuleBrain "
    "without rules, which echoes the user's text).",
)
def standin_command(port: int, brain: str | None) -> None:
    """Run a stand-in model API on 127.0.0.1: try recording without a key.

    It speaks the Gemini API (generateContent, streaming, countTokens, embeddings), OpenAI's
    chat completions (POST .../chat/completions) and Anthropic's messages (POST
    .../v1/messages), with scripted replies. Point a program at it with the printed exports,
    or record through rec with `rec start --upstream URL -- COMMAND`. Ctrl-C stops it.

    The Live API (WebSocket) stand-in is a separate command: `python -m rec.standin.live
    --port 8765`.

    --brain rules (e.g. make the stand-in call a tool): see `rec standin` in the docs'
    command reference.
    """
    from rec.standin.replies import FAKE_API_KEY
    from rec.standin.server import StandinGemini

    server = StandinGemini(_responder(brain), bind_port=port)
    try:
        server.start()
    except OSError as exc:
        from recorder._traffic import port_refused

        raise port_refused(exc, "127.0.0.1", port) from None
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        click.echo(f"rec: stand-in Gemini API at {server.url} (scripted replies)", err=True)
        click.echo(f"export GOOGLE_GEMINI_BASE_URL={server.url}")
        click.echo(f"export GOOGLE_API_KEY={FAKE_API_KEY}")
        click.echo(NO_PROXY_EXPORT)
        click.echo(
            f"rec: to record through rec instead: rec start --upstream {server.url} -- COMMAND "
            "(with GOOGLE_API_KEY exported); stop with Ctrl-C",
            err=True,
        )
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    click.echo(f"rec: the stand-in answered {len(server.requests)} request(s)", err=True)
