"""Replay recordings through a loopback proxy: :func:`replay` (a thread) and
:func:`replay_async` (the caller's event loop)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

from typing_extensions import TypedDict, Unpack

from cassettes._cassette import load_cassette
from cassettes._errors import ReplayMiss
from cassettes._matching import MatchRules
from recorder._traffic import ProxyServer, pointing_clients_at
from replayer._file_search import find_cassettes
from replayer._model_clients import shared_tls_for_clients
from replayer._placeholder_credentials import PLACEHOLDER_API_KEY, placeholder_credentials
from replayer._replay_channel import ReplayChannel
from replayer._replay_handler import LoadedCassette, ReplayHandler
from replayer._tool_replay import ToolTrafficReplay, tool_exchanges

__all__ = [
    "PLACEHOLDER_API_KEY",
    "Replay",
    "SessionOptions",
    "load_cassettes",
    "replay",
    "replay_async",
]


def load_cassettes(paths: Sequence[str | Path]) -> list[LoadedCassette]:
    """Load every cassette under ``paths`` (see :func:`find_cassettes`)."""
    return [LoadedCassette(p, load_cassette(p, lazy=True)) for p in find_cassettes(paths)]


class Replay:
    """A running replay: its URL, and what it served and missed."""

    def __init__(self, handler: ReplayHandler, server: ProxyServer) -> None:
        self.handler = handler
        self.server = server

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def channel(self) -> ReplayChannel:
        """Every exchange served and every miss, in order."""
        return self.handler.channel

    @property
    def misses(self) -> list[ReplayMiss]:
        """Requests that matched no recording (each was answered with an error)."""
        return self.handler.misses

    @property
    def served(self) -> int:
        return self.handler.served

    def assert_no_misses(self) -> None:
        """Raise the first miss (an AssertionError subclass carrying the diff)."""
        if self.handler.misses:
            raise self.handler.misses[0]


class SessionOptions(TypedDict, total=False):
    """The keyword arguments :func:`replay` and :func:`replay_async` share, all optional.

    ``rules`` (how requests match; ``MatchRules()``), ``realtime`` (answer at the recorded
    pace; off), ``point_clients`` (point google-genai clients at the replay; on), ``host``
    and ``port`` (where to listen; ``127.0.0.1``, any free port), ``log_misses`` (log each
    miss; on), ``channel`` (where served and missed exchanges are reported; a new one),
    ``preloaded`` (the cassettes already loaded, instead of loading the paths again), and
    ``ordered`` (answer concurrent calls in the recording's completion order, for an ADK
    agent run in this process; see :class:`~replayer._replay_handler.ReplayHandler`), and
    ``serve_tools`` (with ``point_clients``: answer this process's tool HTTP calls — httpx,
    requests, aiohttp, urllib, an agent's A2A calls — from the cassettes' tool exchanges and
    refuse the rest; on), and ``in_process`` (with ``point_clients``: google-genai clients
    built in this process in the block are answered without a socket, by the same
    decision the proxy makes; on for :func:`replay` unless ``realtime``, off for
    :func:`replay_async`).
    """

    rules: MatchRules | None
    realtime: bool
    point_clients: bool
    host: str
    port: int
    log_misses: bool
    channel: ReplayChannel | None
    preloaded: Sequence[LoadedCassette] | None
    ordered: bool
    serve_tools: bool
    in_process: bool


@contextlib.contextmanager
def replay(*paths: str | Path, **options: Unpack[SessionOptions]) -> Iterator[Replay]:
    """Serve recordings on loopback and point google-genai clients at them.

    Nothing reaches the network: a request with no recording gets an error naming the
    nearest recording and what differs (fail closed). What was served and missed is
    reported to ``channel`` (``Replay.channel``; a new one by default). Where the environment has no
    credentials, placeholders are supplied for the block (an API key, and for Vertex AI
    an ADC file with a placeholder token; see ``placeholder_credentials``).
    ``options``: see :class:`SessionOptions`.

    Example::

        with rec.replay("recordings/weather.cassette.json") as r:
            client = genai.Client()
            client.models.generate_content(model="gemini-2.0-flash", contents="Hi")
        assert not r.misses

    The tools' own HTTP calls made in this process inside the block (recorded by
    ``rec.record``) are answered from the cassettes too, and an unrecorded one is refused
    with the client's connection error (``serve_tools``).

    Raises:
        InputError: a cassette is missing or invalid.
    """
    preloaded = options.get("preloaded")
    handler = _handler(list(preloaded) if preloaded is not None else load_cassettes(paths), options)
    server = _server(handler, options)
    with server.running_in_thread():
        in_process = options.get("in_process", True) and not options.get("realtime", False)
        with _pointed(Replay(handler, server), options, in_process=in_process) as session:
            yield session


@contextlib.asynccontextmanager
async def replay_async(
    *paths: str | Path, **options: Unpack[SessionOptions]
) -> AsyncIterator[Replay]:
    """:func:`replay`, served on the caller's own event loop instead of a thread of its own.

    For async callers whose model calls are async too (an ADK agent: ADK always calls the
    async google-genai path): a request and its answer stay on one loop, with no hop
    between threads. Nothing on that loop may wait synchronously for a model call (a sync
    google-genai call from a callback would wait for a server that cannot run): use
    :func:`replay` there.

    Example::

        async with replayer.replay_async("recordings/weather.cassette.json") as r:
            await client.aio.models.generate_content(model="gemini-2.0-flash", contents="Hi")

    Raises:
        InputError: a cassette is missing or invalid.
    """
    preloaded = options.get("preloaded")
    cassettes = (
        list(preloaded) if preloaded is not None else await asyncio.to_thread(load_cassettes, paths)
    )
    handler = _handler(cassettes, options)
    async with _server(handler, options) as server:
        in_process = options.get("in_process", False) and not options.get("realtime", False)
        with _pointed(Replay(handler, server), options, in_process=in_process) as session:
            yield session


def _handler(cassettes: list[LoadedCassette], options: SessionOptions) -> ReplayHandler:
    """The replay handler the options ask for (ReplayHandler's defaults where not given)."""
    return ReplayHandler(
        cassettes,
        rules=options.get("rules"),
        realtime=options.get("realtime", False),
        channel=options.get("channel"),
        log_misses=options.get("log_misses", True),
        ordered=options.get("ordered", False),
    )


def _server(handler: ReplayHandler, options: SessionOptions) -> ProxyServer:
    """The loopback server for ``handler``, on the options' host and port."""
    return ProxyServer(handler, host=options.get("host", "127.0.0.1"), port=options.get("port", 0))


@contextlib.contextmanager
def _pointed(session: Replay, options: SessionOptions, *, in_process: bool) -> Iterator[Replay]:
    """Point google-genai clients at a running replay (with placeholder credentials);
    ``in_process``: those built in this process are answered without a socket."""
    if not options.get("point_clients", True):
        yield session
        return
    cassettes = [loaded.cassette for loaded in session.handler.cassettes]
    with contextlib.ExitStack() as stack:
        extra = stack.enter_context(placeholder_credentials(os.environ, cassettes))
        stack.enter_context(pointing_clients_at(session.url, extra=extra))
        # The clients talk plain HTTP to the replay: one TLS context for the process
        # instead of three per client (ADK builds a client per model per case).
        stack.enter_context(shared_tls_for_clients())
        if in_process and session.handler.fallback is None:
            from replayer._in_process import answering_in_process

            stack.enter_context(answering_in_process(session.handler, session.url))
        if options.get("serve_tools", True):
            # Tools' own calls in this process never reach the network either.
            tools = [e for cassette in cassettes for e in tool_exchanges(cassette.exchanges)]
            names = ", ".join(str(loaded.path) for loaded in session.handler.cassettes)
            replay = ToolTrafficReplay(tools, own=[session.url], label=names or "the recording")
            stack.enter_context(replay.serving())
        yield session
