"""Forward a request to the real model API and stream the answer back, teeing it.

This is the recording half of the proxy. Every chunk from the upstream goes to the client
the moment it arrives (the SSE stream is never buffered: time to first byte is the
upstream's) and, decoded, into an :class:`~cassettes._sse.SseSplitter` that stamps each
event with its offset from the request start. When the exchange completes, building it
(parsing the bodies and events), redacting it and scanning it for secrets is handed to
``on_exchange`` (the journal), which runs that on its writer thread: the event loop only
moves bytes. A large body (over :data:`_PIECE`) goes to the journal in screened pieces
while it passes (:class:`_Pieces`), so the end of its response waits only for the last
piece and a small exchange line, not for the whole body to be parsed, scanned and
written. The upstream client is aiohttp's, with kept-alive connections.

Only the configured upstream is ever contacted: the proxy is not an open proxy. A Vertex
AI path (``/v1beta1/projects/P/locations/L/...``) goes to ``vertex_upstream``, by default
``https://L-aiplatform.googleapis.com`` (``aiplatform.googleapis.com`` for ``global``),
and only for a location of lowercase letters, digits and dashes: the path never chooses a
host. Record mode, ``auto`` mode and ``--record-missing`` all forward through here.

What the client receives is always what the upstream sent, byte for byte, up to the end its
framing declares (bytes past it are dropped, as a direct client ignores them; an answer that
is not HTTP closes the client's connection, as it fails a direct client). A body rec
cannot store parsed (an unknown ``content-encoding``, bytes that do not decode as their
header says, an event stream that is not UTF-8) is stored as its exact bytes. If the
journal cannot be written (a full disk) the client is still answered; the exchange is
counted in :attr:`Forwarder.lost` and reported once.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import socket
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from pydantic import BaseModel
from yarl import URL

from cassettes._bodies import IncrementalDecoder
from cassettes._cassette import Exchange
from cassettes._errors import InputError
from cassettes._google_error import google_error
from cassettes._providers import PROVIDERS, Provider, configured_upstream, mounted
from cassettes._redaction import RedactionRules, credentials_in
from cassettes._secret_shapes import (
    CREDENTIALS_HEADER,
    MIN_SECRET_LENGTH,
    credentials_from_header,
    mask,
    remember_credentials,
    url_credentials,
    without_credentials,
)
from cassettes._sse import SseSplitter
from recorder._body_screen import BodyScreen
from recorder._build_worker import BuildWorker, BuiltElsewhere, LineBuild, WorkerBuild
from recorder._exchange_build import DROP_REQUEST_HEADERS, Received, build_exchange
from recorder._journal import BodyChunk, Built, ChunkedExchange, Written
from recorder._lenient_http import lenient_connector
from recorder._server import IncomingRequest, ResponseWriter
from recorder._tool_clients import mark_internal

__all__ = [
    "DEFAULT_UPSTREAM",
    "GATEWAY_MODE_MESSAGE",
    "Forwarder",
    "Upstreams",
    "VertexPath",
    "is_vertex_live",
    "setup_location",
    "gateway_mode_refusal",
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

GATEWAY_MODE_MESSAGE = (
    "rec received a model call at the bare base URL {path!r}: google-genai does this for a "
    "Vertex AI client whose project and location come only from the environment while a base "
    "URL is set (it then assumes an API gateway and drops the model and method from the URL). "
    "rec passes them for Python clients it reaches (under `rec start -- COMMAND`, "
    "rec.record(), rec replay) when GOOGLE_CLOUD_PROJECT is set; this one it did not reach "
    "(another language, a process rec did not start, --no-instrument, no GOOGLE_CLOUD_PROJECT). "
    "Set GOOGLE_CLOUD_PROJECT, or pass them to the client, e.g. genai.Client(vertexai=True, "
    "project=..., location=...), or use the Gemini API"
)
"""Explains google-genai's API-gateway mode, which no base-URL proxy can record."""


def gateway_mode_refusal(method: str, path_qs: str) -> dict[str, Any] | None:
    """The 400 error envelope for google-genai's gateway-mode call (a POST with no model
    path, see :data:`GATEWAY_MODE_MESSAGE`); None for any other request."""
    if method.upper() != "POST" or path_qs.split("?", 1)[0].rstrip("/") != "":
        return None
    return google_error(400, GATEWAY_MODE_MESSAGE.format(path=path_qs), "FAILED_PRECONDITION")


def _acknowledge_promptly(response: aiohttp.ClientResponse) -> None:
    """Keep the upstream leg free of Nagle / delayed-ACK stalls.

    A server that writes a stream's headers and its first event as two small writes with
    Nagle's algorithm on holds the event until the headers are acknowledged, and a
    kept-alive connection delays that ACK by up to 40 ms. TCP_QUICKACK acknowledges what has
    arrived now (the headers), so the first event follows at once; TCP_NODELAY keeps rec's
    own writes from waiting either. Both are best effort (not every platform has them).
    """
    connection = response.connection
    transport = connection.transport if connection is not None else None
    _no_delay(transport.get_extra_info("socket") if transport is not None else None, quick=True)


def _no_delay(sock: Any, *, quick: bool = False) -> None:
    """TCP_NODELAY (and, with ``quick``, TCP_QUICKACK) on a socket, best effort."""
    if sock is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if quick and hasattr(socket, "TCP_QUICKACK"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


def _joined(headers: Mapping[str, str]) -> dict[str, str]:
    """Response headers as one value per lower-cased name (repeated ones joined with ``, ``,
    as an HTTP library reads them)."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


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


_VERTEX_LIVE = re.compile(r"/ws/google\.cloud\.aiplatform\.[a-z0-9]+\.LlmBidiService/")
_MODEL_LOCATION = re.compile(r"^projects/[^/]+/locations/(?P<location>[^/]+)/")


def is_vertex_live(path_qs: str) -> bool:
    """Whether a request path is Vertex AI's Live WebSocket (``LlmBidiService``): its path
    names no location, its ``setup`` message's model does."""
    return _VERTEX_LIVE.match(path_qs) is not None


def setup_location(setup: object) -> str | None:
    """The location a Live ``setup`` message's model names
    (``projects/P/locations/L/publishers/google/models/M``), or None."""
    body = setup.get("setup") if isinstance(setup, dict) else None
    model = body.get("model") if isinstance(body, dict) else None
    match = _MODEL_LOCATION.match(model) if isinstance(model, str) else None
    return match.group("location") if match is not None else None


@dataclass(frozen=True)
class Upstreams:
    """Where requests may go: the Gemini API base, Vertex AI (derived or fixed), and the
    base URLs of the other providers (``cassettes._providers``), whose calls arrive under
    their mount on the proxy (``/openai/…``, ``/anthropic/…``)."""

    gemini: str = DEFAULT_UPSTREAM
    vertex: str | None = None
    """Fixed Vertex base URL; None derives ``https://{location}-aiplatform.googleapis.com``."""
    openai: str | None = None
    """OpenAI-wire base URL; None: the one the environment configures (``OPENAI_BASE_URL``,
    ``OPENAI_API_BASE``) when the upstreams are made, else ``https://api.openai.com/v1``."""
    anthropic: str | None = None
    """Anthropic base URL; None: ``ANTHROPIC_API_BASE`` / ``ANTHROPIC_BASE_URL``, else
    ``https://api.anthropic.com``."""

    def __post_init__(self) -> None:
        for provider in PROVIDERS:
            if getattr(self, provider.name) is None:
                object.__setattr__(self, provider.name, configured_upstream(provider, os.environ))
        for name, value in (
            ("--upstream", self.gemini),
            ("--vertex-upstream", self.vertex),
            *((provider.base_url_vars[0], self.provider(provider)) for provider in PROVIDERS),
        ):
            if value is None:
                continue
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise InputError(
                    f"upstream {value!r} is not an http(s) URL",
                    path=name,
                    fix="Give a base URL such as https://generativelanguage.googleapis.com",
                )

    def provider(self, provider: Provider) -> str:
        """The base URL ``provider``'s calls are forwarded to."""
        value = getattr(self, provider.name)
        assert isinstance(value, str)
        return value

    @property
    def bases(self) -> tuple[str, ...]:
        """Every configured base URL (for the credentials their userinfo holds)."""
        found = (self.gemini, self.vertex, *(self.provider(p) for p in PROVIDERS))
        return tuple(base for base in found if base is not None)

    @property
    def shown(self) -> str:
        """The Gemini upstream as stored and printed: without userinfo or credentials."""
        return without_credentials(self.gemini)

    def url_for(self, path_qs: str, *, location: str | None = None) -> str:
        """The upstream URL for a request path (a base URL's own path prefix is kept).

        A Vertex AI Live path goes to ``vertex`` when set, else to the host of ``location``
        (read from the session's ``setup``, see :func:`setup_location`).

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
        on_mount = mounted(path_qs)
        vertex = vertex_path(path_qs) if on_mount is None else None
        if on_mount is None and is_vertex_live(path_qs):
            if location is None and self.vertex is None:
                raise InputError(
                    "a Vertex AI Live session's path names no location, nor did its setup",
                    where=_shown(path_qs),
                    fix="Set --vertex-upstream https://LOCATION-aiplatform.googleapis.com",
                )
            vertex = VertexPath("", location or "")
        if on_mount is not None:
            provider, rest = on_mount
            base, path_qs = self.provider(provider), rest
        elif vertex is None and _VERTEX_PREFIX.match(path_qs):
            raise InputError(
                "not a Vertex AI model path (projects/PROJECT/locations/LOCATION/...)",
                where=_shown(path_qs),
                fix="Send the path google-genai builds, with a location such as us-central1",
            )
        if on_mount is not None:
            pass  # the provider's base, chosen above
        elif vertex is None:
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


def _one_line(text: str, limit: int = 200) -> str:
    """aiohttp's multi-line parser message (the line, a caret under the fault) as one line."""
    return _shown(" ".join(text.split()), limit)


def _shown(text: str, limit: int = 120) -> str:
    """Part of a client-supplied path, safe to put in a message."""
    return text if len(text) <= limit else text[:limit] + "..."


_DRAIN_GRACE_S = 2.0
"""How long the rest of an answer is read after its client left (see
:meth:`Forwarder._after_the_client_left`): an ended stream's last bytes follow its last
event at once; a stream still generating is given up after this."""
_PIECE = 1 << 20
"""A body longer than this is written to the journal in pieces of about this size while
it passes (see :class:`_Pieces`)."""
_JOURNAL_BEHIND = 64
"""Answered exchanges whose journal lines may still be on their way to the file while
their connections go on; past this many, a response waits for its own line (the writer is
behind, and the backlog a SIGKILL could cost stays bounded)."""


_TARGETS_KEPT = 1024
"""Request paths whose upstream URL :meth:`Forwarder._target` keeps (it starts over when
full: paths that differ every time, such as a query per call, cost no memory)."""

LineSink = Callable[[Callable[[], Built[BaseModel]]], "asyncio.Future[BaseModel | None]"]
"""Queues a journal line built on the writer thread
(:meth:`~recorder._journal.Journal.submit_line`)."""


@dataclass
class _Pieces:
    """A large body on its way to the journal, piece by piece, as it passes.

    Each piece is screened (:class:`~recorder._body_screen.BodyScreen`) and written on the
    journal's writer thread; the loop only queues it. Once a piece cannot be cleared the
    rest is not written in pieces: the exchange is then built whole from the bytes kept in
    memory, redacted and scanned as a small one is, and its line holds the body.
    """

    exchange_id: int
    screen: BodyScreen
    decoder: IncrementalDecoder
    """Undoes the body's ``content-encoding``: pieces are screened and written decoded,
    as the stored body is."""
    submit: LineSink
    known_secrets: set[str]
    """The recording's credentials, a live set the loop adds to: one first seen while the
    body passes is screened for in the pieces not yet queued."""
    sent: int = 0
    """Bytes of the body queued so far."""
    taken: int = 0
    """Chunks of the body queued so far."""
    written: int = 0
    """Pieces built into lines (on the writer thread)."""
    _learnt: int = -1
    """How many credentials the screen was last told of."""

    def send(self, received: list[bytes], *, last: bool = False) -> None:
        """Queue the chunks of ``received`` past those queued so far (joined on the
        writer thread: the loop copies nothing)."""
        chunks = received[self.taken :]
        self.taken = len(received)
        self.sent += sum(map(len, chunks))
        secrets = None
        if len(self.known_secrets) != self._learnt:  # it only grows
            secrets = frozenset(self.known_secrets)
            self._learnt = len(secrets)
        future = self.submit(lambda: self._line(chunks, secrets, last=last))
        future.add_done_callback(_retrieve)  # a failure shows in the exchange's own line

    def _line(
        self, chunks: list[bytes], secrets: frozenset[str] | None, *, last: bool
    ) -> BodyChunk | None:
        if secrets is not None:
            self.screen.learn(secrets)
        plain: bytes | list[bytes] | None
        try:
            if self.decoder.encoding in ("identity", ""):
                plain = chunks  # joined by the screen, with what it held back: one copy
            else:
                plain = self.decoder.feed(b"".join(chunks))
        except ValueError:
            plain = None
        if plain is None or (last and not self.decoder.complete()):
            self.screen.failed = True  # stored as received, whole
            return None
        clean = self.screen.feed(plain)
        if clean is not None and last:
            rest = self.screen.finish()
            clean = None if rest is None else clean + rest
        if not clean:
            return None
        self.written += 1
        return BodyChunk(body_chunk=self.exchange_id, data=clean)


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


@dataclass
class Forwarder:
    """Forwards requests upstream and records complete exchanges.

    On the event loop it only moves bytes: the upstream's chunks go to the client as they
    arrive, and a stream is split into raw events. Building the exchange (parsing the
    bodies), redacting it and scanning it for secrets is handed to ``on_exchange`` as a
    function, which the journal runs on its writer thread before it serialises and writes
    the line. The handler does not wait for that line (the connection's next request would
    wait with it): the exchange is journaled behind the response, by a task that
    :meth:`aclose` waits for, so every answered exchange is in the file before the journal
    closes. Past :data:`_JOURNAL_BEHIND` such tasks a response waits for its own line, and
    with ``on_recorded`` (a replay reading each case's traffic as soon as the case ends)
    every response does.

    Args:
        on_exchange: awaited with a function that builds the redacted, secret-free
            exchange (None: it must not be written); returns the exchange once it is
            journaled (:meth:`~recorder._journal.Journal.append_built`).
        upstreams: where requests may go.
        redaction: extra redaction rules on top of the defaults.
        id_offset: the first exchange id (when extending an existing cassette).
    """

    on_exchange: Callable[[Callable[[], Built[Exchange]]], Awaitable[Exchange | None]]
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
    lines: LineSink | None = None
    """The journal's :meth:`~recorder._journal.Journal.submit_line`: where a large body's
    pieces go while it passes, and the lines ``build_worker`` builds. None: every body is
    journaled whole with its exchange, built in this process. Not used with
    ``on_recorded``, which wants the whole exchange."""
    build_worker: BuildWorker | None = None
    """Builds the exchanges in a worker process (``recorder._build_worker``), with
    ``lines``; its owner (the recorder, which has it write the cassette at the end) closes
    it. None: they are built on the journal's writer thread, in this process."""
    _forwarded: int = 0
    _warned_authorization: bool = False
    _journaling: set[asyncio.Task[None]] = field(default_factory=set)
    """The exchanges being journaled behind their responses (see :meth:`_journal`)."""
    _session: aiohttp.ClientSession | None = None
    _targets: dict[str, tuple[str, URL]] = field(default_factory=dict)
    """:meth:`_target`'s memo: request path -> upstream URL."""

    def __post_init__(self) -> None:
        # A password in --upstream (https://user:PASS@gateway) is a credential of the
        # recording: found and masked wherever it would appear.
        for base in self.upstreams.bases:
            self.known_secrets |= url_credentials(base)
        remember_credentials(self.known_secrets)

    def _http(self) -> aiohttp.ClientSession:
        """The upstream client: aiohttp, keep-alive, bodies left as the upstream encoded
        them (rec forwards the exact bytes), no cookie jar (the proxy is not a browser),
        each response read to its declared end as a direct client reads it
        (:func:`~recorder._lenient_http.lenient_connector`)."""
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=lenient_connector(limit=0, limit_per_host=0, force_close=False),
                timeout=aiohttp.ClientTimeout(total=None, connect=15.0, sock_read=600.0),
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
            )
            mark_internal(self._session)  # rec's own traffic, never a tool's
        return self._session

    def _target(self, path_qs: str) -> tuple[str, URL]:
        """The upstream URL of a request path, as text and as the URL aiohttp sends to (the
        path as the client wrote it, not re-quoted); remembered per path, since an agent
        sends the same few paths again and again.

        Raises:
            InputError: as :meth:`Upstreams.url_for`.
            ValueError: a URL yarl cannot read.
        """
        found = self._targets.get(path_qs)
        if found is None:
            url = self.upstreams.url_for(path_qs)
            found = (url, URL(url, encoded=True))
            if len(self._targets) >= _TARGETS_KEPT:
                self._targets.clear()
            self._targets[path_qs] = found
        return found

    async def aclose(self) -> None:
        """Finish journaling the exchanges answered so far, then close the upstream
        connection pool."""
        while self._journaling:
            await asyncio.wait(set(self._journaling))
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def forward(self, request: IncomingRequest, writer: ResponseWriter) -> None:
        """Forward ``request``, stream the response to ``writer``, and record the exchange.

        The exchange is journaled right behind the response, without holding the
        connection (:meth:`_journal`): it is in the file once the writer thread has built
        it, and before :meth:`aclose` returns (fsynced within a few ms,
        :mod:`recorder._journal`).
        """
        told = request.headers.get(CREDENTIALS_HEADER)
        if told is not None:  # an instrumented process's tool and MCP credentials
            learnt = credentials_from_header(told)
            remember_credentials(learnt)
            self.known_secrets |= {value for value in learnt if len(value) >= MIN_SECRET_LENGTH}
        self.known_secrets |= credentials_in(
            {k: v for k, v in request.headers.items() if k != CREDENTIALS_HEADER},
            request.path_qs,
        )
        headers = {
            k: v
            for k, v in request.headers.items()
            if k not in DROP_REQUEST_HEADERS and k != CREDENTIALS_HEADER
        }
        session = self._http()
        try:
            url, target = self._target(request.path_qs)
        except (InputError, ValueError) as exc:
            message = mask(f"rec refused the request: {exc}", self.known_secrets)
            log.warning("%s", message)
            await writer.send_error(google_error(400, message, "INVALID_ARGUMENT"))
            return
        if target.user is not None and "authorization" in headers:
            # One Authorization header reaches the upstream: the credential configured for
            # it in --upstream's userinfo (sent as Basic auth) wins over the client's own.
            del headers["authorization"]
            if not self._warned_authorization:
                self._warned_authorization = True
                log.warning(
                    "the --upstream URL carries a user and password: rec sends those as the "
                    "Authorization header, in place of the client's own"
                )
        # Ids follow the arrival order of forwarded requests (not of every request the proxy
        # saw: in auto mode replayed hits take none), continuing after ``id_offset``.
        exchange_id = self.id_offset + self._forwarded
        self._forwarded += 1
        try:
            upstream = await session.request(
                request.method,
                target,
                headers=headers,
                data=request.body,
                allow_redirects=False,
            )
        except aiohttp.ServerDisconnectedError:
            # The upstream took the request and closed without an answer: the client's
            # connection is closed the same way, so it sees the failure (and retries) as
            # it would talking to the upstream directly. Nothing is recorded.
            log.warning(
                "#%d: the upstream %s closed the connection without an answer; the client's "
                "connection is closed the same way (nothing recorded)",
                exchange_id,
                mask(url.split("?")[0], self.known_secrets),
            )
            writer.abort()
            return
        except aiohttp.ClientResponseError as exc:
            # The upstream's answer is not HTTP (a bad status line or header): a direct
            # client fails on it too, so the client's connection is closed the same way.
            log.warning(
                "#%d: the upstream %s answered with a malformed HTTP response (%s); the "
                "client's connection is closed (nothing recorded)",
                exchange_id,
                mask(url.split("?")[0], self.known_secrets),
                mask(_one_line(exc.message), self.known_secrets),
            )
            writer.abort()
            return
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as exc:
            message = mask(
                f"rec could not reach the upstream {url.split('?')[0]}: {exc!r}", self.known_secrets
            )
            log.error("%s", message)
            await writer.send_error(google_error(502, message, "UNAVAILABLE"))
            return

        _acknowledge_promptly(upstream)
        response_headers = _joined(upstream.headers)
        content_type = response_headers.get("content-type")
        encoding = response_headers.get("content-encoding")
        is_stream = (content_type or "").startswith("text/event-stream")
        splitter = SseSplitter() if is_stream else None
        raw_events: list[tuple[str, float]] = []
        decoder: IncrementalDecoder | None = None
        if is_stream:
            try:
                decoder = IncrementalDecoder(encoding)
            except InputError:
                splitter = None  # an encoding rec cannot undo: stored as received
        received: list[bytes] = []
        pending = 0
        """Bytes received past those queued to the journal in pieces."""
        pieces = self._pieces(exchange_id, is_stream=is_stream, encoding=encoding)
        cut = False
        finished = False
        gone: BaseException | None = None
        """Set when the client went away before the upstream's answer ended."""

        def take(chunk: bytes) -> None:
            nonlocal pending, splitter
            received.append(chunk)
            pending += len(chunk)
            if pieces is not None and pending >= _PIECE:
                pieces.send(received)
                pending = 0
            if splitter is None or decoder is None:
                return
            try:
                decoded = decoder.feed(chunk)
            except ValueError as exc:
                log.warning("#%d: %s; stored as received", exchange_id, exc)
                splitter = None
                return
            offset = request.elapsed_ms()
            raw_events.extend((raw, offset) for raw in splitter.feed(decoded))

        async def rest() -> None:
            async for chunk in upstream.content.iter_any():
                take(chunk)

        if is_stream:
            self.streams_in_flight += 1
        try:
            held: bytes | None = None
            """A chunk on its way to the client, not yet taken into the recording."""
            try:
                # A stream's headers go at once; an answer read whole sends them with its
                # first bytes, in one write.
                await writer.start(upstream.status, response_headers, with_body=not is_stream)
                async for chunk in upstream.content.iter_any():
                    held = chunk
                    await writer.write(chunk)  # the client first; parsing can wait
                    held = None
                    take(chunk)
                finished = True
            except asyncio.CancelledError as exc:
                gone = exc  # the client closed its connection: aiohttp cancels the handler
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                if held is not None or not writer.started:  # writing to a closed client
                    gone = exc
                else:
                    cut = True
                    log.warning(
                        "#%d: the upstream broke off the response (%s); recorded as cut",
                        exchange_id,
                        type(exc).__name__,
                    )
            except ConnectionResetError as exc:  # the same, raised by the transport itself
                gone = exc
            if held is not None:
                take(held)
            if gone is not None:
                finished = await self._after_the_client_left(rest)
        finally:
            if finished:
                upstream.release()  # the connection goes back to the pool
            else:
                upstream.close()  # cut, or the client went away: this connection is done
            if is_stream:
                self.streams_in_flight -= 1
        if gone is not None and not finished:
            # An aborted response: nothing recorded, which recorder._server says.
            raise ConnectionResetError("the client closed its connection") from gone

        stored_whole = splitter is None or (splitter.lossy and not cut)
        received_exchange = Received(
            method=request.method,
            request_headers=request.headers,
            request_body=request.body,
            started_at=request.started_at,
            url=url,
            status=upstream.status,
            headers=response_headers,
            content_type=content_type,
            encoding=encoding,
            received=received,
            duration_ms=round(request.elapsed_ms(), 3),
            raw_events=None if not is_stream or stored_whole else raw_events,
            line_ending=(splitter.line_ending if splitter is not None else None) or "\r\n",
            tail=splitter.tail() if splitter is not None and not stored_whole else None,
            cut=cut,
            known_secrets=frozenset(self.known_secrets),
        )
        if pieces is not None and pieces.sent > 0 and not cut:
            pieces.send(received, last=True)
        else:
            pieces = None
        if gone is None:
            await self._journal(received_exchange, exchange_id=exchange_id, pieces=pieces)
        else:  # the client left at the end: recorded whole, and no cancel may cut that
            await asyncio.shield(
                self._record(received_exchange, exchange_id=exchange_id, pieces=pieces)
            )
            writer.aborted = True  # nothing more to send; the server ends it quietly
            return
        if cut:
            writer.abort()

    async def _journal(self, got: Received, *, exchange_id: int, pieces: _Pieces | None) -> None:
        """Journal an answered exchange behind its response: as a task the handler does not
        wait for, unless ``on_recorded`` wants it before the response ends or
        :data:`_JOURNAL_BEHIND` exchanges are on their way already."""
        record = self._record(got, exchange_id=exchange_id, pieces=pieces)
        if self.on_recorded is not None or len(self._journaling) >= _JOURNAL_BEHIND:
            await record
            return
        task = asyncio.get_running_loop().create_task(record)
        self._journaling.add(task)
        task.add_done_callback(functools.partial(self._journaled, exchange_id))

    def _journaled(self, exchange_id: int, task: asyncio.Task[None]) -> None:
        """A task of :meth:`_journal` ended: a failure it did not handle (a bug: the disk's
        are counted by :meth:`_record`) is logged and counted as lost, never dropped."""
        self._journaling.discard(task)
        exc = None if task.cancelled() else task.exception()
        if not task.cancelled() and exc is None:
            return
        self.lost += 1
        if self.lost == 1:
            self.lost_reason = "cancelled" if exc is None else f"{type(exc).__name__}: {exc}"
        log.error(
            "#%d was answered but could not be recorded",
            exchange_id,
            exc_info=(type(exc), exc, exc.__traceback__) if exc is not None else None,
        )

    async def _after_the_client_left(self, rest: Callable[[], Awaitable[None]]) -> bool:
        """Read the rest of an answer whose client closed its connection before its end;
        True when it ended within :data:`_DRAIN_GRACE_S` seconds (it is then recorded whole).

        Many clients (LiteLLM's Anthropic one, SSE readers stopping at ``[DONE]``) close
        once they have read the last event, before the end of the chunked body: that answer
        was received in full and belongs in the cassette. An answer still going (the stop
        button of ``adk web`` mid-stream) is given up at once after the grace, so the
        upstream stops generating.
        """
        task = asyncio.current_task()
        if task is not None and hasattr(task, "uncancel"):
            while task.cancelling():  # pragma: no branch - Python 3.11+
                task.uncancel()  # the cancel is handled here; the caller raises it again
        try:
            await asyncio.wait_for(rest(), _DRAIN_GRACE_S)
        except (aiohttp.ClientError, asyncio.TimeoutError, asyncio.CancelledError):
            return False
        return True

    def _pieces(self, exchange_id: int, *, is_stream: bool, encoding: str | None) -> _Pieces | None:
        """How a body goes to the journal in pieces, for a response that may (None: whole).

        Not an event stream (stored as events), not an encoding rec cannot undo as it
        goes, not with ``--redact-path`` (that redaction needs the parsed body).
        """
        if (
            self.lines is None
            or self.on_recorded is not None
            or is_stream
            or self.redaction.json_paths
        ):
            return None
        try:
            decoder = IncrementalDecoder(encoding)
        except InputError:
            return None
        # The screen learns the credentials with the first piece, on the writer thread
        # (:meth:`_Pieces.send` always passes them then): a body too short for pieces, as
        # nearly every one is, costs the loop no spellings of them.
        screen = BodyScreen(())
        return _Pieces(exchange_id, screen, decoder, self.lines, self.known_secrets)

    def _chunked(self, got: Received, exchange_id: int, pieces: _Pieces) -> Built[BaseModel]:
        """The line that ends a body written in pieces: the exchange without its body, or,
        when a piece could not be cleared, the whole exchange as :meth:`_exchange` builds
        it. Runs on the journal's writer thread, after the last piece."""
        if pieces.screen.failed or not pieces.written:
            return self._exchange(got, exchange_id)
        head = self._exchange(replace(got, received=[]), exchange_id)
        if head is None:
            return None
        # ChunkedExchange's own JSON, the head's text inside (as pydantic-core writes it).
        data = b'{"body_chunks":%d,"exchange":%s}\n' % (pieces.written, head.data[:-1])
        return Written(ChunkedExchange(body_chunks=pieces.written, exchange=head.line), data)

    def _exchange(self, got: Received, exchange_id: int) -> Written[Exchange] | None:
        """The exchange to journal, redacted and scanned, with its journal text; None when
        it must not be written (:func:`~recorder._exchange_build.build_exchange`, whose
        verdict is logged and counted here).

        Runs on the journal's writer thread: it parses the bodies, which is most of the CPU
        an exchange costs, so the event loop keeps forwarding meanwhile.
        """
        built = build_exchange(got, exchange_id, self.redaction)
        self._report(built.problem, built.level, refused=built.refused)
        return built.written

    def _built_by_worker(
        self, got: Received, exchange_id: int, line: LineBuild | None
    ) -> Built[BaseModel]:
        """:meth:`_exchange`, as the build worker built it (``line``: its line's text, and
        only the exchange's id kept), or here where it did not (None); on the journal's
        writer thread (:class:`~recorder._build_worker.WorkerBuild`)."""
        if line is None:
            return self._exchange(got, exchange_id)
        self._report(line.problem, line.level, refused=line.refused)
        if line.data is None:
            return None
        return Written(BuiltElsewhere(id=exchange_id), line.data)

    def _worker_lines(self) -> LineSink | None:
        """Where the lines the build worker builds go; None when whole exchanges are built
        in this process (no worker, or ``on_recorded``, which wants the exchange itself)."""
        if self.build_worker is None or self.on_recorded is not None:
            return None
        return self.lines

    def _report(self, problem: str | None, level: int, *, refused: bool) -> None:
        """Count and log a build's verdict (its message names the exchange)."""
        if refused:
            self.refused += 1
        if problem is not None:
            log.log(level, "%s", problem)

    async def _record(
        self, got: Received, *, exchange_id: int, pieces: _Pieces | None = None
    ) -> None:
        try:
            line: BaseModel | None
            sink = self._worker_lines() if pieces is None else None
            if sink is not None:
                assert self.build_worker is not None
                finish = functools.partial(self._built_by_worker, got, exchange_id)
                line = await sink(WorkerBuild(self.build_worker, got, exchange_id, finish))
            elif pieces is None:
                line = await self.on_exchange(lambda: self._exchange(got, exchange_id))
            else:
                line = await pieces.submit(lambda: self._chunked(got, exchange_id, pieces))
                if isinstance(line, ChunkedExchange):
                    line = line.exchange
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
        if line is None:
            return
        if self.on_recorded is not None:
            assert isinstance(line, Exchange)  # never built by the worker (see _worker_lines)
            self.on_recorded(line)
        self.recorded += 1
        if not log.isEnabledFor(logging.INFO):
            return
        if got.raw_events is not None:
            detail = f"{len(got.raw_events)} events" + (", cut" if got.cut else "")
        else:
            detail = "unary"
        log.info(
            "#%d %s %s -> %d (%s, %.0f ms)",
            exchange_id,
            got.method,
            urlsplit(got.url).path,
            got.status,
            detail,
            got.duration_ms,
        )
