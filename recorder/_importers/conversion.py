"""What ``rec import`` converts a source to, before anything is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cassettes._cassette import Cassette
    from cassettes._evalset import EvalSet

__all__ = ["Conversion"]


@dataclass
class Conversion:
    """A source's EvalSet (and, for a trace, the cassette of its model calls).

    ``name`` is what the files are called unless ``--name`` says otherwise (the source's
    stem); ``skipped_sessions`` counts the sessions left out for holding no turn; ``notes``
    says what the import changed beyond a plain conversion; ``lacks`` names, one line each,
    what a trace lacks (the span and the setting to turn on).
    """

    evalset: EvalSet
    name: str
    cassette: Cassette | None = None
    skipped_sessions: int = 0
    notes: list[str] = field(default_factory=list)
    lacks: list[str] = field(default_factory=list)
