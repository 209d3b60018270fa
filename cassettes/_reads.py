"""The clock, randomness and ids an agent's code read while it was recorded.

A model request can depend on what the agent read: an instruction holding
``datetime.now().isoformat()``, a tool returning ``str(uuid.uuid4())``, a callback drawing
``random.random()`` into state. While an ADK agent is recorded, each such read by the
agent's own code (not by ADK, google-genai or the libraries under them) is kept, in order,
per *reader* within each invocation: the main flow of an agent between its callbacks
(``agent:NAME#0``, ``model:NAME#1``, ...) and each tool call (``tool:NAME#0``). Replay serves
the same values back in the same order to the same reader, so a tool that mock mode never
runs does not shift what the instruction reads.

The reads sit in the cassette's ``reads`` section (absent when nothing was read):

- ``clock``: a wall-clock read (``time.time``, ``time.time_ns``, ``datetime.now``,
  ``utcnow``, ``today``, ``time.localtime``, ...), as nanoseconds since the epoch;
- ``uuid4``: ``uuid.uuid4()``, as 32 hex digits;
- ``random``: ``random.random()`` and every draw built on it (``uniform``, ``gauss``, ...);
- ``bits``: ``getrandbits(k)`` and every draw built on it (``randint``, ``choice``,
  ``shuffle``, ``sample``; ``secrets.randbelow``, ``randbits``, ``choice``);
- ``bytes``: ``randbytes(n)`` and ``secrets.token_bytes``, ``token_hex``,
  ``token_urlsafe``, as hex.

Each invocation also keeps the local time zone it was recorded in (``zone``): a naive
``datetime.now()`` is local time, so replay reads it in the same zone.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "READS_FORMAT_VERSION",
    "InvocationReads",
    "Read",
    "ReadKind",
    "ReadsRecording",
]

READS_FORMAT_VERSION: Literal[1] = 1
"""Version of the ``reads`` section this rec writes and reads."""

ReadKind = Literal["clock", "uuid4", "random", "bits", "bytes"]
"""What was read (see the module's docstring)."""


class _Model(BaseModel):
    # Built on first use: a command that reads no such section (``rec show`` of a
    # recording without one) builds none of these validators.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Read(_Model):
    """One value the agent's code read."""

    kind: ReadKind
    value: int | float | str
    """Nanoseconds (``clock``), an int (``bits``), a float (``random``) or hex (``uuid4``,
    ``bytes``)."""


class InvocationReads(_Model):
    """What the agent's code read during one invocation (one user turn)."""

    invocation_id: str
    """ADK's invocation id: the EvalSet's ``invocation_id`` of the turn."""
    zone: str | None = None
    """The local time zone of the recording process (a ``TZ`` value), when known."""
    readers: dict[str, list[Read]] = Field(default_factory=dict)
    """Per reader (``agent:NAME#0``, ``model:NAME#1``, ``tool:NAME#0``), its reads in order."""

    def kinds(self) -> set[ReadKind]:
        """The kinds of value read in this invocation."""
        return {read.kind for reads in self.readers.values() for read in reads}


class ReadsRecording(_Model):
    """The cassette's ``reads`` section: the reads of each recorded invocation."""

    format_version: Literal[1] = READS_FORMAT_VERSION
    invocations: list[InvocationReads] = Field(default_factory=list)

    def by_invocation(self) -> dict[str, InvocationReads]:
        """The invocations by id (a later recording of the same id wins)."""
        return {invocation.invocation_id: invocation for invocation in self.invocations}
