"""Text layout for the terminal: the width to use, and wrapping that never splits a word.

Every console renderer (the eval report, ``rec show``) wraps through these functions, so
an identifier, a path or a ``key=value`` argument is never cut in the middle: text breaks
at spaces, a tool call breaks between its arguments, and a single word longer than the
line is left whole (it overflows rather than being torn apart).
"""

from __future__ import annotations

import os
import re
import sys
from bisect import bisect_right
from itertools import accumulate
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replayer._scoring.views import CallView

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
    head = indent if first is None else first
    if (
        text
        and len(head) + len(text) <= width
        and width > len(indent)
        and text.isascii()
        and _plain(text)
    ):
        return [head + text]  # one line, as the loop below makes it (most lines of a report)
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        head = first if first is not None and not lines else indent
        lines.extend(
            _wrap_paragraph(paragraph, max(width, len(head) + 1), head, indent) or [head.rstrip()]
        )
    return lines


_WHITESPACE = "\t\n\x0b\x0c\r "
_TO_SPACE = dict.fromkeys(map(ord, _WHITESPACE), ord(" "))
_WORD_SEPARATOR = re.compile(f"([{re.escape(_WHITESPACE)}]+)")
_NOT_PLAIN = re.compile(r"[\t\n\x0b-\r\x1c-\x1f]")
"""With two spaces in a row or a space at either end, what keeps a text off the quick path:
whitespace other than single spaces between words (``\x1c``-``\x1f`` count as whitespace
to ``str.strip``, as textwrap sees them)."""


def _plain(text: str) -> bool:
    """No whitespace but single spaces between words (one character class searched by the
    regex engine, the rest by ``str`` methods: an alternation would be tried at every
    position)."""
    return (
        _NOT_PLAIN.search(text) is None
        and "  " not in text
        and not text.startswith(" ")
        and not text.endswith(" ")
    )


def _wrap_paragraph(text: str, width: int, head: str, indent: str) -> list[str]:
    """``textwrap.wrap(text, width, initial_indent=head, subsequent_indent=indent,
    break_long_words=False, break_on_hyphens=False)``, line for line (``rec show`` wraps
    tens of thousands of lines). Words separated by single spaces break at the last space
    that fits, found with ``str.rfind``; any other text is cut into textwrap's chunks and
    filled as textwrap fills them, each line's chunks found by bisecting running lengths."""
    if text.isascii() and min(width - len(head), width - len(indent)) > 0:
        if _plain(text):
            return _wrap_words_at_spaces(text, width, head, indent)
    chunks = [c for c in _WORD_SEPARATOR.split(text.expandtabs().translate(_TO_SPACE)) if c]
    ends = list(accumulate(map(len, chunks), initial=0))
    lines: list[str] = []
    at, count = 0, len(chunks)
    while at < count:
        prefix = indent if lines else head
        room = width - len(prefix)
        if lines and chunks[at].strip() == "":  # a later line starts at its next word
            at += 1
            if at == count:
                break
        stop = max(bisect_right(ends, ends[at] + room, at) - 1, at)
        if stop == at and stop < count and len(chunks[stop]) > room:
            stop += 1  # a word longer than the line stands alone (never broken)
        end = stop
        if end > at and chunks[end - 1].strip() == "":
            end -= 1  # no trailing whitespace
        if end > at:
            lines.append(prefix + "".join(chunks[at:end]))
        at = stop
    return lines


def _wrap_words_at_spaces(text: str, width: int, head: str, indent: str) -> list[str]:
    lines: list[str] = []
    at, size = 0, len(text)
    while at < size:
        prefix = indent if lines else head
        end = at + width - len(prefix)
        if end >= size:
            end = size
        elif text[end] != " ":
            space = text.rfind(" ", at, end)
            if space < 0:  # a word longer than the line stands alone
                space = text.find(" ", end)
            end = size if space < 0 else space
        lines.append(prefix + text[at:end])
        at = end + 1
    return lines


def _value(value: Any) -> str:
    return repr(value)


def call_text(call: CallView) -> str:
    """``name(key=value, ...)`` for a tool call, values as Python literals."""
    args = ", ".join(f"{key}={_value(value)}" for key, value in (call.args or {}).items())
    return f"{call.name}({args})"


def wrap_call(call: CallView, width: int, *, indent: str = "  ") -> list[str]:
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
