"""Record a Gemini Live session: relay its WebSocket to the upstream and journal every frame.

The proxy accepts a WebSocket on a Live path (``cassettes._live.is_live_path``), opens one
to the same path on the configured upstream (``ws`` for an ``http`` upstream, ``wss`` for
``https``; the Vertex AI rules of :class:`~recorder._traffic.Upstreams` apply), and
relays messages both ways untouched, text as text and binary as binary, each the moment it
arrives. Each message is also handed to the Live journal (``.rec/NAME.live.jsonl``) as a
:class:`~cassettes._live.LiveJournalLine`: parsing, redaction and the secret scan run on
the journal's writer thread, so relaying never waits on the disk, and the lines keep the
order the messages crossed the proxy in. A frame that still holds a credential after
redaction is not written (counted in :attr:`LiveRelay.refused`; its replay then fails
closed at that frame).

A close from either side is passed to the other with its code and reason; a code that
only reports a close and is never sent (1005, 1006, 1015: the connection dropped) is
passed on as 1014 from the upstream (bad gateway) and 1001 from the client (going away).
An upstream that refuses the handshake is answered to the client with the same HTTP
status, so google-genai raises the error it would have raised without rec.

A frame is stored as it crossed: parsed when it is plain JSON, else as its text (JSON
nested deeper than a parser goes, or holding ``NaN``/``Infinity``, which JSON has no
value for) or bytes. A frame larger than :data:`MAX_FRAME_VARIABLE` bytes (default
:data:`DEFAULT_MAX_FRAME_BYTES`) is neither relayed nor held: the session is closed with
1009 (message too big) and the recording counts it as lost, so ``rec start`` fails.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import aiohttp
from aiohttp import web

from cassettes._errors import InputError, SecretFound
from cassettes._google_error import google_error
from cassettes._live import LiveClose, LiveFrame, LiveJournalLine, LiveOpen, frame_from_message
from cassettes._redaction import (
    RedactionRules,
    credentials_in,
    ensure_no_secrets,
    redact_live_line,
)
from cassettes._secret_shapes import mask
from cassettes._timing import now_iso
from recorder._journal import Journal
from recorder._traffic import Upstreams, is_vertex_live, mark_internal, setup_location, spawn

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "MAX_FRAME_VARIABLE",
    "LiveRelay",
    "live_error_response",
    "max_frame_bytes",
    "websocket_url",
]

log = logging.getLogger(__name__)

MAX_FRAME_VARIABLE = "REC_LIVE_MAX_FRAME_BYTES"
"""Environment variable: the largest Live frame rec relays and records, in bytes."""
DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024
"""16 MiB: far above what a Live session sends (audio chunks of a few KiB, a picture of a
few MiB), far below what would take the recorder's memory with it."""
_NEVER_SENT = frozenset({1005, 1006, 1015})
"""Close codes that report how a connection ended and must never be sent (RFC 6455 7.4.1)."""
_TOO_BIG = 1009


def max_frame_bytes() -> int:
    """The frame size cap: ``$REC_LIVE_MAX_FRAME_BYTES``, or the default.

    Raises:
        InputError: the variable is not a positive whole number of bytes.
    """
    value = os.environ.get(MAX_FRAME_VARIABLE, "").strip()
    if not value:
        return DEFAULT_MAX_FRAME_BYTES
    if not value.isdigit() or int(value) < 1:
        raise InputError(
            f"{value!r} is not a number of bytes",
            path=MAX_FRAME_VARIABLE,
            fix=f"Give a positive whole number, such as {DEFAULT_MAX_FRAME_BYTES}",
        )
    return int(value)


def _sent_code(code: int | None, sender: Literal["client", "server"]) -> int:
    """The close code to pass on for one a side closed with (see the module docstring)."""
    if code is None or code in _NEVER_SENT:
        return 1014 if sender == "server" else 1001
    return code


_NOT_FORWARDED = frozenset(
    {
        "host",
        "connection",
        "upgrade",
        "keep-alive",
        "content-length",
        "transfer-encoding",
        "sec-websocket-key",
        "sec-websocket-version",
        "sec-websocket-extensions",
        "sec-websocket-accept",
        "accept-encoding",
    }
)
"""Headers of the client's handshake that belong to its own connection to the proxy."""


def websocket_url(http_url: str) -> str:
    """The WebSocket URL of an upstream URL (``http`` -> ``ws``, ``https`` -> ``wss``)."""
    if http_url.startswith("https://"):
        return "wss://" + http_url[len("https://") :]
    if http_url.startswith("http://"):
        return "ws://" + http_url[len("http://") :]
    return http_url


def live_error_response(status: int, message: str, code: str) -> web.Response:
    """A refused handshake: the Google error envelope with an HTTP status."""
    return web.json_response(google_error(status, message, code), status=status)


def _parsed(payload: str | bytes) -> object:
    """The JSON of a message (None when it holds none)."""
    try:
        return json.loads(payload)
    except ValueError:
        return None


async def _refused(
    client: web.WebSocketResponse | None, status: int, message: str, code: str
) -> web.StreamResponse:
    """Refuse a session: with an HTTP status before the handshake, else with close code
    1011 (or 1008 for a refusal of the session itself) and the reason."""
    if client is None:
        return live_error_response(status, message, code)
    close_code = 1008 if status == 400 else 1011
    await client.close(code=close_code, message=message.encode("utf-8")[:123])
    return client


@dataclass
class LiveRelay:
    """Relays Live sessions to the upstream and journals their frames.

    Args:
        journal: the Live journal.
        upstreams: where sessions may go.
        redaction: extra redaction rules (json paths apply to every frame).
        known_secrets: the recording's credentials so far (shared with the forwarder).
        max_frame: the largest frame relayed and recorded, in bytes.
        on_lost: told why each time a frame is relayed but not recorded, or refused for
            its size (the recording then fails).
    """

    journal: Journal[LiveJournalLine]
    upstreams: Upstreams = field(default_factory=Upstreams)
    redaction: RedactionRules = field(default_factory=RedactionRules)
    known_secrets: set[str] = field(default_factory=set)
    max_frame: int = field(default_factory=max_frame_bytes)
    on_lost: Callable[[str], None] | None = None
    sessions: int = 0
    """Sessions opened so far (their ids count up from ``id_offset``)."""
    id_offset: int = 0
    frames: int = 0
    refused: int = 0
    """Frames that held a credential after redaction, so were not written."""
    lost: int = 0
    """Frames relayed but not written (a full disk)."""
    in_flight: int = 0
    _session: aiohttp.ClientSession | None = None
    _writes: set[asyncio.Future[Any]] = field(default_factory=set)

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None, connect=15.0),
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
            )
            mark_internal(self._session)
        return self._session

    async def aclose(self) -> None:
        """Wait for the frames still being written, then close the upstream client."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def relay(self, request: web.Request) -> web.StreamResponse:
        """Serve one Live WebSocket (the handshake is ``request``) until either side closes.

        A Vertex AI Live path names no location: without ``--vertex-upstream`` the client's
        socket is accepted first and its ``setup`` read, whose model names the location
        (a refusal is then a close with code 1011 and the reason, not an HTTP status).
        """
        path_qs = request.raw_path
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.known_secrets |= credentials_in(headers, path_qs)
        client: web.WebSocketResponse | None = None
        first: aiohttp.WSMessage | None = None
        location: str | None = None
        if is_vertex_live(path_qs) and self.upstreams.vertex is None:
            client = web.WebSocketResponse(max_msg_size=self.max_frame, autoping=True)
            await client.prepare(request)
            first = await client.receive()
            if first.type not in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                return client
            location = setup_location(_parsed(first.data))
        try:
            url = websocket_url(self.upstreams.url_for(path_qs, location=location))
        except InputError as exc:
            message = mask(f"rec refused the Live session: {exc}", self.known_secrets)
            log.warning("%s", message)
            return await _refused(client, 400, message, "INVALID_ARGUMENT")
        upstream = await self._connect(url, request, client)
        if not isinstance(upstream, aiohttp.ClientWebSocketResponse):
            return upstream
        if client is None:
            protocols = (upstream.protocol,) if upstream.protocol else ()
            client = web.WebSocketResponse(
                max_msg_size=self.max_frame, autoping=True, protocols=protocols
            )
            await client.prepare(request)
        await self._relay_session(client, upstream, url, headers, first)
        return client

    async def _connect(
        self, url: str, request: web.Request, client: web.WebSocketResponse | None
    ) -> aiohttp.ClientWebSocketResponse | web.StreamResponse:
        """The upstream socket, or the refusal the client was given."""
        forwarded = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_FORWARDED}
        shown = url.split("?", 1)[0]
        try:
            return await self._http().ws_connect(
                url,
                headers=forwarded,
                autoping=True,
                max_msg_size=self.max_frame,
                protocols=request.headers.getall("sec-websocket-protocol", ()),
            )
        except aiohttp.WSServerHandshakeError as exc:
            message = mask(
                f"the upstream {shown} refused the Live session ({exc.status} {exc.message})",
                self.known_secrets,
            )
            log.error("%s", message)
            status = exc.status if 400 <= exc.status <= 599 else 502
            return await _refused(client, status, message, "UNAVAILABLE")
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError) as exc:
            message = mask(f"rec could not reach the upstream {shown}: {exc!r}", self.known_secrets)
            log.error("%s", message)
            return await _refused(client, 502, message, "UNAVAILABLE")

    async def _relay_session(
        self,
        client: web.WebSocketResponse,
        upstream: aiohttp.ClientWebSocketResponse,
        url: str,
        headers: dict[str, str],
        first: aiohttp.WSMessage | None,
    ) -> None:
        """Journal the session's opening, relay it both ways, journal its close."""
        session_id = self.id_offset + self.sessions
        self.sessions += 1
        started = time.perf_counter()
        stored_headers = {
            k: v for k, v in sorted(headers.items()) if k not in _NOT_FORWARDED and k != "origin"
        }
        self._journal(
            LiveJournalLine(
                session=session_id,
                open=LiveOpen(opened_at=now_iso(), url=url, headers=stored_headers),
            ),
            session_id,
        )
        log.info("live #%d opened %s", session_id, url.split("?", 1)[0])
        self.in_flight += 1
        closed: list[LiveClose] = []
        try:
            if first is not None:  # the setup read to find the upstream
                if first.type is aiohttp.WSMsgType.TEXT:
                    await upstream.send_str(first.data)
                else:
                    await upstream.send_bytes(first.data)
                self._journal_frame("client", 0.0, first.data, session_id)
            await self._pump_both(client, upstream, session_id, started, closed)
        finally:
            self.in_flight -= 1
            if not upstream.closed:
                await upstream.close()
            if not client.closed:
                await client.close()
            close = closed[0] if closed else LiveClose(code=client.close_code)
            self._journal(LiveJournalLine(session=session_id, close=close), session_id)
            log.info("live #%d closed (%s)", session_id, close.code)

    async def _pump_both(
        self,
        client: web.WebSocketResponse,
        upstream: aiohttp.ClientWebSocketResponse,
        session_id: int,
        started: float,
        closed: list[LiveClose],
    ) -> None:
        """Relay frames both ways until one side closes; the other is given 5 s to end."""
        tasks = [
            spawn(
                self._pump(client, upstream, "client", session_id, started, closed),
                name=f"rec-live-{session_id}-client",
            ),
            spawn(
                self._pump(upstream, client, "server", session_id, started, closed),
                name=f"rec-live-{session_id}-server",
            ),
        ]
        try:
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                try:
                    await asyncio.wait_for(task, timeout=5)
                except (asyncio.TimeoutError, ConnectionError, aiohttp.ClientError):
                    task.cancel()
            for task in done:
                exc = task.exception()
                if exc is not None and not isinstance(exc, ConnectionError | aiohttp.ClientError):
                    raise exc
        finally:
            for task in tasks:
                task.cancel()

    async def _pump(
        self,
        source: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
        target: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
        sender: Literal["client", "server"],
        session_id: int,
        started: float,
        closed: list[LiveClose],
    ) -> None:
        """Relay ``sender``'s frames to ``target``, journaling each, until ``source``
        closes; then close ``target`` the same way (the first close is the session's)."""
        while True:
            message = await source.receive()
            if message.type is aiohttp.WSMsgType.TEXT:
                await target.send_str(message.data)
            elif message.type is aiohttp.WSMsgType.BINARY:
                await target.send_bytes(message.data)
            else:
                break
            elapsed = round((time.perf_counter() - started) * 1000.0, 3)
            self._journal_frame(sender, elapsed, message.data, session_id)
        reason, refused = self._close_reason(message, sender, session_id)
        code = _TOO_BIG if refused else source.close_code
        if not closed:
            closed.append(LiveClose(code=code, reason=reason or None))
        if not target.closed:
            await target.close(code=_sent_code(code, sender), message=reason.encode()[:123])

    def _close_reason(
        self, message: aiohttp.WSMessage, sender: Literal["client", "server"], session_id: int
    ) -> tuple[str, bool]:
        """The reason of the message that ended a side, and whether it was a frame over
        :attr:`max_frame` (refused)."""
        if message.type is aiohttp.WSMsgType.CLOSE and isinstance(message.extra, str):
            return message.extra, False
        if message.type is aiohttp.WSMsgType.ERROR:
            if getattr(message.data, "code", None) == _TOO_BIG:
                return self._refused_frame(sender, session_id), True
        return "", False

    def _refused_frame(self, sender: Literal["client", "server"], session_id: int) -> str:
        """Say that a frame over :attr:`max_frame` bytes was refused (the recording fails);
        the close reason to pass on."""
        what = f"a Live frame from the {sender} is larger than {self.max_frame} bytes"
        log.error(
            "live #%d: %s; it was refused and the session closed (1009). Set %s to a "
            "larger size in bytes to record such frames",
            session_id,
            what,
            MAX_FRAME_VARIABLE,
        )
        if self.on_lost is not None:
            self.on_lost(f"{what} (set {MAX_FRAME_VARIABLE} to allow it)")
        return f"rec: {what}"

    def _journal_frame(
        self, sender: Literal["client", "server"], offset: float, payload: Any, session_id: int
    ) -> None:
        self._journal(lambda: frame_from_message(sender, offset, payload), session_id, frame=True)

    def _journal(
        self,
        item: LiveJournalLine | Callable[[], LiveFrame],
        session_id: int,
        *,
        frame: bool = False,
    ) -> None:
        known = frozenset(self.known_secrets)

        def build() -> LiveJournalLine | None:
            line = (
                LiveJournalLine(session=session_id, frame=item())  # type: ignore[operator]
                if frame
                else item
            )
            assert isinstance(line, LiveJournalLine)
            line = redact_live_line(line, self.redaction, known_secrets=known)
            try:
                ensure_no_secrets(line, path="live journal", known_secrets=known)
            except SecretFound as exc:
                self.refused += 1
                log.error("a frame of live #%d was not recorded: %s", session_id, exc)
                return None
            if frame:
                self.frames += 1
            return line

        future = self.journal.submit_in_order(build)
        self._writes.add(future)
        future.add_done_callback(self._written)

    def _written(self, future: asyncio.Future[Any]) -> None:
        self._writes.discard(future)
        if future.cancelled():
            return
        exc = future.exception()
        if exc is None:
            return
        self.lost += 1
        why = f"a Live frame was relayed but could not be recorded: {exc!r}"
        if isinstance(exc, OSError):
            why = f"a Live frame was relayed but could not be recorded: {exc}"
        if self.lost == 1:
            log.error("%s", why)
        if self.on_lost is not None:
            self.on_lost(why)
