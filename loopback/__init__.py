"""The loopback HTTP server that recording and replay both run on.

:class:`ProxyServer` binds 127.0.0.1, reads each request and hands it to a
:class:`Handler` (the recorder's forwarder, or the replayer's cassette server) together
with a :class:`ResponseWriter` that streams the answer back. It only moves bytes; what to
answer is the handler's decision.
"""

from __future__ import annotations

from .server import (
    CONTROL_PREFIX,
    CONTROL_TOKEN_HEADER,
    Handler,
    IncomingRequest,
    ProxyServer,
    ResponseWriter,
)
from .tasks import running_in_thread, spawn

__all__ = [
    "CONTROL_PREFIX",
    "CONTROL_TOKEN_HEADER",
    "Handler",
    "IncomingRequest",
    "ProxyServer",
    "ResponseWriter",
    "running_in_thread",
    "spawn",
]
