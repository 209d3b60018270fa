"""The record mode: how a run uses its recording (the README's "Record modes" table).

One enum for every place a mode is chosen: ``rec start --mode``, ``rec replay --mode``
(and its ``--live`` / ``--record-missing`` flags), ``rec.Recorder(mode=...)``,
``rec.ReplayOptions(mode=...)``, the pytest plugin's ``--rec-mode`` and marker, and
the ``REC_MODE`` environment variable read by ``rec.AgentEvaluator``. Code that acts
on a mode matches it exhaustively (``assert_never``), so a new mode cannot be forgotten.
"""

from __future__ import annotations

import enum

from cassettes._errors import InputError, did_you_mean

__all__ = ["RecordMode"]

_ALIASES = {"record-missing": "auto", "record_missing": "auto"}
"""Other accepted names: ``record-missing`` (``rec replay --record-missing``) is ``auto``."""


class RecordMode(str, enum.Enum):
    """How a run uses its recording.

    Example::

        RecordMode.parse(os.environ.get("REC_MODE", "replay"), source="REC_MODE")
    """

    REPLAY = "replay"
    """Serve the recording only; a request it does not hold fails closed, never goes live."""
    RECORD = "record"
    """Forward everything to the real API and write a new recording (replacing the old)."""
    AUTO = "auto"
    """Replay what is recorded, forward what is missing and add it to the recording."""
    LIVE = "live"
    """The real API; nothing is recorded or replayed."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The mode names users type, in the README's order."""
        return tuple(mode.value for mode in cls)

    @classmethod
    def parse(cls, value: str | RecordMode, *, source: str) -> RecordMode:
        """The mode named ``value`` (``record-missing`` is accepted for ``auto``).

        Args:
            value: what the user gave.
            source: where it came from, for the message (``REC_MODE``, ``--rec-mode``...).

        Raises:
            InputError: not a mode; the message lists the modes and the closest one.
        """
        if isinstance(value, RecordMode):
            return value
        text = str(value).strip().lower()
        try:
            return cls(_ALIASES.get(text, text))
        except ValueError:
            hint = did_you_mean(text, cls.names()).strip()
            raise InputError(
                f"unknown mode {value!r}",
                path=source,
                fix=f"{hint + ' ' if hint else ''}Use one of: {', '.join(cls.names())}",
            ) from None
