"""The traffic floor: what recording, replay and ``auto`` mode all stand on.

The loopback server and its handler seam (``ProxyServer``, ``Handler``), the event loop and
task helpers it runs on, where model traffic may go (``Upstreams`` and the Vertex AI and
gateway-mode rules), the lenient upstream connector and prompt ACKs on its sockets,
pointing a process's model clients at a proxy (environment and explicit Vertex AI
clients), the seams in tools' own HTTP clients and the rule for which request is a tool's,
the MCP toolsets of an agent tree, and the compatibility shims for google-genai,
google-adk and aiohttp internals.

This package is the floor's one door: the recorder's other modules and the replayer import
these names from here, never from the modules below (an import-linter contract pins it).
``_ROOMS`` below is the one list of what each room hands on: a room whose names all pass
through this door declares no ``__all__`` of its own (one that also serves its sibling
rooms lists those names too).
The floor imports nothing of the recorder above it. Names are imported on first use, so
rec's sitecustomize, which reaches one shim at interpreter start, loads no server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cassettes._lazy_names import lazy_names

if TYPE_CHECKING:
    from recorder._traffic._client_env import (
        child_environment,
        pointing_clients_at,
        provider_base_urls,
    )
    from recorder._traffic._clock_patch import CASE_CLOCK, clock_patched
    from recorder._traffic._compat import (
        AdkChanged,
        caller_frame,
        genai_request_body,
        install_live_reach,
        module_generators,
        session_manager_of,
    )
    from recorder._traffic._control_routes import CONTROL_PREFIX, CONTROL_TOKEN_HEADER
    from recorder._traffic._event_loop import run_server
    from recorder._traffic._lenient_http import lenient_connector
    from recorder._traffic._mcp_toolsets import mcp_toolsets, toolset_identity
    from recorder._traffic._prompt_acks import acknowledge_promptly
    from recorder._traffic._reader_callbacks import ReaderCallbacks
    from recorder._traffic._reads import (
        ReadSession,
        RecordingReads,
        begin_invocation,
        end_invocation,
        enter_reader,
        enter_tool,
        in_tool,
        leave_tool,
        local_zone,
        reads_patched,
    )
    from recorder._traffic._server import (
        Handler,
        IncomingRequest,
        ProxyServer,
        ResponseWriter,
        port_refused,
    )
    from recorder._traffic._shared_patch import SharedPatch
    from recorder._traffic._tasks import running_in_thread, spawn
    from recorder._traffic._tool_clients import (
        capturing_clients,
        decides,
        mark_internal,
        serving_clients,
        told_headers,
    )
    from recorder._traffic._tool_requests import (
        INTERNAL_EXTENSION,
        accepts_event_stream,
        is_a2a_stream,
        is_mcp_transport,
        is_own,
        is_tool_request,
        is_websocket_upgrade,
    )
    from recorder._traffic._upstreams import (
        DEFAULT_UPSTREAM,
        Upstreams,
        VertexPath,
        gateway_mode_refusal,
        is_vertex_live,
        setup_location,
        vertex_path,
    )

_ROOMS = {
    "_clock_patch": ("CASE_CLOCK", "clock_patched"),
    "_client_env": ("child_environment", "pointing_clients_at", "provider_base_urls"),
    "_compat": (
        "AdkChanged",
        "caller_frame",
        "genai_request_body",
        "install_live_reach",
        "module_generators",
        "session_manager_of",
    ),
    "_control_routes": ("CONTROL_PREFIX", "CONTROL_TOKEN_HEADER"),
    "_event_loop": ("run_server",),
    "_lenient_http": ("lenient_connector",),
    "_mcp_toolsets": ("mcp_toolsets", "toolset_identity"),
    "_prompt_acks": ("acknowledge_promptly",),
    "_reader_callbacks": ("ReaderCallbacks",),
    "_reads": (
        "ReadSession",
        "RecordingReads",
        "begin_invocation",
        "end_invocation",
        "enter_reader",
        "enter_tool",
        "in_tool",
        "leave_tool",
        "local_zone",
        "reads_patched",
    ),
    "_server": ("Handler", "IncomingRequest", "ProxyServer", "ResponseWriter", "port_refused"),
    "_shared_patch": ("SharedPatch",),
    "_tasks": ("running_in_thread", "spawn"),
    "_tool_clients": (
        "capturing_clients",
        "decides",
        "mark_internal",
        "serving_clients",
        "told_headers",
    ),
    "_tool_requests": (
        "INTERNAL_EXTENSION",
        "accepts_event_stream",
        "is_a2a_stream",
        "is_mcp_transport",
        "is_own",
        "is_tool_request",
        "is_websocket_upgrade",
    ),
    "_upstreams": (
        "DEFAULT_UPSTREAM",
        "Upstreams",
        "VertexPath",
        "gateway_mode_refusal",
        "is_vertex_live",
        "setup_location",
        "vertex_path",
    ),
}
_WHERE = {name: f"{__name__}.{room}" for room, names in _ROOMS.items() for name in names}

__all__ = [
    "AdkChanged",
    "CASE_CLOCK",
    "CONTROL_PREFIX",
    "CONTROL_TOKEN_HEADER",
    "DEFAULT_UPSTREAM",
    "Handler",
    "INTERNAL_EXTENSION",
    "IncomingRequest",
    "ProxyServer",
    "ReadSession",
    "ReaderCallbacks",
    "RecordingReads",
    "ResponseWriter",
    "SharedPatch",
    "Upstreams",
    "VertexPath",
    "accepts_event_stream",
    "acknowledge_promptly",
    "begin_invocation",
    "caller_frame",
    "capturing_clients",
    "child_environment",
    "clock_patched",
    "decides",
    "end_invocation",
    "enter_reader",
    "enter_tool",
    "gateway_mode_refusal",
    "genai_request_body",
    "in_tool",
    "install_live_reach",
    "is_a2a_stream",
    "is_mcp_transport",
    "is_own",
    "is_tool_request",
    "is_vertex_live",
    "is_websocket_upgrade",
    "leave_tool",
    "lenient_connector",
    "local_zone",
    "mark_internal",
    "mcp_toolsets",
    "module_generators",
    "pointing_clients_at",
    "port_refused",
    "provider_base_urls",
    "reads_patched",
    "run_server",
    "running_in_thread",
    "serving_clients",
    "session_manager_of",
    "setup_location",
    "spawn",
    "told_headers",
    "toolset_identity",
    "vertex_path",
]


__getattr__ = lazy_names(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
