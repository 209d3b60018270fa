"""Forward a request to the real model API and stream the answer back, teeing it.

This is the recording half of the proxy. Every chunk from the upstream goes to the client
the moment it arrives (the SSE stream is never buffered: time to first byte is the
upstream's) and, decoded, into an :class:`~cassettes._sse.SseSplitter` that stamps each
event with its offset from the request start. When the exchange completes it is handed to
the journal (``recorder._exchange_journal``), which builds it (parsing the bodies and
events), redacts it and scans it for secrets off the event loop: the loop only moves
bytes. A large body (over :data:`_PIECE`) goes to the journal in screened pieces while it
passes, so the end of its response waits only for the last piece and a small exchange
line, not for the whole body to be parsed, scanned and written. The upstream client is
aiohttp's, with kept-alive connections.

Only the configured upstream is ever contacted: the proxy is not an open proxy (the
floor's :class:`~recorder._traffic.Upstreams` picks the host; the path never chooses
it). Record mode, ``auto`` mode and ``--record-missing`` all forward through here.

What the client receives is always what the upstream sent, byte for byte, up to the end its
framing declares (bytes past it are dropped, as a direct client ignores them; an answer that
is not HTTP closes the client's connection, as it fails a direct client). A body rec
cannot store parsed (an unknown ``content-encoding``, bytes that do not decode as their
header says, an event stream that is not UTF-8) is stored as its exact bytes. If the
journal cannot be written (a full disk) the client is still answered; the exchange is
counted by the journal (``ExchangeJournal.lost``) and reported once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import aiohttp
from yarl import URL

from cassettes._bodies import IncrementalDecoder
from cassettes._errors import InputError
from cassettes._google_error import google_error
from cassettes._redaction import credentials_in
from cassettes._secret_shapes import (
    CREDENTIALS_HEADER,
    mask,
    remember_credentials,
    url_credentials,
)
from cassettes._sse import SseSplitter
from recorder._exchange_build import DROP_REQUEST_HEADERS, Received
from recorder._exchange_journal import ExchangeJournal, Pieces
from recorder._traffic import (
    IncomingRequest,
    ResponseWriter,
    Upstreams,
    acknowledge_promptly,
    lenient_connector,
    mark_internal,
)

__all__ = ["Forwarder"]

log = logging.getLogger(__name__)


def _joined(headers: Mapping[str, str]) -> dict[str, str]:
    """Response headers as one value per lower-cased name (repeated ones joined with ``, ``,
    as an HTTP library reads them)."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _one_line(text: str, limit: int = 200) -> str:
    """aiohttp's multi-line parser message (the line, a caret under the fault) as one line."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit] + "..."


_DRAIN_GRACE_S = 2.0
"""How long the rest of an answer is read after its client left (see
:meth:`Forwarder._after_the_client_left`): an ended stream's last bytes follow its last
event at once; a stream still generating is given up after this."""
_PIECE = 1 << 20
"""A body longer than this goes to the journal in pieces of about this size while it
passes (``recorder._exchange_journal``)."""


_NOT_FORWARDED = DROP_REQUEST_HEADERS | {CREDENTIALS_HEADER}
"""Request headers not sent upstream: hop-by-hop and framing ones, and the credentials an
instrumented process tells rec (learnt here, never forwarded nor written)."""

_TARGETS_KEPT = 1024
"""Request paths whose upstream URL :meth:`Forwarder._target` keeps (it starts over when
full: paths that differ every time, such as a query per call, cost no memory)."""


class _Answer:
    """An upstream's answer on its way to the client, and what recording keeps of it: the
    bytes received and, for an event stream, each event with its offset from the request's
    start (decoded as it passes; an encoding rec cannot undo is stored as received)."""

    def __init__(
        self,
        upstream: aiohttp.ClientResponse,
        request: IncomingRequest,
        exchange_id: int,
        *,
        journal: ExchangeJournal | None = None,
        known_secrets: set[str] | None = None,
    ) -> None:
        self.upstream = upstream
        self.request = request
        self.exchange_id = exchange_id
        self.headers = _joined(upstream.headers)
        self.content_type = self.headers.get("content-type")
        self.encoding = self.headers.get("content-encoding")
        self.is_stream = (self.content_type or "").startswith("text/event-stream")
        self.splitter: SseSplitter | None = SseSplitter() if self.is_stream else None
        self.raw_events: list[tuple[str, float]] = []
        self.decoder: IncrementalDecoder | None = None
        if self.is_stream:
            try:
                self.decoder = IncrementalDecoder(self.encoding)
            except InputError:
                self.splitter = None  # an encoding rec cannot undo: stored as received
        self.received: list[bytes] = []
        self.pending = 0
        """Bytes received past those queued to the journal in pieces."""
        self.pieces: Pieces | None = None
        """How the body goes to the journal in pieces (asked of ``journal`` once the body
        is longer than :data:`_PIECE`: nearly none is)."""
        self._journal = journal
        self._known_secrets = known_secrets if known_secrets is not None else set()
        self.cut = False
        self.finished = False
        self.gone: BaseException | None = None
        """Set when the client went away before the upstream's answer ended."""

    def take(self, chunk: bytes) -> None:
        """Keep a chunk the client was sent (and split a stream's events out of it)."""
        self.received.append(chunk)
        self.pending += len(chunk)
        if self.pending >= _PIECE and self._in_pieces():
            assert self.pieces is not None
            self.pieces.send(self.received)
            self.pending = 0
        if self.splitter is None or self.decoder is None:
            return
        try:
            decoded = self.decoder.feed(chunk)
        except ValueError as exc:
            log.warning("#%d: %s; stored as received", self.exchange_id, exc)
            self.splitter = None
            return
        offset = self.request.elapsed_ms()
        self.raw_events.extend((raw, offset) for raw in self.splitter.feed(decoded))

    def _in_pieces(self) -> bool:
        """Whether the body goes to the journal in pieces (:attr:`pieces`)."""
        if self._journal is not None:
            self.pieces = self._journal.pieces(
                self.exchange_id,
                is_stream=self.is_stream,
                encoding=self.encoding,
                known_secrets=self._known_secrets,
            )
            self._journal = None
        return self.pieces is not None

    async def rest(self) -> None:
        """Read (and keep) the rest of the answer."""
        async for chunk in self.upstream.content.iter_any():
            self.take(chunk)

    def received_exchange(self, url: str, known_secrets: frozenset[str]) -> Received:
        """What the journal builds the exchange from."""
        request, splitter = self.request, self.splitter
        stored_whole = splitter is None or (splitter.lossy and not self.cut)
        return Received(
            method=request.method,
            request_headers=request.headers,
            request_body=request.body,
            started_at=request.started_at,
            url=url,
            status=self.upstream.status,
            headers=self.headers,
            content_type=self.content_type,
            encoding=self.encoding,
            received=self.received,
            duration_ms=round(request.elapsed_ms(), 3),
            raw_events=None if not self.is_stream or stored_whole else self.raw_events,
            line_ending=(splitter.line_ending if splitter is not None else None) or "\r\n",
            tail=splitter.tail() if splitter is not None and not stored_whole else None,
            cut=self.cut,
            known_secrets=known_secrets,
        )


@dataclass
class Forwarder:
    """Forwards requests upstream and hands each complete exchange to the journal.

    On the event loop it only moves bytes: the upstream's chunks go to the client as they
    arrive, and a stream is split into raw events. The answered exchange is handed to the
    :class:`~recorder._exchange_journal.ExchangeJournal`, which builds, redacts and scans
    it off the event loop and writes its line; the handler does not wait for that line
    (the connection's next request would wait with it) unless the journal is behind or
    wants each exchange before its response ends. :meth:`aclose` waits for every line.

    Args:
        journal: where answered exchanges go.
        upstreams: where requests may go.
        id_offset: the first exchange id (when extending an existing cassette).
    """

    journal: ExchangeJournal
    upstreams: Upstreams = field(default_factory=Upstreams)
    id_offset: int = 0
    known_secrets: set[str] = field(default_factory=set)
    streams_in_flight: int = 0
    _forwarded: int = 0
    _warned_authorization: bool = False
    _session: aiohttp.ClientSession | None = None
    _known_now: frozenset[str] = frozenset()
    """:attr:`known_secrets` as last handed off: one snapshot shared by the exchanges
    until a credential is learnt (the build worker receives it once a round trip)."""
    _targets: dict[str, tuple[str, URL]] = field(default_factory=dict)
    """:meth:`_target`'s memo: request path -> upstream URL."""

    def __post_init__(self) -> None:
        # A password in --upstream (https://user:PASS@gateway) is a credential of the
        # recording: found and masked wherever it would appear.
        for base in self.upstreams.bases:
            self.known_secrets |= url_credentials(base)
        remember_credentials(self.known_secrets)

    @property
    def recorded(self) -> int:
        """Exchanges in the journal (counted by :attr:`journal`, as are those refused or
        lost)."""
        return self.journal.recorded

    def _http(self) -> aiohttp.ClientSession:
        """The upstream client: aiohttp, keep-alive, bodies left as the upstream encoded
        them (rec forwards the exact bytes), no cookie jar (the proxy is not a browser),
        each response read to its declared end as a direct client reads it
        (:func:`~recorder._traffic.lenient_connector`)."""
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
        await self.journal.drained()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def forward(self, request: IncomingRequest, writer: ResponseWriter) -> None:
        """Forward ``request``, stream the response to ``writer``, and record the exchange.

        Four steps: the request's preparation (:meth:`_prepared`), the upstream call
        (:meth:`_sent`), the pump that streams the answer to the client while it tees it
        (:meth:`_pump`), and the hand-off of the exchange to the journal
        (:meth:`_hand_off`). The exchange is journaled right behind the response, without
        holding the connection: it is in the file once it is built (with the exchanges
        answered within :data:`~recorder._exchange_journal.LINGER_S` of it), and before
        :meth:`aclose` returns (fsynced within a few ms, :mod:`recorder._journal`).
        """
        headers = self._learnt(request)
        session = self._http()
        prepared = await self._prepared(request, writer, headers)
        if prepared is None:
            return
        url, target = prepared
        # Ids follow the arrival order of forwarded requests (not of every request the proxy
        # saw: in auto mode replayed hits take none), continuing after ``id_offset``.
        exchange_id = self.id_offset + self._forwarded
        self._forwarded += 1
        upstream = await self._sent(session, request, writer, url, target, headers, exchange_id)
        if upstream is None:
            return
        acknowledge_promptly(upstream)
        answer = _Answer(
            upstream, request, exchange_id, journal=self.journal, known_secrets=self.known_secrets
        )
        await self._pump(answer, writer)
        await self._hand_off(answer, writer, url)

    def _learnt(self, request: IncomingRequest) -> dict[str, str]:
        """Learn the credentials ``request`` carries (so that none reaches the journal), and
        the headers to send upstream."""
        self.known_secrets |= credentials_in(request.headers, request.path_qs)
        return {k: v for k, v in request.headers.items() if k not in _NOT_FORWARDED}

    async def _prepared(
        self, request: IncomingRequest, writer: ResponseWriter, headers: dict[str, str]
    ) -> tuple[str, URL] | None:
        """The upstream URL of ``request`` (``headers`` lose the client's Authorization when
        the upstream's userinfo supplies one); None when it was refused (answered 400)."""
        try:
            url, target = self._target(request.path_qs)
        except (InputError, ValueError) as exc:
            message = mask(f"rec refused the request: {exc}", self.known_secrets)
            log.warning("%s", message)
            await writer.send_error(google_error(400, message, "INVALID_ARGUMENT"))
            return None
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
        return url, target

    async def _sent(
        self,
        session: aiohttp.ClientSession,
        request: IncomingRequest,
        writer: ResponseWriter,
        url: str,
        target: URL,
        headers: dict[str, str],
        exchange_id: int,
    ) -> aiohttp.ClientResponse | None:
        """The upstream's response; None when there is none (the client was answered)."""
        try:
            return await session.request(
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
            return None
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
            return None
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as exc:
            message = mask(
                f"rec could not reach the upstream {url.split('?')[0]}: {exc!r}", self.known_secrets
            )
            log.error("%s", message)
            await writer.send_error(google_error(502, message, "UNAVAILABLE"))
            return None

    async def _pump(self, answer: _Answer, writer: ResponseWriter) -> None:
        """Stream the answer to the client chunk by chunk, teeing it into ``answer``.

        Raises:
            ConnectionResetError: the client left, and the rest of the answer did not come
                within :data:`_DRAIN_GRACE_S` (nothing is recorded).
        """
        upstream = answer.upstream
        if answer.is_stream:
            self.streams_in_flight += 1
        try:
            held: bytes | None = None  # a chunk on its way to the client, not yet taken
            try:
                # A stream's headers go at once; an answer read whole sends them with its
                # first bytes, in one write.
                await writer.start(upstream.status, answer.headers, with_body=not answer.is_stream)
                async for chunk in upstream.content.iter_any():
                    held = chunk
                    await writer.write(chunk)  # the client first; parsing can wait
                    held = None
                    answer.take(chunk)
                answer.finished = True
            except asyncio.CancelledError as exc:
                answer.gone = exc  # the client closed its connection: aiohttp cancels the handler
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                if held is not None or not writer.started:  # writing to a closed client
                    answer.gone = exc
                else:
                    answer.cut = True
                    log.warning(
                        "#%d: the upstream broke off the response (%s); recorded as cut",
                        answer.exchange_id,
                        type(exc).__name__,
                    )
            except ConnectionResetError as exc:  # the same, raised by the transport itself
                answer.gone = exc
            if held is not None:
                answer.take(held)
            if answer.gone is not None:
                answer.finished = await self._after_the_client_left(answer.rest)
        finally:
            if answer.finished:
                upstream.release()  # the connection goes back to the pool
            else:
                upstream.close()  # cut, or the client went away: this connection is done
            if answer.is_stream:
                self.streams_in_flight -= 1
        if answer.gone is not None and not answer.finished:
            # An aborted response: nothing recorded, which recorder._traffic._server says.
            raise ConnectionResetError("the client closed its connection") from answer.gone

    async def _hand_off(self, answer: _Answer, writer: ResponseWriter, url: str) -> None:
        """Hand the answered exchange to the journal, and end a cut response the way the
        upstream ended it. The response waits for its line only when the journal says so
        (or the client left at the end: recorded whole, and no cancel may cut that)."""
        if len(self._known_now) != len(self.known_secrets):  # it only grows
            self._known_now = frozenset(self.known_secrets)
        got = answer.received_exchange(url, self._known_now)
        pieces = answer.pieces if answer.pieces is not None and answer.pieces.sent else None
        must_wait = self.journal.behind
        line = self.journal.submit(got, answer.exchange_id, pieces)
        if answer.gone is not None or must_wait:
            with contextlib.suppress(Exception):  # counted by the journal
                await asyncio.shield(line)
        if answer.gone is not None:
            writer.aborted = True  # nothing more to send; the server ends it quietly
        elif answer.cut:
            writer.abort()

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
