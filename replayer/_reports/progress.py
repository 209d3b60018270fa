"""A one-line progress bar for long runs, drawn only on a terminal."""

from __future__ import annotations

import sys
from typing import IO

__all__ = ["ProgressBar"]


class ProgressBar:
    """A one-line progress bar on stderr, drawn only when that stream is a terminal.

    Example:
        >>> with ProgressBar(total=len(cases)) as bar:
        ...     for case in cases:
        ...         bar.advance()
    """

    def __init__(self, total: int, *, stream: IO[str] | None = None, width: int = 40) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())

    def advance(self, step: int = 1) -> None:
        """Count ``step`` more items and redraw."""
        self.done += step
        if self.enabled:
            filled = self.width * self.done // self.total
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r[{bar}] {self.done}/{self.total}")
            self.stream.flush()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled and self.done:  # a bar never drawn leaves no empty line
            self.stream.write("\n")
            self.stream.flush()
