"""Tools' own HTTP calls served from the cassette: replay never reaches the network.

A plain program's tools always run for real, and with ``--live-tools`` an ADK agent's do
too. Their HTTP calls to their APIs (``origin: "tool"`` exchanges, captured while
recording by ``recorder._tool_traffic``), made with httpx, requests, aiohttp or urllib, are
answered from the recording: httpx through a respx router, the others through
``recorder.serving_clients``; each is matched with a :class:`cassettes.MatchIndex` on
method, path, query and canonical body (FIFO per key), with the recorded status, headers
and body. Which requests are a tool's follows the recording rule
(:func:`recorder.is_tool_request`): everything except rec's own proxy, rec's forwarder,
MCP transport traffic and credential endpoints; in ``--live`` mode the model's hosts
(``*.googleapis.com``) pass through as well, and with ``--live-tools`` MCP transport does
(the real servers run). A tool call with no recording fails closed, in every mode, and so
does what rec never records (MCP transport outside ``--live-tools``, a WebSocket, an
event stream other than A2A's): nothing is sent, and the tool gets its client's connection error
(``httpx.ConnectError``, ``requests.ConnectionError``, ``aiohttp.ClientConnectionError``,
``urllib.error.URLError``) naming the URL (credentials in it masked), the client library
and the fix, so the case fails naming the tool. In ``auto`` mode such a call is sent for
real instead, and recorded (:attr:`ToolTrafficReplay.record_missing`); ``record`` mode
records every call.

Serving can start before the agent is loaded (:meth:`ToolTrafficReplay.serving`), so a
toolset that fetches its spec while the agent module loads gets it from the recording.

Example::

    replay = ToolTrafficReplay(tool_exchanges(cassette.exchanges), own=[backend.url])
    with replay.serving():
        ...  # run the agent: convert_currency's httpx.get is answered from the cassette
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from urllib.parse import urlsplit

import httpx
import respx

from cassettes._a2a import a2a_calls, is_a2a, is_a2a_rest_message
from cassettes._bodies import body_from_bytes, body_to_bytes
from cassettes._cassette import Exchange, JsonBody, LazyExchanges, RecordedRequest
from cassettes._divergence import a2a_differences
from cassettes._matching import MatchIndex
from cassettes._secret_shapes import mask
from recorder._traffic import (
    accepts_event_stream,
    is_a2a_stream,
    is_mcp_transport,
    is_own,
    is_tool_request,
    is_websocket_upgrade,
    serving_clients,
)

__all__ = ["ToolTrafficReplay", "noting_refusals", "tool_exchanges"]

_REFUSALS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "rec_tool_refusals", default=None
)


@contextlib.contextmanager
def noting_refusals() -> Iterator[list[str]]:
    """Collect the tool requests replay refuses inside the block (this task and the tasks
    and threads it starts), each as its message.

    A refused call raises the client's connection error, but the caller may swallow it:
    ADK's ``RemoteA2aAgent`` turns a failed A2A call into an error event, and a tool may
    fall back to a default. The runner fails the case with what was noted, so a refusal
    is never a silent pass.
    """
    noted: list[str] = []
    token = _REFUSALS.set(noted)
    try:
        yield noted
    finally:
        _REFUSALS.reset(token)


def _note(message: str) -> None:
    noted = _REFUSALS.get()
    if noted is not None:
        noted.append(message)


def tool_exchanges(exchanges: Sequence[Exchange]) -> Sequence[Exchange]:
    """The tools' own recorded calls (``origin: "tool"``) among ``exchanges`` (of a lazily
    loaded cassette: found by the origins its layout read, no model exchange parsed)."""
    if isinstance(exchanges, LazyExchanges):
        return exchanges.select(exchanges.of_tools(True))
    return [e for e in exchanges if e.origin == "tool"]


class ToolTrafficReplay:
    """Answers tool requests from recorded tool exchanges (sans-IO: one request in, one out).

    Args:
        exchanges: the recorded tool exchanges.
        own: base URLs whose requests are never a tool's (the replay proxy).
        pass_hosts: host suffixes that pass through too (the live model's hosts).
        label: names the recordings in the miss message.
        mcp_urls: the agent's MCP toolsets' URLs (an event stream opened there is MCP's).
        live_mcp: MCP transport goes to the network (``--live-tools``: the real servers
            answer); otherwise it is refused, since rec records MCP only at the protocol
            level (an ADK McpToolset replays from the recording without its transport).
    """

    def __init__(
        self,
        exchanges: Sequence[Exchange],
        *,
        own: Collection[str] = (),
        pass_hosts: Collection[str] = (),
        label: str = "the recording",
        mcp_urls: Collection[str] = (),
        live_mcp: bool = False,
    ) -> None:
        self.exchanges = list(exchanges)
        self.index = MatchIndex(self.exchanges)
        self.live_mcp = live_mcp
        self.own = tuple(own)
        self.mcp_urls = tuple(mcp_urls)
        self.pass_hosts = tuple(pass_hosts)
        self.label = label
        self.served = 0
        self.misses: list[str] = []
        self.record_missing: Callable[[httpx.Request], httpx.Response] | None = None
        """``auto`` mode: sends a call the recording does not hold for real and records it
        (``recorder.sending_tool_calls``); None fails it closed."""

    def passes_through(self, request: httpx.Request) -> bool:
        """Whether ``request`` is rec's own (or the live model's) and goes to the network."""
        if is_own(request.url, self.own):
            # A model call to rec's replay, answered from the recording there: told without
            # reading its body (a tool-traffic check would parse it twice a call).
            return True
        if not is_tool_request(request, self.own, self.mcp_urls):
            return self.live_mcp or not is_mcp_transport(request, self.mcp_urls)
        host = request.url.host
        return any(host == suffix or host.endswith("." + suffix) for suffix in self.pass_hosts)

    def answer(self, request: httpx.Request, client: str = "httpx") -> httpx.Response:
        """The recorded response for a tool request made with ``client``.

        Raises:
            httpx.ConnectError: no recording matches (fail closed); the message names the
                URL, the nearest recorded tool call and the fix.
        """
        recorded = RecordedRequest(
            method=request.method,
            url=str(request.url),
            body=body_from_bytes(request.content, request.headers.get("content-type")),
        )
        unrecordable = _unrecordable(request, self.mcp_urls)
        exchange = None if unrecordable else self.index.lookup(recorded)
        if exchange is None and not unrecordable and self.record_missing is not None:
            return self.record_missing(request)
        if exchange is None:
            message = (
                self._refusal(recorded, client, unrecordable)
                if unrecordable
                else self._miss_message(recorded, client)
            )
            raise httpx.ConnectError(message, request=request)
        self.served += 1
        response = exchange.response
        return httpx.Response(
            response.status,
            headers=response.headers,
            content=body_to_bytes(response.body),
            request=request,
        )

    def _a2a_miss(self, request: RecordedRequest, sent: object, *, rest: bool) -> str:
        """A call to a remote agent that no recording matches, told in A2A terms: what
        changed from the nearest recorded call to the same agent."""
        url = shown_url(request.url)
        method = urlsplit(url).path.rsplit("/", 1)[-1] if rest else _a2a_method(sent)
        binding = "rest" if rest else "json-rpc"
        unplayed = [e for e in self.index.unused() if _a2a_binding(e.request) == binding]
        calls = unplayed or [e for e in self.exchanges if _a2a_binding(e.request) == binding]
        same = [e for e in calls if shown_url(e.request.url) == url] or calls
        nearest = next(
            (e for e in same if rest or _a2a_method(_json_of(e)) == method),
            same[0] if same else None,
        )
        if nearest is None:
            why = "the recording holds no call to a remote agent"
        else:
            changes = a2a_differences(_json_of(nearest), sent, rest=rest)[:8] or ["a repeat"]
            why = "the nearest recorded call differs: " + "; ".join(changes)
        return (
            f"rec: the A2A call {method} to {url} was not recorded in {self.label}: {why}; "
            "replay never sends it. Re-record the agent with the remote agent running if "
            "what it sends changed on purpose"
        )

    @contextlib.contextmanager
    def serving(self) -> Iterator[ToolTrafficReplay]:
        """Answer the process's tool calls (every client) from this replay for the block.

        Entered again later (with more ``own`` URLs, once the model backend is up), it goes
        on from where the recording was: exchanges served before stay served.
        """

        def side_effect(request: httpx.Request) -> httpx.Request | httpx.Response:
            if self.passes_through(request):
                return request  # respx: pass through
            return self.answer(request)

        with (
            respx.mock(assert_all_mocked=False, assert_all_called=False, using="httpx") as router,
            serving_clients(
                self.passes_through, self.answer, own=self.own, pass_hosts=self.pass_hosts
            ),
        ):
            router.route().mock(side_effect=side_effect)
            yield self

    def _refusal(self, request: RecordedRequest, client: str, what: str) -> str:
        message = (
            f"rec: {what} {request.method} {shown_url(request.url)} is not recorded by rec "
            f"and replay never sends it (a {client} call)"
            + (
                "; rec replays an ADK McpToolset from its recorded session: use one, or run "
                "the real MCP servers with --live-tools"
                if what.startswith("MCP")
                else "; make the call over plain HTTP, or run the tool for real outside replay"
            )
        )
        self.misses.append(message)
        _note(message)
        return message

    def _miss_message(self, request: RecordedRequest, client: str) -> str:
        a2a = _a2a_binding(request)
        if a2a is not None:
            assert isinstance(request.body, JsonBody)
            message = self._a2a_miss(request, request.body.value, rest=a2a == "rest")
            self.misses.append(message)
            _note(message)
            return message
        nearest = self.index.nearest(request)
        hint = (
            f"; nearest recorded tool call: {nearest.request.method} "
            f"{shown_url(nearest.request.url)}"
            if nearest is not None
            else "; it has no tool calls recorded"
        )
        message = (
            f"rec: the tool call {request.method} {shown_url(request.url)} was not recorded "
            f"in {self.label}{hint}; replay never sends it (a {client} call). Re-record the "
            "agent (rec captures its tools' httpx, requests, aiohttp and urllib calls), or, "
            "for an ADK agent, replay without --live-tools so the tools' recorded responses "
            "are used"
        )
        self.misses.append(message)
        _note(message)
        return message


def _unrecordable(request: httpx.Request, mcp_urls: Collection[str]) -> str:
    """What kind of traffic rec never records ``request`` is, or ``""`` for a plain call."""
    if is_mcp_transport(request, mcp_urls):
        return "MCP traffic"
    if is_websocket_upgrade(request):
        return "the WebSocket"
    if accepts_event_stream(request) and not is_a2a_stream(request):
        return "the event stream"
    return ""


def _a2a_method(value: object) -> object:
    return a2a_calls(value)[0]


def _a2a_binding(request: RecordedRequest) -> str | None:
    """``json-rpc`` or ``rest`` for a call to a remote agent over A2A; None for another."""
    body = request.body
    if not isinstance(body, JsonBody):
        return None
    if is_a2a(body.value):
        return "json-rpc"
    return "rest" if is_a2a_rest_message(urlsplit(request.url).path) else None


def _json_of(exchange: Exchange) -> object:
    body = exchange.request.body
    return body.value if isinstance(body, JsonBody) else None


_SECRET_PARAM = re.compile(r"key|token|secret|auth|sig|pass|credential", re.IGNORECASE)


def shown_url(url: str) -> str:
    """``url`` fit for a message: userinfo dropped, credential-like query values masked."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    items = [item.partition("=") for item in parts.query.split("&") if item]
    query = "&".join(
        f"{name}=…" if _SECRET_PARAM.search(name) else f"{name}{sep}{value}"
        for name, sep, value in items
    )
    return mask(f"{parts.scheme}://{host}{parts.path}" + (f"?{query}" if query else ""))
