"""Text layout for the terminal: the width to use, and wrapping that never splits a word.

Every console renderer (the eval report, ``rec show``) wraps through these functions, so
an identifier, a path or a ``key=value`` argument is never cut in the middle: text breaks
at spaces, a tool call breaks between its arguments, and a single word longer than the
line is left whole (it overflows rather than being torn apart).
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replayer._scoring.plain_evalset import Call

__all__ = [
    "PIPE_WIDTH",
    "call_text",
    "fit_line",
    "terminal_width",
    "wrap_call",
    "wrap_words",
]

PIPE_WIDTH = 100
"""Width of wrapped text (tables, reasons) when output goes to a file, a pipe or a CI log."""


def terminal_width() -> int | None:
    """The terminal's width in columns (``COLUMNS`` wins), or None when stdout is no terminal.

    With no terminal nothing wraps lines for the reader, so one-line items (a case) are
    not cut; wrapped text then uses :data:`PIPE_WIDTH`.
    """
    if os.environ.get("COLUMNS", "").isdigit() or sys.stdout.isatty():
        import shutil  # with its compression modules: only on a terminal

        return max(20, shutil.get_terminal_size((80, 24)).columns)
    return None


def wrap_words(text: str, width: int, *, indent: str = "", first: str | None = None) -> list[str]:
    """``text`` wrapped to ``width`` at spaces only, paragraph by paragraph.

    ``first`` prefixes the first line (default ``indent``), ``indent`` every other line.
    """
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        head = first if first is not None and not lines else indent
        lines.extend(
            textwrap.wrap(
                paragraph,
                max(width, len(head) + 1),
                initial_indent=head,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
            or [head.rstrip()]
        )
    return lines


def _value(value: Any) -> str:
    return repr(value)


def call_text(call: Call) -> str:
    """``name(key=value, ...)`` for a tool call, values as Python literals."""
    args = ", ".join(f"{key}={_value(value)}" for key, value in (call.args or {}).items())
    return f"{call.name}({args})"


def wrap_call(call: Call, width: int, *, indent: str = "  ") -> list[str]:
    """A tool call on as few lines as fit ``width``, broken only between arguments.

    Continuation lines start with ``indent``. An argument longer than a line is wrapped
    at the spaces inside its value, never inside its key.
    """
    whole = call_text(call)
    if len(whole) <= width or not call.args:
        return [whole]
    items = list((call.args or {}).items())
    pieces = [
        f"{key}={_value(value)}" + ("," if i < len(items) - 1 else ")")
        for i, (key, value) in enumerate(items)
    ]
    lines = [f"{call.name}("]
    for piece in pieces:
        current = lines[-1]
        joined = current + ("" if current.endswith("(") else " ") + piece
        if len(joined) <= width:
            lines[-1] = joined
        elif len(indent + piece) <= width:
            lines.append(indent + piece)
        else:
            lines.extend(wrap_words(piece, width, indent=indent + "  ", first=indent))
    return lines


def fit_line(head: str, items: list[str], width: int, *, separator: str = ", ") -> str:
    """``head`` followed by as many ``items`` as fit in ``width``, then ``...`` for the rest."""
    line = head
    for index, item in enumerate(items):
        candidate = line + (separator if index else "") + item
        rest = index < len(items) - 1
        if len(candidate) + (len(separator) + 3 if rest else 0) <= width:
            line = candidate
            continue
        return line + (separator if index else "") + "..."
    return line
