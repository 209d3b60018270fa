"""The loopback HTTP server that recording and replay both run on.

:class:`ProxyServer` binds 127.0.0.1, reads each request and hands it to a
:class:`Handler` (the recorder's forwarder, or the replayer's cassette server) together
with a :class:`ResponseWriter` that streams the answer back. It only moves bytes; what to
answer is the handler's decision.

Names are imported on first use (PEP 562), so ``rec status`` and ``rec stop``, which need
only the control endpoints' names, never import the HTTP server library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .control import CONTROL_PREFIX, CONTROL_TOKEN_HEADER
    from .server import Handler, IncomingRequest, ProxyServer, ResponseWriter
    from .tasks import running_in_thread, spawn

_WHERE = {
    "CONTROL_PREFIX": ".control",
    "CONTROL_TOKEN_HEADER": ".control",
    "Handler": ".server",
    "IncomingRequest": ".server",
    "ProxyServer": ".server",
    "ResponseWriter": ".server",
    "running_in_thread": ".tasks",
    "spawn": ".tasks",
}

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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(module, __name__), name)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
