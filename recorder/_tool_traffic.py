"""Capture the HTTP calls an agent's tools make themselves (httpx), beside the model traffic.

A tool such as ``convert_currency`` calls its own API with httpx; that call never goes
through rec's proxy. While a recording runs in the agent's process (``rec.record``,
or rec's ADK capture plugin inside ``adk web``), :func:`capturing_tool_traffic` puts a
respx router in front of httpx's clients for the duration of the block (respx's public
seam, removed on exit, and compatible with the user's own respx mocks): each tool request
is sent for real, its response read, and the exchange redacted, scanned for secrets and
appended to ``.rec/<name>.tools.jsonl`` (one JSON line per exchange, flushed). When the
recording is finalised those exchanges join the cassette with ``origin: "tool"``, and
``rec replay --live-tools`` serves them back through respx.

The same block records the tools' calls made with ``requests``, ``aiohttp`` and
``urllib`` (``recorder._traffic._tool_clients``), each seen as an httpx request so that one rule,
one redaction and one file serve them all.

Which requests are a tool's is the traffic floor's rule, which replay shares
(:func:`~recorder._traffic.is_tool_request`). A tool request that asks for an event
stream (``Accept: text/event-stream``) is sent but not recorded: its response is read
whole, and a stream may never end (replay then refuses it as unrecorded, and recording warns
once per origin); so is a WebSocket. An A2A stream (``message/stream``,
``SendStreamingMessage``) is recorded: the A2A server ends it when the task reaches a final
or input-required state.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

import httpx
import respx
from respx.models import AllMockedAssertionError

from cassettes._bodies import body_from_bytes
from cassettes._cassette import Exchange, RecordedRequest, RecordedResponse
from cassettes._errors import SecretFound
from cassettes._redaction import RedactionRules, credentials_in, redact_exchange
from cassettes._secret_scan import ensure_no_secrets
from cassettes._secret_shapes import (
    CredentialRegistry,
    current_credentials,
    known_credentials,
    mask,
)
from cassettes._timing import now_iso
from recorder._capture_files import append_json_line
from recorder._recording_state import CaptureFiles
from recorder._traffic import (
    INTERNAL_EXTENSION,
    accepts_event_stream,
    capturing_clients,
    decides,
    is_a2a_stream,
    is_mcp_transport,
    is_tool_request,
    is_websocket_upgrade,
    told_headers,
)

__all__ = [
    "capturing_tool_traffic",
    "sending_tool_calls",
    "tool_exchange",
    "tool_traffic_path",
]

log = logging.getLogger(__name__)

_DROP_HEADERS = frozenset(
    {"host", "content-length", "connection", "accept-encoding", "transfer-encoding"}
)
_DROP_RESPONSE_HEADERS = frozenset(
    {"content-length", "content-encoding", "transfer-encoding", "connection", "date"}
)


def tool_traffic_path(capture: str | Path) -> Path:
    """The tool-traffic file beside an ADK capture file (``X.adk.jsonl`` -> ``X.tools.jsonl``)."""
    return CaptureFiles(Path(capture)).tools


def _recorded(request: httpx.Request, sink: _ToolLog) -> bool:
    """Whether capture records ``request``: a tool's, and not a stream without an end.

    What is sent but not recorded is named in a warning (once per kind and origin in a
    recording): replay refuses it.
    """
    if not is_tool_request(request, sink.own):
        if is_mcp_transport(request) and not request.extensions.get(INTERNAL_EXTENSION):
            sink.warn_once("mcp", request, _MCP_NOT_RECORDED)
        return False
    if is_websocket_upgrade(request):
        sink.warn_once("websocket", request, _WEBSOCKET_NOT_RECORDED)
        return False
    if accepts_event_stream(request) and not is_a2a_stream(request):
        sink.warn_once("stream", request, _STREAM_NOT_RECORDED)
        return False
    return True


_MCP_NOT_RECORDED = (
    "rec: MCP traffic (%s) is recorded at the protocol level for ADK McpToolsets only; "
    "replay serves McpToolsets from the recording and refuses any other MCP client's "
    "requests unless run with --live-tools"
)
_WEBSOCKET_NOT_RECORDED = (
    "rec: the tool's WebSocket %s is sent but not recorded (rec records tools' HTTP "
    "calls); replay will refuse it"
)
_STREAM_NOT_RECORDED = (
    "rec: the tool's event stream %s is sent but not recorded (a stream is read whole "
    "when recorded, and this one may never end); replay will refuse it"
)


def tool_exchange(
    request: httpx.Request,
    response_status: int,
    response_headers: httpx.Headers,
    response_body: bytes,
    *,
    exchange_id: int,
    recorded_at: str,
    duration_ms: float,
    redaction: RedactionRules | None = None,
    known: Collection[str] = (),
) -> Exchange:
    """The redacted cassette exchange for one tool call (bodies already decoded).

    Credentials in headers and query are removed and every credential value the request
    carried, and each of ``known``, is replaced wherever it appears.
    """
    headers = {k.lower(): v for k, v in request.headers.items()}
    exchange = Exchange(
        id=exchange_id,
        recorded_at=recorded_at,
        duration_ms=round(duration_ms, 3),
        origin="tool",
        request=RecordedRequest(
            method=request.method,
            url=str(request.url),
            headers={k: v for k, v in sorted(headers.items()) if k not in _DROP_HEADERS},
            body=body_from_bytes(request.content, headers.get("content-type")),
        ),
        response=RecordedResponse(
            status=response_status,
            headers={
                k.lower(): v
                for k, v in sorted(response_headers.items())
                if k.lower() not in _DROP_RESPONSE_HEADERS
            },
            body=body_from_bytes(response_body, response_headers.get("content-type")),
        ),
    )
    # This request's credentials, and every one this process learnt before (another
    # tool's key, an MCP server's token).
    secrets = credentials_in(headers, str(request.url)) | known_credentials() | set(known)
    return redact_exchange(exchange, redaction or RedactionRules(), known_secrets=secrets)


class _ToolLog:
    """Appends tool exchanges to a JSON-lines file (thread-safe, flushed per line)."""

    def __init__(self, path: Path, own: Collection[str], redaction: RedactionRules | None) -> None:
        self.path = path
        self.own = tuple(own)
        self.redaction = redaction
        self.credentials: CredentialRegistry = current_credentials()
        """The recording's credentials: its tools' (learnt here), its MCP servers' and
        what its proxy learnt, told to that proxy with every request to it."""
        self.block: object = None
        """The ``capturing_clients`` block that captures for this log."""
        self.count = 0
        self.refused = 0
        self._lock = threading.Lock()
        self._warned: set[tuple[str, tuple[str, str, int | None]]] = set()

    def warn_once(self, what: str, request: httpx.Request, message: str) -> None:
        """Log ``message`` (``%s`` takes the request) once per kind of traffic and origin."""
        key = (what, (request.url.scheme, request.url.host, request.url.port))
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        log.warning(message, f"{request.method} {mask(str(request.url.copy_with(query=None)))}")

    def record(
        self, request: httpx.Request, response: httpx.Response, body: bytes, started: float
    ) -> None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.credentials.remember(credentials_in(headers, str(request.url)))
        with self._lock:
            exchange_id = self.count + self.refused
            try:
                exchange = tool_exchange(
                    request,
                    response.status_code,
                    response.headers,
                    body,
                    exchange_id=exchange_id,
                    recorded_at=now_iso(),
                    duration_ms=(time.perf_counter() - started) * 1000,
                    redaction=self.redaction,
                    known=self.credentials.values,
                )
                ensure_no_secrets(exchange, path=self.path)
            except SecretFound as exc:
                self.refused += 1
                log.error(
                    "rec: a tool call to %s was not recorded: %s", mask(str(request.url)), exc
                )
                return
            if append_json_line(self.path, exchange, what="tool traffic"):
                self.count += 1


class _CapturingRouter(respx.MockRouter):
    """A respx router that sends each tool request itself, records it, and passes the rest on.

    respx (``using="httpx"``) puts the router in front of every httpx client's transport
    while it is active, and removes it on exit: the seam is respx's public router, not a
    patch of httpx. A tool's request is re-sent, marked internal, through a fresh httpx
    client (which honours the environment's proxy and certificate settings); the router
    lets marked requests and rec's own pass through to the client's real transport.
    """

    def __init__(self, sink: _ToolLog) -> None:
        super().__init__(assert_all_called=False, assert_all_mocked=False, using="httpx")
        self.sink = sink
        self.route().pass_through()  # everything the handlers below do not take

    def _defer(self) -> None:
        """Leave the request to the router of the recording that decides for the caller
        (another recording running at the same time in another thread or task)."""
        if not decides(self.sink.block):
            raise AllMockedAssertionError("another recording's")

    def handler(self, request: httpx.Request) -> httpx.Response:
        self._defer()
        if not _recorded(request, self.sink):
            _tell_proxy(request, self.sink)
            return super().handler(request)  # passes through
        started = time.perf_counter()
        response, raw = _send(request)
        return _replayable(self.sink, request, response, raw, started)

    async def async_handler(self, request: httpx.Request) -> httpx.Response:
        self._defer()
        if not _recorded(request, self.sink):
            _tell_proxy(request, self.sink)
            return await super().async_handler(request)  # passes through
        started = time.perf_counter()
        await request.aread()
        async with httpx.AsyncClient() as client:
            response = await client.send(_internal_copy(request), stream=True)
            try:
                raw = b"".join([chunk async for chunk in response.aiter_raw()])
            finally:
                await response.aclose()
        return _replayable(self.sink, request, response, raw, started)


def _tell_proxy(request: httpx.Request, sink: _ToolLog) -> None:
    """Tell rec's own proxy the credentials the recording learnt (:func:`told_headers`)."""
    known = sink.credentials.values | known_credentials()
    request.headers.update(told_headers(request.url, sink.own, known))


def _send(request: httpx.Request) -> tuple[httpx.Response, bytes]:
    """Send a tool's request for real (marked rec's own); the response and its raw bytes."""
    request.read()
    with httpx.Client() as client:
        response = client.send(_internal_copy(request), stream=True)
        try:
            raw = b"".join(response.iter_raw())
        finally:
            response.close()
    return response, raw


def sending_tool_calls(
    path: str | Path, *, own: Collection[str], redaction: RedactionRules | None = None
) -> Callable[[httpx.Request], httpx.Response]:
    """A function that sends a tool's request for real and records the exchange into
    ``path`` (as :func:`capturing_tool_traffic` does), for a replay that answers the calls
    its recording holds and records the rest (``rec replay --mode auto``). The response
    it returns holds the decoded body."""
    sink = _ToolLog(Path(path), own, redaction)

    def send(request: httpx.Request) -> httpx.Response:
        started = time.perf_counter()
        response, raw = _send(request)
        body = _replayable(sink, request, response, raw, started).read()
        headers = {
            k: v for k, v in response.headers.items() if k.lower() not in _DROP_RESPONSE_HEADERS
        }
        return httpx.Response(response.status_code, headers=headers, content=body, request=request)

    return send


def _internal_copy(request: httpx.Request) -> httpx.Request:
    """The request to send for real: same method, URL, headers, body and timeout."""
    return httpx.Request(
        request.method,
        request.url,
        headers=request.headers,
        content=request.content,
        extensions={**request.extensions, INTERNAL_EXTENSION: True},
    )


def _replayable(
    sink: _ToolLog, request: httpx.Request, response: httpx.Response, raw: bytes, started: float
) -> httpx.Response:
    """Record the exchange and hand the caller an equivalent, already-read response."""
    decoded = httpx.Response(response.status_code, headers=response.headers, content=raw)
    try:
        body = decoded.read()  # decoded from gzip/deflate/br as the client would
    except httpx.DecodingError:
        body = raw
    sink.record(request, response, body, started)
    return httpx.Response(
        response.status_code,
        headers=response.headers,
        content=raw,
        extensions={k: v for k, v in response.extensions.items() if k != "network_stream"},
        request=request,
    )


@contextlib.contextmanager
def capturing_tool_traffic(
    path: str | Path, *, own: Collection[str], redaction: RedactionRules | None = None
) -> Iterator[Any]:
    """Record this process's tool HTTP calls into ``path`` while the block runs.

    httpx through respx; requests, aiohttp and urllib through ``recorder._traffic._tool_clients``.

    Args:
        path: the JSON-lines file (``.rec/<name>.tools.jsonl``); appended to.
        own: base URLs of rec's own proxy (never captured).
        redaction: extra redaction rules (credentials are always removed).

    Example::

        with capturing_tool_traffic(paths.tools, own=[recorder.url]):
            httpx.get("https://api.example.com/rates")   # sent, and recorded
    """
    sink = _ToolLog(Path(path), own, redaction)
    with (
        capturing_clients(
            lambda request: _recorded(request, sink),
            sink.record,
            own=sink.own,
            internal=INTERNAL_EXTENSION,
            known=lambda: sink.credentials.values | known_credentials(),
        ) as block,
        _CapturingRouter(sink),
    ):
        sink.block = block
        yield sink
