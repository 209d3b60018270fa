"""Options several commands share, so each is declared once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from rec._replay_flags import flag

if TYPE_CHECKING:
    from cassettes._matching import MatchRules

F = TypeVar("F", bound=Callable[..., Any])

NO_PROXY_EXPORT = (
    'export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" '
    'no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}"'
)
"""The line that keeps loopback off any HTTP proxy, adding to the user's own list."""

__all__ = [
    "NO_PROXY_EXPORT",
    "build_match_rules",
    "match_rules_option",
    "output_option",
    "quiet_option",
    "recording_folder_option",
    "replay_flag",
    "report_options",
    "upstream_option",
    "UrlParam",
]


def replay_flag(name: str) -> Callable[[F], F]:
    """The click option of ``rec replay``'s flag ``name`` (:mod:`rec._replay_flags`, which
    pytest's ``--rec-NAME`` twin is declared from too)."""
    spec = flag(name)
    option = f"--{spec.name}"
    text = spec.text("--")
    if spec.switch:
        return click.option(option, is_flag=True, help=text)
    kind: Any = None
    extra: dict[str, Any] = {}
    if spec.choices is not None:
        kind = click.Choice(spec.choices)
    elif spec.number:
        kind = click.IntRange(1)
    elif spec.path:
        kind = click.Path(dir_okay=not spec.file_only, path_type=Path)
    elif spec.url:
        kind = UrlParam()
    return click.option(
        option,
        type=kind,
        multiple=spec.multiple,
        metavar=spec.metavar if spec.choices is None else None,
        help=text,
        **extra,
    )


def match_rules_option(func: F) -> F:
    """``--ignore PATH``: request-body JSON paths left out of matching; ``--live-audio``:
    how a Live session's audio chunks match."""
    func = click.option(
        "--live-audio",
        type=click.Choice(["hash", "turns"]),
        default="hash",
        show_default=True,
        help="Match a Live session's audio chunks by the hash of their bytes, or by turn "
        "boundaries only (re-encoded audio is not byte-stable).",
    )(func)
    return replay_flag("ignore")(func)


def quiet_option(func: F) -> F:
    """``-q/--quiet``: only warnings and errors on stderr."""
    return click.option("-q", "--quiet", is_flag=True, help="Print only warnings and errors.")(func)


def build_match_rules(ignore: Sequence[str], live_audio: str = "hash") -> MatchRules:
    """The matching rules for ``--ignore`` and ``--live-audio`` values.

    Raises:
        InputError: a path is malformed (exit status 2).
    """
    from cassettes._matching import ignore_rules

    rules = ignore_rules(ignore, source="--ignore")
    return rules.model_copy(update={"live_audio": live_audio})


if TYPE_CHECKING:
    _StrParam = click.ParamType[str]  # generic from click 8.2; rec supports 8.1
else:
    _StrParam = click.ParamType


class UrlParam(_StrParam):
    """An ``http(s)://host[:port][/path]`` base URL, checked when the flags are parsed: a URL
    with no host, an empty or bad port (``http://127.0.0.1:``) or another scheme is a usage
    error (exit 2), not a failure at the first model call."""

    name = "URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from urllib.parse import urlsplit

        text = str(value).strip()
        try:
            parts = urlsplit(text)
            port = parts.port  # raises on a port that is not a number in 0-65535
        except ValueError as exc:
            self.fail(f"{text!r} is not a URL ({exc}).", param, ctx)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            self.fail(f"{text!r} is not an http(s)://HOST[:PORT] URL.", param, ctx)
        if text.split("//", 1)[1].split("/", 1)[0].endswith(":") or port == 0:
            self.fail(f"{text!r} has no port after the colon (http://HOST:PORT).", param, ctx)
        if parts.query or parts.fragment:
            self.fail(f"{text!r} has a query or fragment; give the base URL only.", param, ctx)
        return text


def upstream_option(what: str) -> Callable[[F], F]:
    """``--upstream URL``; unset means the Gemini API (``recorder.DEFAULT_UPSTREAM``, resolved
    when the command runs, so that declaring the option imports nothing)."""

    def decorate(func: F) -> F:
        return click.option(
            "--upstream",
            default=None,
            type=UrlParam(),
            help=f"{what} (default: Google's Gemini API).",
        )(func)

    return decorate


def output_option(name: str, *, folder: bool = False, **settings: Any) -> Callable[[F], F]:
    """An option naming a file (or with ``folder`` a folder) to write, checked writable
    before the run (:func:`writable_output`)."""
    kind = click.Path(file_okay=not folder, dir_okay=folder, path_type=Path)
    return click.option(name, type=kind, callback=writable_output, **settings)


def report_options(func: F) -> F:
    """``--junit FILE``, ``--results DIR``, ``--html FILE`` and ``--allow-not-evaluated``
    (replay and score)."""
    func = output_option(
        "--html", help="Write a self-contained HTML report (open it from a CI artifact)."
    )(func)
    func = replay_flag("allow-not-evaluated")(func)
    func = output_option(
        "--results",
        folder=True,
        help="Write EvalSetResult JSON into this folder, like ADK's eval history.",
    )(func)
    return output_option("--junit", help="Write JUnit XML.")(func)


def writable_output(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """Check an output path can be written before any work is done (one line, exit 2)."""
    if value is None:
        return None
    from cassettes._atomic_write import ensure_writable

    folder = isinstance(param.type, click.Path) and not param.type.file_okay
    return ensure_writable(value, flag=param.opts[0], folder=folder)


def recording_folder_option(func: F) -> F:
    """``--out DIR``: the recording folder (start, stop, status)."""
    return click.option(
        "--out",
        "out_dir",
        default="recordings",
        show_default=True,
        type=click.Path(file_okay=False, path_type=Path),
        help="Recording folder.",
    )(func)
