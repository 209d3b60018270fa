"""rec recorder: the loopback proxy, the crash-safe journal and the importers."""

from __future__ import annotations

from .adk_launch import AdkLaunch, with_adk_capture
from .api import record
from .client_env import child_environment, pointing_clients_at
from .control import RecorderStatus, StopReport, recorder_statuses, stop_recorders
from .evalset_writer import ADK_DEFAULT_CRITERIA, write_evalset_files, write_recording_evalset
from .foreground import ForegroundOutcome, run_foreground
from .forwarding import (
    DEFAULT_UPSTREAM,
    GATEWAY_MODE_MESSAGE,
    Forwarder,
    Upstreams,
    gateway_mode_path,
    google_error,
)
from .importers import ImportHint, ImportResult, import_source
from .journal import Journal, JournalContents, read_journal
from .proxy import (
    CONTROL_PREFIX,
    Handler,
    IncomingRequest,
    ProxyServer,
    ResponseWriter,
)
from .recorder import AutoHandlerFactory, Recorder, RecordHandler
from .recording import (
    FinalizeResult,
    RecorderState,
    RecordingPaths,
    finalize_recording,
    pid_alive,
    read_states,
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
    "ADK_DEFAULT_CRITERIA",
    "AdkLaunch",
    "AutoHandlerFactory",
    "CONTROL_PREFIX",
    "DEFAULT_UPSTREAM",
    "FinalizeResult",
    "ForegroundOutcome",
    "Forwarder",
    "GATEWAY_MODE_MESSAGE",
    "Handler",
    "INTERNAL_EXTENSION",
    "ImportHint",
    "ImportResult",
    "IncomingRequest",
    "Journal",
    "JournalContents",
    "ProxyServer",
    "RecordHandler",
    "Recorder",
    "RecorderState",
    "RecorderStatus",
    "RecordingPaths",
    "ResponseWriter",
    "StopReport",
    "Upstreams",
    "capturing_tool_traffic",
    "child_environment",
    "finalize_recording",
    "gateway_mode_path",
    "google_error",
    "import_source",
    "is_tool_request",
    "pid_alive",
    "pointing_clients_at",
    "read_journal",
    "read_states",
    "read_tool_traffic",
    "record",
    "recorder_statuses",
    "recover_stale",
    "run_foreground",
    "stop_recorders",
    "tool_exchange",
    "tool_traffic_path",
    "with_adk_capture",
    "write_evalset_files",
    "write_recording_evalset",
]
