"""The first line of the recorder's journal: which secret scan its exchanges passed.

The recorder scans every exchange, with the recording's known credentials too, before its
journal line is written (``recorder._forwarding``; a large body piece by piece in
``recorder._body_screen``). Finalisation need not glance at those exchanges again, but it
must for a journal that another rec wrote (an older one, or one with other rules) or that
was put together by hand. So the recorder's journal opens with a :class:`JournalHeader`
naming the rules it scanned with (:func:`scan_rules`: a digest of the modules that decide
what the scan finds), and finalisation trusts a journal's exchanges as scanned only when
its first line names the rules of the rec that finalises it. The header is the recorder's
word: a line edited into a journal that keeps it is not looked at again.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from cassettes import _redaction, _secret_scan, _secret_shapes, _secret_walk
from recorder import _body_screen

__all__ = ["JournalHeader", "journal_header", "scan_rules"]

_RULES = (_secret_shapes, _secret_walk, _secret_scan, _redaction, _body_screen)
"""The modules whose code decides what the recorder's scan finds: the shapes and names,
the walk, the scan and its glance, the redaction, the screen of a body written in pieces."""


class JournalHeader(BaseModel):
    """The journal's first line: ``{"rec_journal":1,"scan_rules":"…"}``."""

    model_config = ConfigDict(extra="forbid")

    rec_journal: Literal[1]
    """The header's own version."""
    scan_rules: str
    """:func:`scan_rules` of the rec that wrote the journal."""


@functools.cache
def scan_rules() -> str | None:
    """A digest of the secret scan's rules: the bytes of the modules in :data:`_RULES`
    (None when one cannot be read: no journal is then trusted as scanned)."""
    digest = hashlib.sha256()
    for module in _RULES:
        if module.__file__ is None:
            return None
        try:
            data = Path(module.__file__).read_bytes()
        except OSError:
            return None
        digest.update(b"%d:" % len(data))
        digest.update(data)
    return f"sha256:{digest.hexdigest()}"


def journal_header() -> JournalHeader | None:
    """The header of a journal this rec writes (None: :func:`scan_rules` is unknown)."""
    rules = scan_rules()
    return None if rules is None else JournalHeader(rec_journal=1, scan_rules=rules)
