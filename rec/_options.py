"""Options several commands share, so each is declared once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from cassettes import MatchRules

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["build_match_rules", "match_rules_option", "quiet_option"]


def match_rules_option(func: F) -> F:
    """``--ignore PATH``: request-body JSON paths left out of matching."""
    return click.option(
        "--ignore",
        multiple=True,
        metavar="JSON_PATH",
        help="Ignore this request-body path when matching, e.g. systemInstruction or "
        "generationConfig.temperature (repeatable).",
    )(func)


def quiet_option(func: F) -> F:
    """``-q/--quiet``: only warnings and errors on stderr."""
    return click.option("-q", "--quiet", is_flag=True, help="Print only warnings and errors.")(func)


def build_match_rules(ignore: Sequence[str]) -> MatchRules:
    """The matching rules for ``--ignore`` values."""
    return MatchRules(ignore_paths=tuple(ignore))
