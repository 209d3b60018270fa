"""Tools' HTTP through ``requests``, ``aiohttp`` and ``urllib``, seen as httpx requests.

``recorder._tool_traffic`` captures (and ``replayer._tool_replay`` serves) the tools' httpx
calls through respx. Tools also call their APIs with the other common clients; this module
puts one scoped seam in front of each, for the duration of a block, and hands every
request to the same decisions as an ``httpx.Request`` (method, URL, headers, body), so
capture, redaction, matching and miss messages are the httpx path's:

- ``requests``: a ``responses.RequestsMock`` (requests' well-kept mock layer; it patches
  ``HTTPAdapter.send`` while active and restores it). Capture: every request passes
  through for real, and the response callback records the tool's; serve: a pass-through
  route for rec's own traffic, a callback route answering the rest from the recording.
- ``aiohttp``: an ``aioresponses`` mock (it patches ``ClientSession._request`` while active
  and builds real ``ClientResponse`` objects). Requests to pass-through origins (rec's
  proxy, the live model) are left unmatched, which aioresponses sends for real; a tool's
  request is answered by a callback: served from the recording, or (capture) sent for
  real through httpx and recorded. Session-level ``auth``/cookies are not visible to the
  callback, so a tool relying on them is recorded without them (README, Limitations).
- ``urllib``: a handler in an opener installed with ``urllib.request.install_opener`` for
  the block (the opener the program had installed, if any, keeps its handlers and is put
  back). Capture: a response processor records what the real handlers got; serve: its
  ``http_open``/``https_open`` answer before ``HTTPHandler`` does. Only calls through the
  installed opener (``urlopen``) are seen, not an opener a tool builds itself.

A request rec's decisions refuse (an unrecorded call in replay) fails in the client's own
connection error type (``requests.ConnectionError``, ``aiohttp.ClientConnectionError``,
``urllib.error.URLError``), with rec's message naming the URL and the client library.

The clients are imported only when a block starts (``rec status`` never loads them).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import io
import json
import logging
import re
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from unittest import mock
from urllib.parse import urlencode

import httpx

from cassettes._secret_shapes import CREDENTIALS_HEADER, credentials_header_value
from recorder._traffic._compat import aioresponses_passing, installed_url_opener
from recorder._traffic._tool_requests import is_own

__all__ = [
    "CLIENTS",
    "ClientCapture",
    "ClientServe",
    "capturing_clients",
    "decides",
    "mark_internal",
    "passing_pattern",
    "serving_clients",
    "told_headers",
]

CLIENTS = ("requests", "aiohttp", "urllib")
"""The client libraries besides httpx whose tool calls rec records and serves."""

_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_HOP_HEADERS = frozenset(
    {"content-length", "content-encoding", "transfer-encoding", "connection", "date"}
)

log = logging.getLogger(__name__)

_INTERNAL_SESSIONS: weakref.WeakSet[Any] = weakref.WeakSet()
"""rec's own aiohttp sessions (the forwarder's upstream client): never a tool's."""


def mark_internal(session: Any) -> None:
    """Mark an aiohttp ``ClientSession`` as rec's own: the aiohttp seam sends its requests
    for real, untouched, whatever the block (the aiohttp counterpart of the httpx
    ``INTERNAL_EXTENSION``)."""
    _INTERNAL_SESSIONS.add(session)


ClientCapture = Callable[[httpx.Request, httpx.Response, bytes, float], None]
"""Records one tool exchange: the request, the response (status, headers), the decoded
body and the ``time.perf_counter()`` at which the request started."""

ClientServe = Callable[[httpx.Request, str], httpx.Response]
"""Answers one tool request for a client library (named) from the recording; raises
``httpx.ConnectError`` (rec's message) when it must not be sent."""


def passing_pattern(
    own: Collection[str], pass_hosts: Collection[str] = (), *, websockets: bool = False
) -> re.Pattern[str]:
    """A regex matching every URL that is *not* rec's own origin nor a pass-through host.

    aioresponses matches by URL only: what this pattern does not match is sent for real.
    ``own`` are base URLs (compared by scheme, host and port, as ``is_tool_request``
    does; ``ws``/``wss`` count as ``http``/``https``: a Live socket to rec's proxy is
    rec's own); ``pass_hosts`` host suffixes, each a whole label (``googleapis.com``
    passes ``x.googleapis.com``, not ``googleapis.com.evil.test``). Without
    ``websockets`` every ``ws``/``wss`` URL passes too (capture records HTTP only);
    with it, a WebSocket elsewhere is matched (replay refuses it).
    """
    alternatives = [] if websockets else ["wss?://"]
    for base in own:
        if not base:
            continue
        url = httpx.URL(base)
        default = {"http": 80, "https": 443}.get(url.scheme)
        host = f"\\[{re.escape(url.host)}\\]" if ":" in url.host else re.escape(url.host)
        port = url.port or default
        port_part = f"(:{port})?" if port == default else f":{port}"
        scheme = {"http": "(?:http|ws)", "https": "(?:https|wss)"}.get(
            url.scheme, re.escape(url.scheme)
        )
        alternatives.append(f"{scheme}://{host}{port_part}(?=[/?#]|$)")
    for suffix in pass_hosts:
        alternatives.append(
            rf"[a-z][a-z0-9+.-]*://([^/?#@]*\.)?{re.escape(suffix)}(:\d+)?(?=[/?#]|$)"
        )
    if not alternatives:
        return re.compile("")
    return re.compile("^(?!" + "|".join(alternatives) + ")", re.IGNORECASE)


def told_headers(
    url: str | httpx.URL, own: Collection[str], known: Collection[str]
) -> dict[str, str]:
    """The header that tells rec's own proxy the credentials a recording has learnt (a
    tool's key, an MCP server's token), for a request to that proxy; none for any other.

    A tool's key is redacted in the tool's exchange, but the model request that carries
    the tool's result would hold it in clear: every client library's request to the proxy
    (httpx, aiohttp, requests, urllib) carries this header, and the proxy registers what
    it names (and drops it) before it writes that request.
    """
    if not known:
        return {}
    try:
        if not is_own(url, own):
            return {}
    except httpx.InvalidURL:
        return {}
    return {CREDENTIALS_HEADER: credentials_header_value(known)}


def _told(block: _Block, url: str | httpx.URL) -> dict[str, str]:
    """:func:`told_headers` for ``block``: what it learnt, told to its own proxy."""
    return told_headers(url, block.own, block.known()) if block.known is not None else {}


def _decoded(status: int, headers: Any, raw: bytes) -> bytes:
    """``raw`` decoded from gzip/deflate/br as its headers say (as httpx would)."""
    try:
        return httpx.Response(status, headers=headers, content=raw).read()
    except httpx.DecodingError:
        return raw


def _served_headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.lower() not in _HOP_HEADERS}


# --- requests -------------------------------------------------------------------------


def _from_requests(prepared: Any) -> httpx.Request:
    body = prepared.body
    content = body.encode() if isinstance(body, str) else body if isinstance(body, bytes) else b""
    return httpx.Request(
        prepared.method or "GET", prepared.url, headers=dict(prepared.headers), content=content
    )


def _requests_seam() -> contextlib.AbstractContextManager[Any]:
    """One ``responses`` mock whose routes ask the innermost block."""
    import requests
    import responses

    def passing(prepared: Any) -> tuple[bool, str]:
        block = _innermost()
        passes = block.answer is None or block.passes(_from_requests(prepared))
        if passes:
            prepared.headers.update(_told(block, prepared.url))
        return passes, "rec: served"

    def served(prepared: Any) -> tuple[bool, str]:
        # Exactly one route matches a request: responses pops the first of several matches.
        return not passing(prepared)[0], "rec: sent"

    def serve(prepared: Any) -> tuple[int, dict[str, str], bytes]:
        block = _innermost()
        assert block.answer is not None  # the pass-through route took everything else
        try:
            response = block.answer(_from_requests(prepared), "requests")
        except httpx.ConnectError as exc:
            raise requests.ConnectionError(str(exc), request=prepared) from None
        return response.status_code, _served_headers(response), response.content

    def observe(response: Any) -> Any:
        block = _innermost()
        if block.capture is None or response.request is None:
            return response
        is_tool, record = block.capture
        request = _from_requests(response.request)
        if is_tool(request):
            started = time.perf_counter() - response.elapsed.total_seconds()
            body = response.content  # read whole (decoded); the caller reads it again
            status, headers = response.status_code, dict(response.headers)
            record(request, httpx.Response(status, headers=headers), body, started)
        return response

    mock = responses.RequestsMock(
        assert_all_requests_are_fired=False,
        response_callback=observe,
        passthru_prefixes=("http://", "https://"),  # a method not routed below: sent as is
    )
    for method in _METHODS:
        mock.add(responses.PassthroughResponse(method, re.compile(".*"), match=[passing]))
        mock.add_callback(method, re.compile(".*"), callback=serve, match=[served])
    return mock


# --- aiohttp --------------------------------------------------------------------------
def _from_aiohttp(method: str, url: Any, kwargs: Mapping[str, Any]) -> httpx.Request:
    """The httpx request an aiohttp ``ClientSession.request`` call sends.

    Raises:
        httpx.ConnectError: a body rec cannot reproduce (``FormData``, a stream); the
            message names aiohttp and the fix.
    """
    headers = httpx.Headers(dict(kwargs.get("headers") or {}))
    auth = kwargs.get("auth")
    if auth is not None and hasattr(auth, "encode"):
        headers["authorization"] = auth.encode()
    data, payload = kwargs.get("data"), kwargs.get("json")
    if payload is not None:
        content = json.dumps(payload).encode()
        headers.setdefault("content-type", "application/json")
    elif data is None:
        content = b""
    elif isinstance(data, (bytes, bytearray)):
        content = bytes(data)
    elif isinstance(data, str):
        content = data.encode()
    elif isinstance(data, Mapping) or (
        isinstance(data, (list, tuple)) and all(isinstance(p, tuple) for p in data)
    ):
        items = data.items() if isinstance(data, Mapping) else data
        content = urlencode(list(items)).encode()
        headers.setdefault("content-type", "application/x-www-form-urlencoded")
    else:
        raise httpx.ConnectError(
            f"rec: the aiohttp call {method.upper()} {url} sends a {type(data).__name__} "
            "body, which rec cannot record or replay; send bytes, str, a dict or json= "
            "from the tool",
            request=httpx.Request(method.upper(), str(url)),
        )
    return httpx.Request(method.upper(), str(url), headers=headers, content=content)


def _callback_result(response: httpx.Response, method: str) -> Any:
    from aioresponses import CallbackResult

    headers = _served_headers(response)
    return CallbackResult(
        method=method.upper(),
        status=response.status_code,
        body=response.content,
        headers=headers,
        content_type=response.headers.get("content-type", "application/octet-stream"),
        reason=response.reason_phrase or None,
    )


def _aiohttp_error(exc: httpx.ConnectError) -> Exception:
    import aiohttp

    return aiohttp.ClientConnectionError(str(exc))


async def _send_for_real(
    request: httpx.Request, kwargs: Mapping[str, Any], internal: str
) -> tuple[httpx.Response, bytes]:
    """Send a tool's aiohttp request through httpx (marked rec's own); the decoded body."""
    ssl = kwargs.get("ssl")
    verify: Any = False if ssl is False else ssl if ssl not in (None, True) else True
    timeout = getattr(kwargs.get("timeout"), "total", None) or 300.0
    sent = httpx.Request(
        request.method,
        request.url,
        headers=request.headers,
        content=request.content,
        extensions={internal: True},
    )
    async with httpx.AsyncClient(
        verify=verify, proxy=kwargs.get("proxy"), timeout=timeout
    ) as client:
        response = await client.send(sent, stream=True)
        try:
            raw = b"".join([chunk async for chunk in response.aiter_raw()])
        finally:
            await response.aclose()
    return response, _decoded(response.status_code, response.headers, raw)


_ALREADY_MOCKED: type[Exception] = getattr(mock, "InvalidSpecError", TypeError)
"""What ``mock.patch(autospec=True)`` raises over a Mock (Python 3.10+)."""


def _sent_untouched(session: Any, method: str, url: Any, kwargs: dict[str, Any]) -> bool:
    """Whether the aiohttp seam sends a request for real, untouched: rec's own session's;
    while serving, one to the block's own replay (a model call: a replay is told nothing);
    and, while capturing, one to elsewhere than the block's proxy that capture does not
    record (a WebSocket, an event stream that may never end; ``is_tool`` warns that replay
    will refuse it).

    A request to the block's own proxy (the model request that carries a tool's result) is
    never untouched: it carries the credentials the recording learnt (:func:`told_headers`),
    so the proxy masks them before it writes that request."""
    if session in _INTERNAL_SESSIONS:
        return True
    block = _innermost()
    if block.answer is not None:
        # As the route's pattern would pass it, without aioresponses' copy and log of it.
        try:
            return block.known is None and is_own(str(url), block.own)
        except httpx.InvalidURL:
            return False  # aioresponses decides, as for any URL not rec's
    if block.capture is None:
        return False
    try:
        request = _from_aiohttp(method, url, kwargs)
    except httpx.ConnectError:
        return False  # the callback raises rec's message for it
    if is_own(request.url, block.own):
        return False  # the route's pattern passes it, with what the block tells its proxy
    return not block.capture[0](request)


@functools.cache
def _seam_class() -> type[Any]:
    """aioresponses, except that rec's own sessions (:func:`mark_internal`) go out for
    real untouched: the forwarder streams the model's answer through one while a block
    captures or serves the tools' calls in the same process. So does, while capturing, a
    request capture does not record (see :func:`_sent_untouched`). Every other request
    carries what the block tells rec's own proxy (:func:`told_headers`)."""
    return aioresponses_passing(_sent_untouched, lambda url: _told(_innermost(), url))


class _AiohttpSeam:
    """One ``aioresponses`` mock; its routes follow the innermost block.

    aioresponses matches by URL only: the route's pattern leaves the innermost block's
    pass-through origins unmatched (sent for real by aioresponses), and its callback
    serves (replay) or sends and records (capture) the rest.
    """

    def __init__(self) -> None:
        self.mock: Any = _seam_class()(passthrough_unmatched=True)

    def __enter__(self) -> _AiohttpSeam:
        try:
            self.mock.start()
        except _ALREADY_MOCKED:  # the program's own aioresponses mock is active
            log.warning(
                "rec: aiohttp is already mocked (aioresponses): rec leaves its tool calls "
                "to that mock, unrecorded and unserved"
            )
            self.mock = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.mock is not None:
            self.mock.stop()

    def follow(self, blocks: Collection[_Block]) -> None:
        """Route for the active ``blocks`` from now on: every one's own origins (and a
        serving block's pass-through hosts) are sent for real, and the rest is answered
        by the block that decides for the caller (:meth:`_Seams.innermost`)."""
        if self.mock is None:
            return
        self.mock.clear()
        own = [base for block in blocks for base in block.own]
        hosts = [host for block in blocks if block.answer for host in block.pass_hosts]
        serving = any(block.answer is not None for block in blocks)
        pattern = passing_pattern(own, hosts, websockets=serving)
        for method in _METHODS:
            self.mock.add(pattern, method=method, callback=self._callback(method), repeat=True)

    @staticmethod
    def _callback(method: str) -> Callable[..., Any]:
        async def call(url: Any, **kwargs: Any) -> Any:
            block = _innermost()
            try:
                request = _from_aiohttp(method, url, kwargs)
                if block.answer is not None and not block.passes(request):
                    return _callback_result(block.answer(request, "aiohttp"), method)
                response, body = await _send_for_real(request, kwargs, block.internal)
            except httpx.ConnectError as exc:
                raise _aiohttp_error(exc) from None
            if block.capture is not None and block.capture[0](request):
                block.capture[1](request, response, body, time.perf_counter())
            served = httpx.Response(
                response.status_code,
                headers=_served_headers(response),  # the body is decoded already
                content=body,
            )
            return _callback_result(served, method)

        return call


# --- urllib ---------------------------------------------------------------------------
def _from_urllib(request: Any) -> httpx.Request:
    data = request.data
    content = data if isinstance(data, bytes) else data.encode() if isinstance(data, str) else b""
    return httpx.Request(
        request.get_method(),
        request.full_url,
        headers=dict(request.header_items()),
        content=content,
    )


def _urllib_response(
    body: bytes, headers: Mapping[str, str], url: str, status: int, reason: str
) -> Any:
    import http.client
    import urllib.response

    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    message = http.client.parse_headers(io.BytesIO(head.encode("latin-1")))
    response = urllib.response.addinfourl(io.BytesIO(body), message, url, status)
    response.msg = reason  # type: ignore[attr-defined]
    return response


class _UrllibHandler(urllib.request.BaseHandler):
    """rec's seam in the installed urllib opener; it asks the innermost block."""

    handler_order = 450  # after ProxyHandler (100), before HTTPHandler (500)

    def _open(self, req: Any) -> Any:
        block = _innermost()
        request = _from_urllib(req)
        if block.answer is None or block.passes(request):
            for name, value in _told(block, req.full_url).items():
                req.add_unredirected_header(name.capitalize(), value)
            return None  # the next handler sends it
        try:
            response = block.answer(request, "urllib")
        except httpx.ConnectError as exc:
            raise urllib.error.URLError(str(exc)) from None
        return _urllib_response(
            response.content,
            _served_headers(response),
            req.full_url,
            response.status_code,
            response.reason_phrase,
        )

    http_open = _open
    https_open = _open

    def _response(self, req: Any, response: Any) -> Any:
        block = _innermost()
        if block.capture is None:
            return response
        is_tool, record = block.capture
        request = _from_urllib(req)
        if not is_tool(request):
            return response
        started = time.perf_counter()  # urllib keeps no timing: the read only
        raw = response.read()
        headers = dict(response.headers.items())
        body = _decoded(response.status, headers, raw)
        record(request, httpx.Response(response.status, headers=headers), body, started)
        # The caller reads the bytes the server sent (still encoded, as urllib gives them).
        return _urllib_response(raw, headers, response.url, response.status, response.reason)

    http_response = _response
    https_response = _response


@contextlib.contextmanager
def _urllib_seam() -> Iterator[None]:
    """rec's handler in the installed opener (the program's opener keeps its handlers)."""
    previous = installed_url_opener()
    handler = _UrllibHandler()
    if previous is None:
        opener = urllib.request.build_opener(handler)
    else:
        opener = urllib.request.OpenerDirector()
        for kept in previous.handlers:
            opener.add_handler(kept)
        opener.add_handler(handler)
    urllib.request.install_opener(opener)
    try:
        yield
    finally:
        urllib.request.install_opener(previous)
        if previous is not None:
            for kept in previous.handlers:
                kept.add_parent(previous)


# --- the blocks -----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Block:
    """One active ``capturing_clients`` or ``serving_clients`` block."""

    passes: Callable[[httpx.Request], bool]
    answer: ClientServe | None = None
    capture: tuple[Callable[[httpx.Request], bool], ClientCapture] | None = None
    own: tuple[str, ...] = ()
    pass_hosts: tuple[str, ...] = ()
    internal: str = ""
    known: Callable[[], Collection[str]] | None = None
    """The credentials the block's recording learnt, told to its own proxy (capture)."""


class _Seams:
    """The seams, installed while at least one block is active; the innermost one decides.

    Blocks nest (a recording's capture and rec's ADK plugin's in one process, a replay
    inside a test's recording) and may end in any order: the seams are installed once,
    when the first block starts, and removed when the last ends, so each library is
    patched once and restored exactly.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.blocks: list[_Block] = []
        self.installed: contextlib.ExitStack | None = None
        self.aiohttp: _AiohttpSeam | None = None

    def innermost(self) -> _Block:
        """The block that decides for the running code: the one it started (the last
        one started in its context: two recordings in two threads or tasks each keep
        their own), else the innermost (code running where no block was started, such
        as a thread pool's worker)."""
        mine = _STARTED.get()
        with self.lock:
            if mine is not None and mine in self.blocks:
                return mine
            return self.blocks[-1] if self.blocks else _PASS

    @contextlib.contextmanager
    def active(self, block: _Block) -> Iterator[None]:
        with self.lock:
            if self.installed is None:
                stack = contextlib.ExitStack()
                try:
                    stack.enter_context(_requests_seam())
                    self.aiohttp = stack.enter_context(_AiohttpSeam())
                    stack.enter_context(_urllib_seam())
                except BaseException:
                    stack.close()
                    raise
                self.installed = stack
            self.blocks.append(block)
            self._follow()
        token = _STARTED.set(block)
        try:
            yield
        finally:
            with contextlib.suppress(ValueError):  # ended in another context (a plugin)
                _STARTED.reset(token)
            with self.lock:
                self.blocks.remove(block)
                if self.blocks:
                    self._follow()
                elif self.installed is not None:
                    installed, self.installed, self.aiohttp = self.installed, None, None
                    installed.close()

    def _follow(self) -> None:
        if self.aiohttp is not None:
            self.aiohttp.follow(self.blocks)


_PASS = _Block(passes=lambda request: True)
_SEAMS = _Seams()
_STARTED: contextvars.ContextVar[_Block | None] = contextvars.ContextVar(
    "rec_tool_clients_block", default=None
)
"""The block last started in this context (see :meth:`_Seams.innermost`)."""


def decides(block: object) -> bool:
    """Whether ``block`` (as a capture block yields it) decides for the running code."""
    return _innermost() is block


def _innermost() -> _Block:
    return _SEAMS.innermost()


@contextlib.contextmanager
def capturing_clients(
    is_tool: Callable[[httpx.Request], bool],
    record: ClientCapture,
    *,
    own: Collection[str],
    internal: str,
    known: Callable[[], Collection[str]] | None = None,
) -> Iterator[object]:
    """Record the tools' requests/aiohttp/urllib calls while the block runs (sent for real).

    Args:
        is_tool: whether a request is a tool's (recorded) or rec's own (left alone).
        record: called once per tool exchange.
        own: rec's own base URLs (requests to them are sent as they are, with the
            credentials ``known`` returns told in a header: :func:`told_headers`).
        internal: the httpx extension marking rec's own re-sent requests.
        known: the credentials the recording has learnt so far.

    Yields:
        the block, for :func:`decides`.
    """
    block = _Block(
        passes=lambda request: True,
        capture=(is_tool, record),
        own=tuple(own),
        internal=internal,
        known=known,
    )
    with _SEAMS.active(block):
        yield block


@contextlib.contextmanager
def serving_clients(
    passes: Callable[[httpx.Request], bool],
    answer: ClientServe,
    *,
    own: Collection[str],
    pass_hosts: Collection[str] = (),
) -> Iterator[None]:
    """Answer the tools' requests/aiohttp/urllib calls from the recording while the block runs.

    Args:
        passes: whether a request is rec's own (or the live model's) and goes out.
        answer: the recorded response for a tool request (raises ``httpx.ConnectError``
            for one that must not be sent).
        own, pass_hosts: the same rule as ``passes``, by URL (aiohttp matches by URL).
    """
    block = _Block(passes=passes, answer=answer, own=tuple(own), pass_hosts=tuple(pass_hosts))
    with _SEAMS.active(block):
        yield
