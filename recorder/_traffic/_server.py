"""The loopback HTTP server both recording and replay run on.

The server only moves bytes: it reads a request, hands it to a :class:`Handler`
(recording or replay) with a :class:`ResponseWriter`, and lets the handler stream the
response. It binds 127.0.0.1 unless another host is given explicitly, serves keep-alive
and concurrent requests (aiohttp), and cancels a handler whose client disconnected, which
in turn cancels its upstream request.

On loopback it answers only requests whose ``Host`` names the address it is bound to, so
a web page cannot reach it through DNS rebinding, and no route answers what a web page can
send cross-site (:func:`_browser_refusal`). Its control endpoints
(``/__rec__/status``, ``/__rec__/stop``) refuse browser requests (any ``Origin`` or
``Sec-Fetch-Site`` header) and, given a ``control_token``, requests that do not carry it
in ``X-Rec-Control-Token``.

A WebSocket handshake on a Gemini Live path (``BidiGenerateContent``) goes to the handler's
``handle_live(request)`` (recording: ``recorder._live_proxy``; replay:
``replayer._live_replay``); a handler without one refuses it with a 501 that says so.

Example::

    async with ProxyServer(handler) as proxy:
        print(proxy.url)            # http://127.0.0.1:54321

    with ProxyServer(handler).running_in_thread() as proxy:   # for sync callers
        ...
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import ipaddress
import itertools
import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from aiohttp import HttpVersion11, web

from cassettes._errors import InputError
from cassettes._google_error import google_error
from cassettes._live import is_live_path
from cassettes._secret_shapes import mask
from cassettes._timing import now_iso
from recorder._traffic._compat import hold_aiohttp_headers, large_body_requests
from recorder._traffic._control_routes import CONTROL_PREFIX, CONTROL_TOKEN_HEADER
from recorder._traffic._event_loop import loop_kind
from recorder._traffic._tasks import running_in_thread

log = logging.getLogger(__name__)

_MAX_BODY = 1 << 30
"""The largest request body the proxy reads (aiohttp's own default is 1 MiB)."""
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)


@dataclass(frozen=True)
class IncomingRequest:
    """A request as the client sent it to the proxy."""

    id: int
    """Arrival order within this server's lifetime (plus the handler's offset)."""
    method: str
    path_qs: str
    """Path and query string, e.g. ``/v1beta/models/m:streamGenerateContent?alt=sse``."""
    headers: Mapping[str, str]
    """Lower-cased header names."""
    body: bytes
    started: float
    """``time.perf_counter()`` at arrival, for offsets."""
    started_at: str
    """ISO 8601 wall-clock time at arrival."""

    def elapsed_ms(self) -> float:
        """Milliseconds since the request arrived."""
        return (time.perf_counter() - self.started) * 1000.0


class ResponseWriter:
    """Streams one response back to the client; the handler decides what to write."""

    def __init__(self, request: web.BaseRequest) -> None:
        self._request = request
        self._response: web.StreamResponse | None = None
        self.aborted = False

    @property
    def started(self) -> bool:
        """True once the status line and headers were sent."""
        return self._response is not None

    async def start(
        self,
        status: int,
        headers: Mapping[str, str],
        *,
        length: int | None = None,
        with_body: bool = False,
    ) -> None:
        """Send the status line and headers (hop-by-hop headers are dropped).

        With ``with_body`` they are held until the first :meth:`write` (or the end) and go
        in the same write: one segment on loopback, and the client wakes once for both.
        For an answer whose client reads it whole; a stream's headers leave at once.
        """
        response = web.StreamResponse(status=status)
        if with_body:
            hold_aiohttp_headers(response)
        for name, value in headers.items():
            if name.lower() not in _HOP_BY_HOP:
                response.headers[name] = value
        if length is not None:
            response.content_length = length
        else:
            response.enable_chunked_encoding()
        await response.prepare(self._request)
        self._response = response

    async def write(self, chunk: bytes) -> None:
        """Send a chunk now (no buffering)."""
        assert self._response is not None, "start() first"
        if chunk:
            await self._response.write(chunk)

    async def send(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """Send a whole response with a content-length: the status line, headers and body
        in one write (one segment on loopback; the client wakes once)."""
        response = web.Response(status=status, body=body)
        for name, value in headers.items():
            if name.lower() not in _HOP_BY_HOP:
                response.headers[name] = value
        await response.prepare(self._request)
        self._response = response
        await response.write_eof()

    async def send_error(self, envelope: dict[str, Any]) -> None:
        """Send a Google error envelope (:func:`cassettes._google_error.google_error`) with
        its code as the HTTP status."""
        body = json.dumps(envelope).encode()
        await self.send(int(envelope["error"]["code"]), {"content-type": "application/json"}, body)

    def abort(self) -> None:
        """Cut the connection mid-response (replays a stream that was cut when recorded)."""
        self.aborted = True
        transport = self._request.transport
        if transport is not None:
            transport.abort()

    def response(self) -> web.StreamResponse:
        """The response object aiohttp expects back from the handler."""
        if self._response is None:
            return web.Response(status=502, text="rec: handler wrote nothing")
        return self._response


class Handler(Protocol):
    """What the server calls for each forwarded request (recording or replay).

    Example::

        class Echo:
            async def handle(self, request, writer):
                await writer.send(200, {"content-type": "text/plain"}, request.body)
            def status(self):
                return {"mode": "echo"}
    """

    async def handle(self, request: IncomingRequest, writer: ResponseWriter) -> None:
        """Write the response for ``request``."""
        ...

    def status(self) -> dict[str, Any]:
        """Counters for ``GET /__rec__/status``."""
        ...


class ProxyServer:
    """An HTTP server on loopback with an explicit lifecycle.

    Args:
        handler: the recording or replay handler.
        host: interface to bind; 127.0.0.1 unless given explicitly.
        port: port to bind; 0 picks a free one.
        on_stop: called when a client posts to ``/__rec__/stop`` (``rec stop``).
        control_token: required in ``X-Rec-Control-Token`` by the control endpoints.
    """

    def __init__(
        self,
        handler: Handler,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        on_stop: Callable[[], None] | None = None,
        control_token: str | None = None,
    ) -> None:
        self.handler = handler
        self.host = host
        self.port = port
        self._on_stop = on_stop
        self._control_token = control_token
        self._hosts: frozenset[str] | None = None
        self._runner: web.ServerRunner | None = None
        self._state = "new"
        self._ids = itertools.count()
        self.in_flight = 0
        self.handled = 0

    @property
    def url(self) -> str:
        """Base URL clients point at, e.g. ``http://127.0.0.1:54321``."""
        if self._state != "running":
            raise RuntimeError("the proxy is not running")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        """Bind and start serving.

        Raises:
            InputError: the port is in use or the host cannot be bound.
            RuntimeError: started twice, or after close.
        """
        if self._state != "new":
            raise RuntimeError(f"a ProxyServer cannot be started when it is {self._state}")
        self._state = "starting"
        # aiohttp's low-level server: every request reaches _serve directly, with no
        # application, router or match info to build on the way (one route takes them all).
        server = web.Server(
            self._serve,
            request_factory=large_body_requests(_MAX_BODY),
            handler_cancellation=True,
            access_log=None,
        )
        runner = web.ServerRunner(server)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=False)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            self._state = "closed"
            raise port_refused(exc, self.host, self.port) from None
        self.port = runner.addresses[0][1]  # the bound (host, port): port 0 became a real one
        self._hosts = _loopback_hosts(self.host, self.port)
        self._runner = runner
        self._state = "running"

    async def close(self) -> None:
        """Stop serving; waits for in-flight responses briefly, then closes."""
        if self._state == "closed":
            return
        self._state = "closed"
        if self._runner is not None:
            await self._runner.cleanup()
        aclose = getattr(self.handler, "aclose", None)
        if aclose is not None:
            await aclose()

    async def __aenter__(self) -> ProxyServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @contextlib.contextmanager
    def running_in_thread(self) -> Iterator[ProxyServer]:
        """Run the server on its own event loop in a daemon thread (for sync callers)."""
        with running_in_thread(self, name="rec-proxy", join_timeout=30) as server:
            yield server

    async def _serve(self, request: web.BaseRequest) -> web.StreamResponse:
        if "expect" in request.headers:
            await _continue(request)
        path_qs = request.raw_path
        host = request.headers.get("host", "").lower()
        if self._hosts is not None and host not in self._hosts:
            log.warning("refused a request for host %r (DNS rebinding?)", host[:100])
            return _refusal(
                f"rec serves this address only as {sorted(self._hosts)[0]}, not {host[:100]!r}"
            )
        if path_qs.startswith(CONTROL_PREFIX):
            return await self._control(request, path_qs[len(CONTROL_PREFIX) :])
        lowered = {k.lower(): v for k, v in request.headers.items()}
        refused = _browser_refusal(lowered, request.method)
        if refused is not None:
            log.warning("refused %s %s: %s", request.method, mask(request.path)[:100], refused)
            return _refusal(refused)
        if request.headers.get("upgrade", "").lower() == "websocket" and is_live_path(path_qs):
            return await self._live(request)
        body = await request.read()
        incoming = IncomingRequest(
            id=next(self._ids),
            method=request.method,
            path_qs=path_qs,
            headers=lowered,
            body=body,
            started=time.perf_counter(),
            started_at=now_iso(),
        )
        writer = ResponseWriter(request)
        await self._handled(incoming, writer, request.path)
        if writer.aborted:
            raise asyncio.CancelledError  # the connection is gone; nothing more to send
        return writer.response()

    async def _handled(self, incoming: IncomingRequest, writer: ResponseWriter, path: str) -> None:
        """Have the handler answer ``incoming``; a client that left, or a bug in rec, is
        said (and the latter answered as an API error when nothing was sent yet)."""
        self.in_flight += 1
        try:
            await self.handler.handle(incoming, writer)
        except ConnectionResetError:  # the client went away mid-response: nothing to send
            log.warning(
                "#%d: the client closed the connection before the response ended (an aborted "
                "run: ADK says 'Invocation was aborted by client.'); the exchange is not "
                "recorded, so the turn it answered cannot replay: re-record that turn",
                incoming.id,
            )
            writer.aborted = True
        except Exception as exc:  # a bug in rec must reach the client as an API error
            log.exception("#%d: rec failed while handling %s", incoming.id, path)
            if not writer.started:
                message = (
                    f"rec failed while handling this request: {mask(repr(exc))} "
                    "(see rec's log; please report it)"
                )
                await writer.send_error(google_error(500, message, "INTERNAL"))
            else:
                writer.abort()
        finally:
            self.in_flight -= 1
            self.handled += 1

    async def _live(self, request: web.BaseRequest) -> web.StreamResponse:
        """A Live WebSocket session, served by the handler's ``handle_live``."""
        handle_live = getattr(self.handler, "handle_live", None)
        if handle_live is None:
            mode = self.handler.status().get("mode", "this")
            return web.json_response(
                {
                    "error": {
                        "code": 501,
                        "message": f"rec in {mode} mode does not serve Gemini Live sessions "
                        "(record them with `rec start --mode record`, replay them with "
                        "`rec replay` or `rec serve`)",
                        "status": "UNIMPLEMENTED",
                    }
                },
                status=501,
            )
        self.in_flight += 1
        try:
            response: web.StreamResponse = await handle_live(request)
            return response
        finally:
            self.in_flight -= 1
            self.handled += 1

    async def _control(self, request: web.BaseRequest, command: str) -> web.StreamResponse:
        if "origin" in request.headers or "sec-fetch-site" in request.headers:
            return _refusal("rec's control endpoints do not answer browsers")
        if self._control_token is not None and not hmac.compare_digest(
            request.headers.get(CONTROL_TOKEN_HEADER, "").encode(), self._control_token.encode()
        ):
            return _refusal(
                "rec's control endpoints need the recording's control token "
                "(use `rec status` / `rec stop --out DIR`)"
            )
        if command == "status" and request.method == "GET":
            status = {
                "in_flight": self.in_flight,
                "handled": self.handled,
                "event_loop": loop_kind(asyncio.get_running_loop()),
                **self.handler.status(),
            }
            return web.json_response(status)
        if command == "stop" and request.method == "POST":
            if self._on_stop is None:
                return _error_response(
                    409,
                    "this server runs inside another program and stops when that program ends it",
                    "FAILED_PRECONDITION",
                )
            self._on_stop()
            return web.json_response({"stopping": True})
        return _error_response(404, f"unknown rec control endpoint {command!r}", "NOT_FOUND")


async def _continue(request: web.BaseRequest) -> None:
    """Answer ``Expect: 100-continue`` before the body is read, as aiohttp's router does
    for its routes (an HTTP/1.1 client may wait for it before sending the body).

    Raises:
        web.HTTPExpectationFailed: any other expectation (417).
    """
    expect = request.headers.get("expect", "")
    if request.version != HttpVersion11:
        return
    if expect.lower() != "100-continue":
        raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")
    await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    request.writer.output_size = 0  # the response proper has not started


def port_refused(exc: OSError, host: str, port: int) -> InputError:
    """The error for a ``--port`` a server cannot listen on (taken, or refused by the OS):
    every server rec starts on a port the user chose says it the same way."""
    in_use = exc.errno in (errno.EADDRINUSE, errno.EACCES)
    return InputError(
        "port already in use" if in_use else f"cannot listen ({exc.strerror})",
        path=f"{host}:{port}",
        fix="Pick another --port, or omit --port to use a free one",
    )


def _refusal(message: str) -> web.Response:
    return _error_response(403, message, "PERMISSION_DENIED")


def _error_response(code: int, message: str, status: str) -> web.Response:
    return web.json_response(google_error(code, message, status), status=code)


def _loopback_hosts(host: str, port: int) -> frozenset[str] | None:
    """The ``Host`` values a loopback server answers (None: bound beyond loopback, where
    the names clients use are not known)."""
    if host != "localhost":
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return None
        except ValueError:
            return None
    bound = f"[{host}]" if ":" in host else host
    names = ("127.0.0.1", "localhost", "[::1]", bound)
    hosts = {f"{name}:{port}" for name in names}
    if port == 80:  # HTTP's default port: clients name the host alone
        hosts |= set(names)
    return frozenset(hosts)


_SIMPLE_CONTENT_TYPES = frozenset(
    {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}
)
"""The content types a web page may POST to any site without a CORS preflight."""


def _browser_refusal(headers: Mapping[str, str], method: str) -> str | None:
    """Why a request to a model route looks like a web page's, or None.

    A page the user visits can send a "simple" cross-site request (no preflight): a GET,
    or a POST of text, a form or multipart, with no header of its own. Browsers name the
    page in ``Origin`` and say ``Sec-Fetch-Site``; API clients send neither, and send
    JSON with their own ``x-goog-`` headers. So rec refuses a request that names a page,
    and a simple-typed body that carries no ``x-goog-`` or ``x-rec-`` header.
    """
    site = headers.get("sec-fetch-site", "").lower()
    if "origin" in headers or site in ("cross-site", "same-site", "same-origin"):
        return (
            "rec's model routes do not answer web pages (the request has Origin or Sec-Fetch-Site)"
        )
    if method.upper() in ("GET", "HEAD", "OPTIONS"):
        return None
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type in _SIMPLE_CONTENT_TYPES and not any(
        name.startswith(("x-goog-", "x-rec-")) for name in headers
    ):
        return (
            f"rec's model routes do not take a {content_type} body without an x-goog- or "
            "x-rec- header (what a web page can send cross-site); send JSON"
        )
    return None
