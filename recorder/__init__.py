"""rec recorder: the loopback proxy, the crash-safe journal and the importers."""

from __future__ import annotations

from .api import record
from .client_env import child_environment, pointing_clients_at
from .evalset_writer import ADK_DEFAULT_CRITERIA, write_evalset_files, write_recording_evalset
from .forwarding import DEFAULT_UPSTREAM, Forwarder, Upstreams, google_error
from .importers import ImportHint, ImportResult, import_source
from .journal import Journal, JournalContents, read_journal
from .proxy import CONTROL_PREFIX, Handler, IncomingRequest, ProxyServer, ResponseWriter
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

__all__ = [
    "ADK_DEFAULT_CRITERIA",
    "CONTROL_PREFIX",
    "DEFAULT_UPSTREAM",
    "AutoHandlerFactory",
    "FinalizeResult",
    "Forwarder",
    "Handler",
    "ImportHint",
    "ImportResult",
    "IncomingRequest",
    "Journal",
    "JournalContents",
    "ProxyServer",
    "RecordHandler",
    "Recorder",
    "RecorderState",
    "RecordingPaths",
    "ResponseWriter",
    "Upstreams",
    "child_environment",
    "finalize_recording",
    "google_error",
    "import_source",
    "pid_alive",
    "pointing_clients_at",
    "read_journal",
    "read_states",
    "record",
    "recover_stale",
    "write_evalset_files",
    "write_recording_evalset",
]
