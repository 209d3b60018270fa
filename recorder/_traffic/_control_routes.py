"""rec's own endpoints on the loopback server (status, stop), apart from the traffic it serves.

Kept apart from :mod:`recorder._traffic._server` so that ``rec status`` and ``rec stop``, which only
talk to a running recorder, need no HTTP server library.
"""

from __future__ import annotations

CONTROL_PREFIX = "/__rec__/"
"""Paths under this prefix are rec's own control endpoints (status, stop), never forwarded."""

CONTROL_TOKEN_HEADER = "x-rec-control-token"
"""The header that carries a recorder's control token (see ``RecorderState``)."""
