"""Forward a request to the real model API and stream the answer back, teeing it.

This is the recording half of the proxy. Every chunk from the upstream goes to the client
the moment it arrives (the SSE stream is never buffered: time to first byte is the
upstream's) and, decoded, into an :class:`~cassettes.sse.SseSplitter` that stamps each
event with its offset from the request start. When the exchange completes it is redacted,
scanned for secrets and handed to ``on_exchange`` (the journal).

Only the configured upstream is ever contacted: the proxy is not an open proxy. A Vertex
AI path (``/v1beta1/projects/P/locations/L/...``) goes to ``vertex_upstream``, by default
``https://L-aiplatform.googleapis.com`` (``aiplatform.googleapis.com`` for ``global``),
and only for a location of lowercase letters, digits and dashes: the path never chooses a
host. Record mode, ``auto`` mode and ``--record-missing`` all forward through here.

What the client receives is always what the upstream sent, byte for byte. A body rec
cannot store parsed (an unknown ``content-encoding``, bytes that do not decode as their
header says, an event stream that is not UTF-8) is stored as its exact bytes. If the
journal cannot be written (a full disk) the client is still answered; the exchange is
counted in :attr:`Forwarder.lost` and reported once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from cassettes import (
    Body,
    Exchange,
    IncrementalDecoder,
    InputError,
    RecordedRequest,
    RecordedResponse,
    RedactionRules,
    SecretFound,
    SseBody,
    SseSplitter,
    body_from_bytes,
    client_versions,
    credentials_in,
    ensure_no_secrets,
    event_from_raw,
    mask,
    raw_body,
    redact_exchange,
    stored_body,
    url_credentials,
    without_credentials,
)
from loopback import IncomingRequest, ResponseWriter

from .tool_traffic import INTERNAL_EXTENSION

__all__ = [
    "DEFAULT_UPSTREAM",
    "GATEWAY_MODE_MESSAGE",
    "Forwarder",
    "Upstreams",
    "VertexPath",
    "gateway_mode_path",
    "google_error",
    "vertex_path",
]

log = logging.getLogger(__name__)

DEFAULT_UPSTREAM = "https://generativelanguage.googleapis.com"
"""The Gemini API."""

_VERTEX_PATH = re.compile(
    r"/v1[a-z0-9]*/projects/(?P<project>[^/?#]+)/locations/(?P<location>[^/?#]+)/"
)
_VERTEX_PREFIX = re.compile(r"/v1[a-z0-9]*/projects/")
_LOCATION = re.compile(r"[a-z0-9][a-z0-9-]*")
"""A Vertex AI location (``us-central1``, ``europe-west4``, ``global``): it names a host."""
_DROP_REQUEST_HEADERS = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)
_NOISE_REQUEST_HEADERS = frozenset({"accept-encoding", "accept"})
"""Differ per HTTP client (httpx, aiohttp) and say nothing about the call: not stored."""
_DROP_STORED_RESPONSE_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}
)


GATEWAY_MODE_MESSAGE = (
    "rec received a model call at the bare base URL {path!r}: google-genai does this for a "
    "Vertex AI client whose project and location come only from the environment while a base "
    "URL is set (it then assumes an API gateway and drops the model and method from the URL). "
    "rec passes them for Python clients it reaches (under `rec start -- COMMAND`, "
    "recorder.record(), rec replay) when GOOGLE_CLOUD_PROJECT is set; this one it did not reach "
    "(another language, a process rec did not start, --no-instrument, no GOOGLE_CLOUD_PROJECT). "
    "Set GOOGLE_CLOUD_PROJECT, or pass them to the client, e.g. genai.Client(vertexai=True, "
    "project=..., location=...), or use the Gemini API"
)
"""Explains google-genai's API-gateway mode, which no base-URL proxy can record."""


def gateway_mode_path(method: str, path_qs: str) -> bool:
    """Whether a request is google-genai's gateway-mode call (a POST with no model path)."""
    return method.upper() == "POST" and path_qs.split("?", 1)[0].rstrip("/") == ""


def _acknowledge_promptly(response: httpx.Response) -> None:
    """Keep the upstream leg free of Nagle / delayed-ACK stalls.

    A server that writes a stream's headers and its first event as two small writes with
    Nagle's algorithm on holds the event until the headers are acknowledged, and a
    kept-alive connection delays that ACK by up to 40 ms. TCP_QUICKACK acknowledges what has
    arrived now (the headers), so the first event follows at once; TCP_NODELAY keeps rec's
    own writes from waiting either. Both are best effort (not every platform has them).
    """
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if hasattr(socket, "TCP_QUICKACK"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


def google_error(code: int, message: str, status: str) -> dict[str, Any]:
    """The Google API error envelope, which google-genai turns into ``APIError``."""
    return {"error": {"code": code, "message": message, "status": status}}


@dataclass(frozen=True)
class VertexPath:
    """The project and location a Vertex AI request names in its path."""

    project: str
    location: str


def vertex_path(url: str) -> VertexPath | None:
    """The project and location of a Vertex AI request path, or of a recorded URL (whose
    upstream may add a path prefix); None for other requests."""
    if "://" in url:
        match = _VERTEX_PATH.search(urlsplit(url).path)
    else:
        match = _VERTEX_PATH.match(re.split(r"[?#]", url, maxsplit=1)[0])
    if match is None:
        return None
    return VertexPath(match.group("project"), match.group("location"))


@dataclass(frozen=True)
class Upstreams:
    """Where requests may go: the Gemini API base, and Vertex AI (derived or fixed)."""

    gemini: str = DEFAULT_UPSTREAM
    vertex: str | None = None
    """Fixed Vertex base URL; None derives ``https://{location}-aiplatform.googleapis.com``."""

    def __post_init__(self) -> None:
        for value in (self.gemini, self.vertex):
            if value is None:
                continue
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise InputError(
                    f"upstream {value!r} is not an http(s) URL",
                    path="--upstream",
                    fix="Give a base URL such as https://generativelanguage.googleapis.com",
                )

    @property
    def shown(self) -> str:
        """The Gemini upstream as stored and printed: without userinfo or credentials."""
        return without_credentials(self.gemini)

    def url_for(self, path_qs: str) -> str:
        """The upstream URL for a request path (a base URL's own path prefix is kept).

        Raises:
            InputError: the request would leave the configured upstreams (an absolute URL
                or authority form, or a Vertex location that is not a location).
        """
        if not path_qs.startswith("/") or path_qs.startswith("//"):
            raise InputError(
                "rec forwards only to its configured upstream; not an open proxy",
                where=_shown(path_qs),
                fix="Send the request path only, with the proxy as the client's base URL",
            )
        vertex = vertex_path(path_qs)
        if vertex is None and _VERTEX_PREFIX.match(path_qs):
            raise InputError(
                "not a Vertex AI model path (projects/PROJECT/locations/LOCATION/...)",
                where=_shown(path_qs),
                fix="Send the path google-genai builds, with a location such as us-central1",
            )
        if vertex is None:
            base = self.gemini
        elif self.vertex is not None:
            base = self.vertex
        elif not _LOCATION.fullmatch(vertex.location):
            raise InputError(
                f"{_shown(vertex.location)!r} is not a Vertex AI location",
                where=_shown(path_qs),
                fix="Use a location such as us-central1 or global, or set --vertex-upstream",
            )
        elif vertex.location == "global":
            base = "https://aiplatform.googleapis.com"
        else:
            base = f"https://{vertex.location}-aiplatform.googleapis.com"
        url = base.rstrip("/") + path_qs
        if urlsplit(url).netloc != urlsplit(base).netloc:
            raise InputError(
                "the request path would change the upstream host",
                where=_shown(path_qs),
                fix="Send a plain request path",
            )
        return url


def _shown(text: str, limit: int = 120) -> str:
    """Part of a client-supplied path, safe to put in a message."""
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass
class Forwarder:
    """Forwards requests upstream and records complete exchanges.

    Args:
        on_exchange: awaited with each redacted, secret-free exchange (the journal append).
        upstreams: where requests may go.
        redaction: extra redaction rules on top of the defaults.
        id_offset: the first exchange id (when extending an existing cassette).
    """

    on_exchange: Callable[[Exchange], Awaitable[None]]
    upstreams: Upstreams = field(default_factory=Upstreams)
    redaction: RedactionRules = field(default_factory=RedactionRules)
    id_offset: int = 0
    known_secrets: set[str] = field(default_factory=set)
    recorded: int = 0
    refused: int = 0
    lost: int = 0
    """Exchanges the client was answered but that could not be written (a full disk)."""
    lost_reason: str | None = None
    """Why the first lost exchange could not be written."""
    streams_in_flight: int = 0
    on_recorded: Callable[[Exchange], None] | None = None
    """Also called with every exchange once the journal has it (``rec replay`` reads a
    run's traffic this way; `rec start` keeps nothing in memory)."""
    _forwarded: int = 0
    _client: httpx.AsyncClient | None = None

    def __post_init__(self) -> None:
        # A password in --upstream (https://user:PASS@gateway) is a credential of the
        # recording: found and masked wherever it would appear.
        for base in (self.upstreams.gemini, self.upstreams.vertex):
            if base is not None:
                self.known_secrets |= url_credentials(base)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(connect=15.0, read=600.0, write=60.0, pool=60.0),
                follow_redirects=False,
                trust_env=False,
            )
        return self._client

    async def aclose(self) -> None:
        """Close the upstream connection pool."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def forward(self, request: IncomingRequest, writer: ResponseWriter) -> None:
        """Forward ``request``, stream the response to ``writer``, and record the exchange.

        The exchange is journaled before the handler returns, that is before the server sends
        the end of the (chunked) response: a client that read the response in full knows it
        is on disk.
        """
        self.known_secrets |= credentials_in(request.headers, request.path_qs)
        headers = {k: v for k, v in request.headers.items() if k not in _DROP_REQUEST_HEADERS}
        client = self._http()
        try:
            url = self.upstreams.url_for(request.path_qs)
            upstream_request = client.build_request(
                request.method,
                url,
                headers=headers,
                content=request.body,
                extensions={INTERNAL_EXTENSION: True},  # rec's own traffic, never a tool's
            )
        except (InputError, httpx.InvalidURL) as exc:
            message = mask(f"rec refused the request: {exc}", self.known_secrets)
            log.warning("%s", message)
            envelope = google_error(400, message, "INVALID_ARGUMENT")
            await writer.send(
                400, {"content-type": "application/json"}, json.dumps(envelope).encode()
            )
            return
        # Ids follow the arrival order of forwarded requests (not of every request the proxy
        # saw: in auto mode replayed hits take none), continuing after ``id_offset``.
        exchange_id = self.id_offset + self._forwarded
        self._forwarded += 1
        try:
            upstream = await client.send(upstream_request, stream=True)
        except httpx.HTTPError as exc:
            message = mask(
                f"rec could not reach the upstream {url.split('?')[0]}: {exc!r}", self.known_secrets
            )
            log.error("%s", message)
            envelope = google_error(502, message, "UNAVAILABLE")
            await writer.send(
                502, {"content-type": "application/json"}, json.dumps(envelope).encode()
            )
            return

        _acknowledge_promptly(upstream)
        content_type = upstream.headers.get("content-type")
        encoding = upstream.headers.get("content-encoding")
        is_stream = (content_type or "").startswith("text/event-stream")
        splitter = SseSplitter() if is_stream else None
        sse = SseBody() if is_stream else None
        decoder: IncrementalDecoder | None = None
        if is_stream:
            try:
                decoder = IncrementalDecoder(encoding)
            except InputError:
                splitter = None  # an encoding rec cannot undo: stored as received
        received = bytearray()
        cut = False
        if is_stream:
            self.streams_in_flight += 1
        try:
            await writer.start(upstream.status_code, dict(upstream.headers))
            try:
                async for chunk in upstream.aiter_raw():
                    await writer.write(chunk)
                    received += chunk
                    if splitter is None or sse is None or decoder is None:
                        continue
                    try:
                        decoded = decoder.feed(chunk)
                    except ValueError as exc:
                        log.warning("#%d: %s; stored as received", exchange_id, exc)
                        splitter = None
                        continue
                    offset = request.elapsed_ms()
                    for raw in splitter.feed(decoded):
                        sse.events.append(
                            event_from_raw(
                                raw,
                                offset_ms=offset,
                                line_ending=splitter.line_ending or "\r\n",
                            )
                        )
            except httpx.HTTPError as exc:
                cut = True
                log.warning(
                    "#%d: the upstream broke off the response (%s); recorded as cut",
                    exchange_id,
                    type(exc).__name__,
                )
        finally:
            await upstream.aclose()
            if is_stream:
                self.streams_in_flight -= 1

        body: Body | None
        if not is_stream:
            body = stored_body(
                bytes(received), content_type=content_type, content_encoding=encoding
            )
        elif sse is not None and splitter is not None and not (splitter.lossy and not cut):
            sse.line_ending = splitter.line_ending or "\r\n"
            sse.complete = not cut
            sse.tail = splitter.tail()
            body = sse
        else:  # not decodable, or not UTF-8: the bytes themselves, replayed as they came
            body = raw_body(bytes(received), content_encoding=encoding)
        await self._record(request, url, upstream, body, cut=cut, exchange_id=exchange_id)
        if cut:
            writer.abort()

    async def _record(
        self,
        request: IncomingRequest,
        url: str,
        upstream: httpx.Response,
        body: Body | None,
        *,
        cut: bool,
        exchange_id: int,
    ) -> None:
        if cut and not isinstance(body, SseBody):
            log.warning("#%d: a cut non-streaming response is not recorded", exchange_id)
            return
        exchange = Exchange(
            id=exchange_id,
            recorded_at=request.started_at,
            duration_ms=round(request.elapsed_ms(), 3),
            client=client_versions(request.headers),
            request=RecordedRequest(
                method=request.method,
                url=url,
                headers={
                    k: v
                    for k, v in sorted(request.headers.items())
                    if k not in _DROP_REQUEST_HEADERS and k not in _NOISE_REQUEST_HEADERS
                },
                body=body_from_bytes(request.body, request.headers.get("content-type")),
            ),
            response=RecordedResponse(
                status=upstream.status_code,
                headers={
                    k.lower(): v
                    for k, v in sorted(upstream.headers.items())
                    if k.lower() not in _DROP_STORED_RESPONSE_HEADERS
                },
                body=body,
            ),
        )
        exchange = redact_exchange(exchange, self.redaction, known_secrets=self.known_secrets)
        try:
            ensure_no_secrets(exchange, path="journal", known_secrets=self.known_secrets)
        except SecretFound as exc:
            self.refused += 1
            log.error("#%d was not recorded: %s", exchange_id, exc)
            return
        try:
            await self.on_exchange(exchange)
        except OSError as exc:  # a full disk must not cost the user their session
            self.lost += 1
            if self.lost == 1:
                self.lost_reason = f"{exc.strerror or exc} ({exc.filename or 'journal'})"
                log.error(
                    "#%d was answered but could not be recorded: %s. rec keeps serving; "
                    "exchanges that cannot be written are counted and reported at the end",
                    exchange_id,
                    self.lost_reason,
                )
            return
        if self.on_recorded is not None:
            self.on_recorded(exchange)
        self.recorded += 1
        path = urlsplit(url).path
        if isinstance(body, SseBody):
            detail = f"{len(body.events)} events" + ("" if body.complete else ", cut")
        else:
            detail = "unary"
        log.info(
            "#%d %s %s -> %d (%s, %.0f ms)",
            exchange_id,
            request.method,
            path,
            upstream.status_code,
            detail,
            exchange.duration_ms,
        )
