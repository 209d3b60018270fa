"""rec's live capture: the loopback server, the forwarder, the crash-safe journal, the
recording lifecycle (``rec start`` / ``stop`` / ``status``), the ADK capture plugin, the seams
that see tools' own traffic, and the importers that turn sessions into EvalSets.

Internal: every module is private. Users import from :mod:`rec`. The replayer reaches the
recorder through two doors: the traffic floor (:mod:`recorder._traffic`) and, for
``auto`` mode, the recorder, its wiring, its forwarder, the tools' traffic capture and (for
``--mode record``) the reads journal named here (an import-linter contract pins both).
Names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cassettes._lazy_names import lazy_names

if TYPE_CHECKING:
    from recorder._adk_eval_command import AdkEvalRun as AdkEvalRun
    from recorder._forwarding import Forwarder as Forwarder
    from recorder._reads_journal import write_reads as write_reads
    from recorder._recorder import AutoHandlerFactory as AutoHandlerFactory
    from recorder._recorder import Recorder as Recorder
    from recorder._recorder import RecorderOptions as RecorderOptions
    from recorder._recorder import WiredRecorder as WiredRecorder
    from recorder._recorder import Wiring as Wiring
    from recorder._tool_traffic import capturing_tool_traffic as capturing_tool_traffic
    from recorder._tool_traffic import sending_tool_calls as sending_tool_calls

_WHERE = {
    "AdkEvalRun": "recorder._adk_eval_command",
    "AutoHandlerFactory": "recorder._recorder",
    "Forwarder": "recorder._forwarding",
    "Recorder": "recorder._recorder",
    "RecorderOptions": "recorder._recorder",
    "WiredRecorder": "recorder._recorder",
    "Wiring": "recorder._recorder",
    "capturing_tool_traffic": "recorder._tool_traffic",
    "sending_tool_calls": "recorder._tool_traffic",
    "write_reads": "recorder._reads_journal",
}


__getattr__ = lazy_names(__name__, _WHERE)
