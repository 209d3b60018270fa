"""rec's live capture: the loopback server, the forwarder, the crash-safe journal, the
recording lifecycle (``rec start`` / ``stop`` / ``status``), the ADK capture plugin, the seams
that see tools' own traffic, and the importers that turn sessions into EvalSets.

Internal: every module is private. Users import from :mod:`rec`. The replayer reaches the
recorder through two doors: the traffic floor (:mod:`recorder._traffic`) and, for
``auto`` mode, the recorder and its forwarder named here (an import-linter contract pins
both). Names are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recorder._forwarding import Forwarder
    from recorder._recorder import AutoHandlerFactory, Recorder, RecorderOptions

_WHERE = {
    "AutoHandlerFactory": "recorder._recorder",
    "Forwarder": "recorder._forwarding",
    "Recorder": "recorder._recorder",
    "RecorderOptions": "recorder._recorder",
}

__all__ = ["AutoHandlerFactory", "Forwarder", "Recorder", "RecorderOptions"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(module), name)
    return value
