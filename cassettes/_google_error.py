"""The Google API error envelope: ``{"error": {"code", "message", "status"}}``.

Every error rec answers a client with (a miss, a refused or unreachable upstream, a
gateway-mode call, a failure inside rec) has this shape, which google-genai raises as
``errors.APIError`` with the message.
"""

from __future__ import annotations

from typing import Any

__all__ = ["google_error"]


def google_error(
    code: int, message: str, status: str, *, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The envelope for HTTP status ``code`` and the RPC ``status`` name (``NOT_FOUND``, ...),
    with ``details`` (``google.rpc`` messages) when given."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details is not None:
        error["details"] = details
    return {"error": error}
