"""Forward a request to the real model API and stream the answer back, teeing it.

This is the recording half of the proxy. Every chunk from the upstream goes to the client
the moment it arrives (the SSE stream is never buffered: time to first byte is the
upstream's) and, decoded, into an :class:`~cassettes.sse.SseSplitter` that stamps each
event with its offset from the request start. When the exchange completes it is redacted,
scanned for secrets and handed to ``on_exchange`` (the journal).

Only the configured upstream is ever contacted: the proxy is not an open proxy. A Vertex
AI path (``/v1beta1/projects/P/locations/L/...``) goes to ``vertex_upstream``, by default
``https://L-aiplatform.googleapis.com`` (``aiplatform.googleapis.com`` for ``global``).
"""

from __future__ import annotations

import json
import logging
import re
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
    redact_exchange,
)
from loopback import IncomingRequest, ResponseWriter

from .tool_traffic import INTERNAL_EXTENSION

__all__ = [
    "DEFAULT_UPSTREAM",
    "GATEWAY_MODE_MESSAGE",
    "Forwarder",
    "Upstreams",
    "gateway_mode_path",
    "google_error",
]

log = logging.getLogger(__name__)

DEFAULT_UPSTREAM = "https://generativelanguage.googleapis.com"
"""The Gemini API."""

_VERTEX_PATH = re.compile(r"^/v1[a-z0-9]*/projects/[^/]+/locations/([^/]+)/")
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
    "Pass them to the client, e.g. genai.Client(vertexai=True, project=..., location=...), "
    "or use the Gemini API"
)
"""Explains google-genai's API-gateway mode, which no base-URL proxy can record."""


def gateway_mode_path(method: str, path_qs: str) -> bool:
    """Whether a request is google-genai's gateway-mode call (a POST with no model path)."""
    return method.upper() == "POST" and path_qs.split("?", 1)[0].rstrip("/") == ""


def google_error(code: int, message: str, status: str) -> dict[str, Any]:
    """The Google API error envelope, which google-genai turns into ``APIError``."""
    return {"error": {"code": code, "message": message, "status": status}}


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

    def url_for(self, path_qs: str) -> str:
        """The upstream URL for a request path (a base URL's own path prefix is kept)."""
        match = _VERTEX_PATH.match(path_qs)
        if match:
            base = self.vertex or (
                "https://aiplatform.googleapis.com"
                if match.group(1) == "global"
                else f"https://{match.group(1)}-aiplatform.googleapis.com"
            )
        else:
            base = self.gemini
        return base.rstrip("/") + path_qs


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
    streams_in_flight: int = 0
    keep_log: bool = False
    """Also keep every recorded exchange in :attr:`log` (off for `rec start`: the journal
    has them, and a long manual session must not grow in memory)."""
    log: list[Exchange] = field(default_factory=list)
    """With ``keep_log``, every exchange recorded, in completion order."""
    _forwarded: int = 0
    _client: httpx.AsyncClient | None = None

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
        """Forward ``request``, stream the response to ``writer``, and record the exchange."""
        # Ids follow the arrival order of forwarded requests (not of every request the proxy
        # saw: in auto mode replayed hits take none), continuing after ``id_offset``.
        exchange_id = self.id_offset + self._forwarded
        self._forwarded += 1
        self.known_secrets |= credentials_in(request.headers, request.path_qs)
        url = self.upstreams.url_for(request.path_qs)
        headers = {k: v for k, v in request.headers.items() if k not in _DROP_REQUEST_HEADERS}
        client = self._http()
        upstream_request = client.build_request(
            request.method,
            url,
            headers=headers,
            content=request.body,
            extensions={INTERNAL_EXTENSION: True},  # rec's own traffic, never a tool's
        )
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

        is_stream = upstream.headers.get("content-type", "").startswith("text/event-stream")
        decoder = IncrementalDecoder(upstream.headers.get("content-encoding"))
        splitter = SseSplitter() if is_stream else None
        sse = SseBody() if is_stream else None
        plain = bytearray()
        cut = False
        if is_stream:
            self.streams_in_flight += 1
        try:
            await writer.start(upstream.status_code, dict(upstream.headers))
            try:
                async for chunk in upstream.aiter_raw():
                    await writer.write(chunk)
                    decoded = decoder.feed(chunk)
                    if splitter is not None and sse is not None:
                        offset = request.elapsed_ms()
                        for raw in splitter.feed(decoded):
                            sse.events.append(
                                event_from_raw(
                                    raw,
                                    offset_ms=offset,
                                    line_ending=splitter.line_ending or "\r\n",
                                )
                            )
                    else:
                        plain += decoded
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

        if sse is not None and splitter is not None:
            sse.line_ending = splitter.line_ending or "\r\n"
            sse.complete = not cut
            pending = splitter.pending
            if pending.strip():
                sse.tail = pending.decode("utf-8", errors="replace")
            body: Body | None = sse
        else:
            body = body_from_bytes(bytes(plain), upstream.headers.get("content-type"))
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
        await self.on_exchange(exchange)
        if self.keep_log:
            self.log.append(exchange)
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
