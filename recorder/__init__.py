"""rec recorder: live capture. The forwarder, the crash-safe journal, the recording lifecycle
(``rec start`` / ``stop`` / ``status``), the ADK capture plugin and tools' own HTTP traffic.

Names are imported on first use (PEP 562): ``rec status`` and ``rec stop`` load only the
recording lifecycle, never the forwarder's HTTP client or the loopback server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._compat import AdkChanged, session_manager_of
    from .adk_launch import AdkLaunch, with_adk_capture
    from .api import record
    from .client_env import child_environment, pointing_clients_at
    from .control import RecorderStatus, StopReport, recorder_statuses, stop_recorders
    from .foreground import ForegroundOutcome, run_foreground
    from .forwarding import (
        DEFAULT_UPSTREAM,
        GATEWAY_MODE_MESSAGE,
        Forwarder,
        Upstreams,
        VertexPath,
        gateway_mode_path,
        google_error,
        vertex_path,
    )
    from .instrumentation import instrumented_environment
    from .journal import Journal, JournalContents, read_journal
    from .mcp_capture import (
        McpCapture,
        mcp_journal_path,
        mcp_toolsets,
        read_mcp_journal,
        toolset_identity,
    )
    from .recorder import AutoHandlerFactory, Recorder, RecordHandler
    from .recording import (
        FinalizeResult,
        RecorderState,
        RecordingPaths,
        finalize_recording,
        read_states,
        recorder_live,
        recover_stale,
    )
    from .tool_clients import serving_clients
    from .tool_traffic import (
        INTERNAL_EXTENSION,
        capturing_tool_traffic,
        is_tool_request,
        read_tool_traffic,
        tool_exchange,
        tool_traffic_path,
    )

_WHERE = {
    "AdkChanged": "._compat",
    "AdkLaunch": ".adk_launch",
    "AutoHandlerFactory": ".recorder",
    "DEFAULT_UPSTREAM": ".forwarding",
    "FinalizeResult": ".recording",
    "ForegroundOutcome": ".foreground",
    "Forwarder": ".forwarding",
    "GATEWAY_MODE_MESSAGE": ".forwarding",
    "INTERNAL_EXTENSION": ".tool_traffic",
    "Journal": ".journal",
    "JournalContents": ".journal",
    "McpCapture": ".mcp_capture",
    "RecordHandler": ".recorder",
    "Recorder": ".recorder",
    "RecorderState": ".recording",
    "RecorderStatus": ".control",
    "RecordingPaths": ".recording",
    "StopReport": ".control",
    "Upstreams": ".forwarding",
    "VertexPath": ".forwarding",
    "capturing_tool_traffic": ".tool_traffic",
    "child_environment": ".client_env",
    "finalize_recording": ".recording",
    "gateway_mode_path": ".forwarding",
    "google_error": ".forwarding",
    "instrumented_environment": ".instrumentation",
    "is_tool_request": ".tool_traffic",
    "mcp_journal_path": ".mcp_capture",
    "mcp_toolsets": ".mcp_capture",
    "pointing_clients_at": ".client_env",
    "read_journal": ".journal",
    "read_mcp_journal": ".mcp_capture",
    "read_states": ".recording",
    "read_tool_traffic": ".tool_traffic",
    "record": ".api",
    "recorder_live": ".recording",
    "recorder_statuses": ".control",
    "recover_stale": ".recording",
    "run_foreground": ".foreground",
    "serving_clients": ".tool_clients",
    "session_manager_of": "._compat",
    "stop_recorders": ".control",
    "tool_exchange": ".tool_traffic",
    "tool_traffic_path": ".tool_traffic",
    "toolset_identity": ".mcp_capture",
    "vertex_path": ".forwarding",
    "with_adk_capture": ".adk_launch",
}

__all__ = [
    "AdkChanged",
    "AdkLaunch",
    "AutoHandlerFactory",
    "DEFAULT_UPSTREAM",
    "FinalizeResult",
    "ForegroundOutcome",
    "Forwarder",
    "GATEWAY_MODE_MESSAGE",
    "INTERNAL_EXTENSION",
    "Journal",
    "JournalContents",
    "McpCapture",
    "RecordHandler",
    "Recorder",
    "RecorderState",
    "RecorderStatus",
    "RecordingPaths",
    "StopReport",
    "Upstreams",
    "VertexPath",
    "capturing_tool_traffic",
    "child_environment",
    "finalize_recording",
    "gateway_mode_path",
    "google_error",
    "instrumented_environment",
    "is_tool_request",
    "mcp_journal_path",
    "mcp_toolsets",
    "pointing_clients_at",
    "read_journal",
    "read_mcp_journal",
    "read_states",
    "read_tool_traffic",
    "record",
    "recorder_live",
    "recorder_statuses",
    "recover_stale",
    "run_foreground",
    "serving_clients",
    "session_manager_of",
    "stop_recorders",
    "tool_exchange",
    "tool_traffic_path",
    "toolset_identity",
    "vertex_path",
    "with_adk_capture",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(module, __name__), name)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
