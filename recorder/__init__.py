"""rec recorder: live capture. The forwarder, the crash-safe journal, the recording lifecycle
(``rec start`` / ``stop`` / ``status``), the ADK capture plugin and tools' own HTTP traffic."""

from __future__ import annotations

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
from .journal import Journal, JournalContents, read_journal
from .mcp_capture import (
    McpCapture,
    mcp_journal_path,
    mcp_toolsets,
    read_mcp_journal,
    session_manager_of,
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
from .tool_traffic import (
    INTERNAL_EXTENSION,
    capturing_tool_traffic,
    is_tool_request,
    read_tool_traffic,
    tool_exchange,
    tool_traffic_path,
)

__all__ = [
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
    "session_manager_of",
    "stop_recorders",
    "tool_exchange",
    "tool_traffic_path",
    "toolset_identity",
    "vertex_path",
    "with_adk_capture",
]
