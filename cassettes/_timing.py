"""Wall-clock timestamps as rec stores them (ISO 8601, UTC)."""

from __future__ import annotations

import datetime as dt

__all__ = ["now_iso"]


def now_iso() -> str:
    """The current UTC time in ISO 8601, e.g. ``2026-11-29T12:00:00.000000+00:00``."""
    return dt.datetime.now(dt.timezone.utc).isoformat()
