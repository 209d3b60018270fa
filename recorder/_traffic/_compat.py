"""Every private name of google-genai, google-adk and the standard library the recorder uses.

google-genai reads ``GOOGLE_GEMINI_BASE_URL`` / ``GOOGLE_VERTEX_BASE_URL`` (public), but a
base URL set with its private ``google.genai._base_url.set_default_base_urls`` wins over
them. A process that called it would send its model traffic past rec's proxy: to a real
endpoint during replay. rec therefore sets those defaults too, for the duration of a
recording or a replay, through :func:`genai_default_base_urls`; it is the only access to
a private google-genai name.

ADK's ``McpToolset`` keeps the session manager it opens MCP sessions with in the private
``_mcp_session_manager`` attribute and offers no public way to it; MCP capture and replay
reach it through :func:`session_manager_of` (the one private google-adk name below the
replayer; ``replayer/_compat.py`` holds the others and raises the same
:class:`AdkChanged`). ``tests/recorder/test_compat.py`` checks each against the installed
release.

The standard library's ``urllib.request`` keeps the opener ``install_opener`` installed in
the private ``_opener``; rec reads it (:func:`installed_url_opener`) to put it back after
serving or recording a tool's ``urlopen`` calls.

``aioresponses`` decides what to mock in its private ``_request_mock`` (the patched
``ClientSession._request``) and keeps the real method in ``patcher.temp_original``;
:func:`aioresponses_passing` overrides it so that rec's own sessions (the forwarder's
upstream client) go out for real while the tools' calls are captured or served.

google-genai's Live client derives its WebSocket URL from the base URL by switching the
scheme to ``wss`` whatever it was (the private ``BaseApiClient._websocket_base_url``) and
connects with an SSL context (``websockets``' ``connect(uri, ssl=...)`` in
``google/genai/live.py``), so a client pointed at rec's ``http://127.0.0.1:PORT`` fails with
``SSL: WRONG_VERSION_NUMBER``. :func:`install_live_reach` changes exactly that case: an
``http://`` base URL on a loopback host becomes ``ws://`` of the same address, and that
connection gets no SSL context; ``https`` and other hosts keep google-genai's behaviour. It
is installed by rec's ``sitecustomize`` in the Pythons ``rec start``/``rec replay`` run and
in-process by ``recorder._traffic._client_env.pointing_clients_at``.

aiohttp's ``TCPConnector`` builds each connection's protocol with its private ``_factory``,
and a ``ResponseHandler`` keeps its response parser in the private ``_parser``;
``recorder._traffic._lenient_http`` reads and replaces both (:func:`aiohttp_protocol_factory`,
:func:`set_aiohttp_protocol_factory`, :func:`aiohttp_response_parser`) so a response ends
where its framing says, as httpx reads it.

aiohttp's ``web.StreamResponse`` sends its status line and headers as soon as it is
prepared, unless its private ``_send_headers_immediately`` is false (``web.Response``
sets it so for its body); :func:`hold_aiohttp_headers` turns that on for one response, so
its headers leave with its first body bytes
(:meth:`recorder._traffic._server.ResponseWriter.start`).
Where aiohttp has no such attribute the headers go as before, on their own.

``rec import TRACE`` rebuilds the body of each model call a trace holds with the converter
google-genai's ``AsyncModels.generate_content`` sends through (the private
``google.genai.models._GenerateContentParameters_to_mldev`` over a
``types._GenerateContentParameters``, then ``_common.convert_to_dict`` and
``_common.encode_unserializable_types``), so the body is byte for byte the one the agent
sends at replay: :func:`genai_request_body`.

aiohttp's low-level ``web.Server`` (no application, no router: the proxy has one handler
for every path) builds each request with the ``request_factory`` it is given, called with
aiohttp's own message, payload, protocol, writer and task; :func:`large_body_requests`
builds them as ``web.Application`` does, with the body limit the proxy takes.

The standard library's ``random`` module draws through its private ``_inst`` (a
``random.Random``) and ``secrets`` through its private ``_sysrand`` (a
``random.SystemRandom``); recorded reads (``recorder._traffic._reads``) reach both through
:func:`module_generators`, and find who asked for a read with ``sys._getframe``
(:func:`caller_frame`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import random
import secrets
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from types import FrameType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cassettes._errors import RunError

__all__ = [
    "KNOWN_ADK_MCP",
    "KNOWN_GENAI",
    "AdkChanged",
    "GenaiChanged",
    "aioresponses_passing",
    "caller_frame",
    "module_generators",
    "install_live_reach",
    "genai_default_base_urls",
    "genai_request_body",
    "hold_aiohttp_headers",
    "installed_url_opener",
    "plain_websocket_url",
    "session_manager_of",
]

KNOWN_GENAI = "2.34 and 3.x"
"""The google-genai releases this access was written against."""

_MODULE = "google.genai._base_url"
_NAMES = ("_default_base_gemini_url", "_default_base_vertex_url", "set_default_base_urls")


KNOWN_ADK_MCP = "1.20 to 2.13"
"""The google-adk releases :func:`session_manager_of` was written against."""


class GenaiChanged(RunError):
    """google-genai no longer has the private name rec relies on."""


class AdkChanged(RunError):
    """google-adk no longer has a private name rec relies on."""


@contextlib.contextmanager
def genai_default_base_urls(url: str) -> Iterator[None]:
    """google-genai's process-wide default base URLs point at ``url`` within the block.

    Raises:
        GenaiChanged: the installed google-genai lacks the names (the message says which).
    """
    try:
        module = importlib.import_module(_MODULE)
    except ImportError:
        module = None
    missing = [name for name in _NAMES if module is None or not hasattr(module, name)]
    if module is None or missing:
        raise GenaiChanged(
            f"google-genai has no {_MODULE}.{missing[0] if missing else _NAMES[0]} (rec sets "
            f"google-genai's default base URLs with it; written against {KNOWN_GENAI})",
            path="google-genai",
            fix=(
                "Install a google-genai release rec supports, or update "
                "recorder/_traffic/_compat.py"
            ),
        )
    previous = (module._default_base_gemini_url, module._default_base_vertex_url)
    module.set_default_base_urls(gemini_url=url, vertex_url=url)
    try:
        yield
    finally:
        module.set_default_base_urls(gemini_url=previous[0], vertex_url=previous[1])


_GEMINI_API_CLIENT = type("_GeminiApiClient", (), {"vertexai": False})()
"""What google-genai's Gemini API converter reads of its client: the backend."""


def genai_request_body(model: str, contents: Any, config: Any) -> dict[str, Any]:
    """The JSON-ready body google-genai builds for ``generate_content(model, contents,
    config)`` on the Gemini API, with its ``_url`` (the ``models/...`` path segment) kept.

    Raises:
        GenaiChanged: the installed google-genai lacks the converter (names it).
    """
    from google.genai import _common, models, types

    convert = getattr(models, "_GenerateContentParameters_to_mldev", None)
    parameters_model = getattr(types, "_GenerateContentParameters", None)
    if convert is None or parameters_model is None:
        raise GenaiChanged(
            "google-genai has no _GenerateContentParameters_to_mldev converter (rec rebuilds "
            f"a trace's model calls with it; written against google-genai {KNOWN_GENAI})",
            path="google-genai",
            fix=(
                "Install a google-genai release rec supports, or update "
                "recorder/_traffic/_compat.py"
            ),
        )
    parameters = parameters_model(model=model, contents=contents, config=config)
    body = convert(_GEMINI_API_CLIENT, parameters, None, parameters)
    body.pop("_query", None)
    body.pop("config", None)
    url = body.pop("_url", None)
    wire: dict[str, Any] = _common.encode_unserializable_types(_common.convert_to_dict(body))
    if isinstance(url, dict):
        wire["_url"] = url
    return wire


def session_manager_of(toolset: Any) -> Any:
    """The ``MCPSessionManager`` an ADK ``McpToolset`` and its tools open sessions with.

    Private: ``McpToolset._mcp_session_manager``; every ``McpTool`` the toolset lists is
    given the same manager.

    Raises:
        AdkChanged: this google-adk keeps it elsewhere (the message names the releases rec
            supports and the file to update).
    """
    manager = getattr(toolset, "_mcp_session_manager", None)
    if manager is None or not callable(getattr(manager, "create_session", None)):
        raise AdkChanged(
            f"google-adk's {type(toolset).__name__} has no _mcp_session_manager with a "
            f"create_session method (rec records and replays MCP sessions through it; "
            f"written against google-adk {KNOWN_ADK_MCP})",
            path="google-adk",
            fix="Install a google-adk release rec supports, or update recorder/_traffic/_compat.py",
        )
    return manager


def installed_url_opener() -> Any:
    """The opener ``urllib.request.install_opener`` installed (None: ``urlopen`` builds one).

    Private: ``urllib.request._opener``.

    Raises:
        RunError: this Python keeps it elsewhere.
    """
    import urllib.request

    if not hasattr(urllib.request, "_opener"):
        raise RunError(
            "this Python's urllib.request has no _opener (rec puts the installed opener "
            "back with it after a block that serves tools' urlopen calls)",
            path="urllib.request",
            fix="Run rec on CPython 3.10 to 3.13, or update recorder/_traffic/_compat.py",
        )
    return urllib.request._opener


def aioresponses_passing(
    untouched: Callable[[Any, str, Any, dict[str, Any]], bool],
    extra_headers: Callable[[str], Mapping[str, str]],
) -> type[Any]:
    """``aioresponses``, except that a request for which ``untouched(session, method, url,
    kwargs)`` is true is sent for real, untouched by the mock, and that every other request
    carries ``extra_headers(url)`` besides its own."""
    from aioresponses import aioresponses

    class RecAioresponses(aioresponses):
        async def _request_mock(
            self, orig_self: Any, method: str, url: Any, *args: Any, **kwargs: Any
        ) -> Any:
            if untouched(orig_self, method, url, kwargs):
                return await self.patcher.temp_original(orig_self, method, url, *args, **kwargs)
            extra = extra_headers(str(url))
            if extra:
                kwargs["headers"] = {**dict(kwargs.get("headers") or {}), **extra}
            return await super()._request_mock(orig_self, method, url, *args, **kwargs)

    return RecAioresponses


_LIVE_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_LIVE_MARK = "__rec_live_reach__"
_live_lock = threading.Lock()


def plain_websocket_url(base_url: str | None) -> str | None:
    """``ws://HOST:PORT/...`` for a plain-HTTP loopback base URL; None for any other."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "ws") or (parts.hostname or "") not in _LIVE_LOOPBACK:
        return None
    return urlunsplit(parts._replace(scheme="ws")).rstrip("/")


def _patch_base_url(api_client_class: Any) -> None:
    original = api_client_class._websocket_base_url
    if getattr(original, _LIVE_MARK, False):
        return

    @functools.wraps(original)
    def _websocket_base_url(self: Any, http_options: Any = None) -> Any:
        options = http_options or getattr(self, "_http_options", None)
        plain = plain_websocket_url(getattr(options, "base_url", None))
        return plain if plain is not None else original(self, http_options)

    setattr(_websocket_base_url, _LIVE_MARK, True)
    api_client_class._websocket_base_url = _websocket_base_url


def _patch_connect(live_module: Any) -> None:
    original = live_module.ws_connect
    if getattr(original, _LIVE_MARK, False):
        return

    @functools.wraps(original)
    def ws_connect(uri: str, *args: Any, **kwargs: Any) -> Any:
        if isinstance(uri, str) and uri.startswith("ws://"):
            kwargs.pop("ssl", None)  # a plain socket takes no SSL context
        return original(uri, *args, **kwargs)

    setattr(ws_connect, _LIVE_MARK, True)
    live_module.ws_connect = ws_connect


def install_live_reach(live_module: Any = None) -> bool:
    """Let google-genai's Live client reach plain-HTTP loopback base URLs (idempotent).

    Returns False when google-genai (or its Live module) is not importable, or no longer
    has the names patched (the Live client then keeps google-genai's own behaviour).
    """
    with _live_lock:
        try:
            if live_module is None:
                from google.genai import live as live_module
            from google.genai import _api_client
        except ImportError:
            return False
        if not hasattr(_api_client.BaseApiClient, "_websocket_base_url") or not hasattr(
            live_module, "ws_connect"
        ):
            return False
        _patch_base_url(_api_client.BaseApiClient)
        _patch_connect(live_module)
        return True


def aiohttp_protocol_factory(connector: Any) -> Any:
    """The callable an aiohttp ``TCPConnector`` builds each connection's protocol with
    (None where aiohttp keeps it elsewhere)."""
    return getattr(connector, "_factory", None)


def set_aiohttp_protocol_factory(connector: Any, factory: Any) -> None:
    """Make ``connector`` build its connections' protocols with ``factory``."""
    connector._factory = factory


def aiohttp_response_parser(handler: Any) -> Any:
    """The response parser of an aiohttp ``ResponseHandler`` (None before it has one)."""
    return getattr(handler, "_parser", None)


def hold_aiohttp_headers(response: Any) -> bool:
    """Make a not yet prepared aiohttp ``StreamResponse`` hold its status line and headers
    until its first body bytes (or its end), and send them in the same write; False where
    this aiohttp has no ``_send_headers_immediately`` (the headers then leave at once)."""
    if not hasattr(response, "_send_headers_immediately"):
        return False
    response._send_headers_immediately = False
    return True


def large_body_requests(client_max_size: int) -> Callable[..., Any]:
    """A ``request_factory`` for aiohttp's ``web.Server`` whose requests read bodies of up
    to ``client_max_size`` bytes (``web.BaseRequest`` alone reads 1 MiB)."""
    from aiohttp import web

    def make(message: Any, payload: Any, protocol: Any, writer: Any, task: Any) -> Any:
        loop = task.get_loop()
        return web.BaseRequest(
            message, payload, protocol, writer, task, loop, client_max_size=client_max_size
        )

    return make


def module_generators() -> tuple[random.Random, random.SystemRandom]:
    """The generators behind ``random``'s module functions and behind ``secrets``."""
    return random._inst, secrets._sysrand  # type: ignore[attr-defined]


def caller_frame(depth: int) -> FrameType | None:
    """The frame ``depth`` levels above the caller of this function (None: none)."""
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None
