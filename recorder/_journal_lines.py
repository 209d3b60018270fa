"""Counting a journal's exchanges without reading them (for ``rec status``: no pydantic).

A large body's pieces (``recorder._journal.BodyChunk``) are a head line,
``{"body_chunk": ID, "length": N}``, then N raw bytes and a newline; every other line is
one exchange (or a chunked exchange's line, which is one too), but the header a journal
may open with (``recorder._journal_header``).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

__all__ = ["CHUNK_LINE", "HEADER_LINE", "exchange_lines"]

CHUNK_LINE = b'{"body_chunk":'
"""How a body piece's head line starts."""
HEADER_LINE = b'{"rec_journal":'
"""How a journal's header line starts."""


def exchange_lines(path: str | Path) -> int:
    """How many exchange lines a journal holds (a body's pieces are skipped unread)."""
    count = 0
    try:
        with open(path, "rb") as handle:
            while line := handle.readline():
                if line.startswith(CHUNK_LINE):
                    with contextlib.suppress(ValueError, TypeError, AttributeError):
                        length = json.loads(line).get("length")
                        if isinstance(length, int) and length >= 0:
                            handle.seek(length + 1, os.SEEK_CUR)
                elif line.strip() and not line.startswith(HEADER_LINE):
                    count += 1
    except FileNotFoundError:
        return 0
    return count
