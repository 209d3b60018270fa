"""Tell a tool's own HTTP call from the rest of a process's traffic.

Which requests are a tool's ("external"): every request except

- requests to rec's own proxy (the ``own`` base URLs: the recorder's URL, which is also
  what ``GOOGLE_GEMINI_BASE_URL``/``GOOGLE_VERTEX_BASE_URL`` point at),
- requests rec's forwarder sends upstream (they carry the :data:`INTERNAL_EXTENSION`
  httpx extension),
- MCP transport traffic (:func:`is_mcp_transport`: a JSON-RPC 2.0 body calling MCP's
  methods, an MCP session or protocol header, or an event stream opened at a known MCP
  toolset URL): rec records MCP at the protocol level (rec's MCP capture), and an MCP
  stream never ends, so reading it whole would hang the toolset, and
- credential traffic (Google's token and metadata endpoints): never a tool's data, and a
  token must not be written.

The rule is by origin (scheme, host, port), not "not loopback": a tool API served on
127.0.0.1 (a test double, a local service) is still the tool's API. JSON-RPC that is not
MCP's — an A2A call to a remote agent, another service's RPC — is a tool's request.
"""

from __future__ import annotations

import functools
from collections.abc import Collection

import httpx

from cassettes._a2a import A2A_REST_STREAMS
from cassettes._json_rpc import A2A_STREAMING_METHODS, json_rpc_kind, json_rpc_methods

INTERNAL_EXTENSION = "rec_internal"
"""httpx request extension marking rec's own requests (never a tool's)."""


def _origin(url: str | httpx.URL) -> tuple[str, str, int | None]:
    if isinstance(url, str):
        return _origin_of_text(url)
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, port


@functools.lru_cache(maxsize=1024)
def _origin_of_text(url: str) -> tuple[str, str, int | None]:
    """:func:`_origin` of a URL as text, parsed once: a process asks of a few URLs, each
    many times (every model call a replay answers asks of its URL and rec's own)."""
    return _origin(httpx.URL(url))


def is_own(url: str | httpx.URL, own: Collection[str]) -> bool:
    """Whether ``url`` has the origin (scheme, host, port) of one of rec's ``own`` bases."""
    origin = _origin(url)
    return any(_origin(base) == origin for base in own if base)


_CREDENTIAL_HOSTS = frozenset(
    {
        "oauth2.googleapis.com",
        "accounts.google.com",
        "sts.googleapis.com",
        "iamcredentials.googleapis.com",
        "metadata.google.internal",
        "169.254.169.254",
    }
)
"""Where google-auth gets and refreshes tokens: credential traffic, never a tool's."""

_MCP_HEADERS = ("mcp-session-id", "mcp-protocol-version")


def accepts_event_stream(request: httpx.Request) -> bool:
    """Whether ``request`` asks for a server-sent event stream."""
    return "text/event-stream" in request.headers.get("accept", "").lower()


def is_mcp_transport(request: httpx.Request, mcp_urls: Collection[str] = ()) -> bool:
    """Whether ``request`` is an MCP client's transport traffic (streamable HTTP or SSE).

    MCP's streamable HTTP posts JSON-RPC 2.0 messages and, once a session is open, sends
    ``Mcp-Session-Id`` / ``MCP-Protocol-Version``; the older SSE transport opens an event
    stream at the toolset's URL (``mcp_urls``: the known toolsets' URLs) and posts
    JSON-RPC to the endpoint the stream names. JSON-RPC is MCP's by its method names
    (``cassettes._json_rpc.json_rpc_kind``): an A2A call or another service's JSON-RPC is a
    tool's request like any other.
    """
    if any(name in request.headers for name in _MCP_HEADERS):
        return True
    url = str(request.url)
    if accepts_event_stream(request) and any(url.startswith(base) for base in mcp_urls if base):
        return True
    return json_rpc_kind(_content(request)) == "mcp"


def _content(request: httpx.Request) -> bytes:
    try:
        return request.content
    except httpx.RequestNotRead:
        return b""


def is_websocket_upgrade(request: httpx.Request) -> bool:
    """Whether ``request`` opens a WebSocket (``Upgrade: websocket``)."""
    return "websocket" in request.headers.get("upgrade", "").lower()


def is_a2a_stream(request: httpx.Request) -> bool:
    """Whether ``request`` is an A2A call answered with an event stream the server ends
    (``message/stream``, ``SendStreamingMessage``, a resubscription; over JSON-RPC, or
    ``POST …/message:stream`` and ``…/tasks/{id}:subscribe`` over HTTP+JSON)."""
    if request.url.path.endswith(A2A_REST_STREAMS):
        return True
    methods = json_rpc_methods(_content(request)) or []
    return bool(methods) and all(m in A2A_STREAMING_METHODS for m in methods)


def is_tool_request(
    request: httpx.Request, own: Collection[str], mcp_urls: Collection[str] = ()
) -> bool:
    """Whether ``request`` is a tool's own call (see the module docstring for the rule)."""
    if request.extensions.get(INTERNAL_EXTENSION):
        return False
    if request.url.host in _CREDENTIAL_HOSTS or is_mcp_transport(request, mcp_urls):
        return False
    return not is_own(request.url, own)
