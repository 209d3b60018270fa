"""Keep an upstream connection free of Nagle / delayed-ACK stalls.

A server that writes a stream's headers and its first event as two small writes with
Nagle's algorithm on holds the event until the headers are acknowledged, and a kept-alive
connection delays that ACK by up to 40 ms. ``TCP_QUICKACK`` acknowledges what has arrived
(the headers), so the first event follows at once; ``TCP_NODELAY`` keeps the proxy's own
writes from waiting either. Both are best effort (not every platform has them).
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any

import aiohttp


def acknowledge_promptly(response: aiohttp.ClientResponse) -> None:
    """``TCP_NODELAY`` and ``TCP_QUICKACK`` on the socket ``response`` arrives on."""
    connection = response.connection
    transport = connection.transport if connection is not None else None
    _no_delay(transport.get_extra_info("socket") if transport is not None else None)


def _no_delay(sock: Any) -> None:
    if sock is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if hasattr(socket, "TCP_QUICKACK"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
