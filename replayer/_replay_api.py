"""Replay recordings through a loopback proxy: :func:`replay` (a thread), :func:`replay_async`
(the caller's event loop), and :func:`auto_handler` for record-missing (``auto``) mode."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

from cassettes._cassette import Cassette, load_cassette
from cassettes._errors import ReplayMiss
from cassettes._matching import MatchRules
from recorder._client_env import pointing_clients_at
from recorder._forwarding import Forwarder
from recorder._recorder import AutoHandlerFactory
from recorder._server import ProxyServer
from replayer._file_search import find_cassettes
from replayer._placeholder_credentials import PLACEHOLDER_API_KEY, placeholder_credentials
from replayer._replay_channel import ReplayChannel
from replayer._replay_handler import LoadedCassette, ReplayHandler

__all__ = [
    "PLACEHOLDER_API_KEY",
    "Replay",
    "auto_handler",
    "load_cassettes",
    "replay",
    "replay_async",
]


def load_cassettes(paths: Sequence[str | Path]) -> list[LoadedCassette]:
    """Load every cassette under ``paths`` (see :func:`find_cassettes`)."""
    return [LoadedCassette(p, load_cassette(p)) for p in find_cassettes(paths)]


def auto_handler(
    rules: MatchRules | None = None, *, channel: ReplayChannel | None = None
) -> AutoHandlerFactory:
    """The ``auto``-mode handler factory for :class:`rec.Recorder`.

    Hits are reported to ``channel``; pass its ``answered`` as the recorder's
    ``on_recorded`` to have the recorded misses reported there too.
    """

    def build(forwarder: Forwarder, existing: Cassette) -> ReplayHandler:
        loaded = [LoadedCassette(Path(existing.name), existing)]
        return ReplayHandler(loaded, rules=rules, fallback=forwarder, channel=channel)

    return build


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


@contextlib.contextmanager
def replay(
    *paths: str | Path,
    rules: MatchRules | None = None,
    realtime: bool = False,
    point_clients: bool = True,
    host: str = "127.0.0.1",
    port: int = 0,
    log_misses: bool = True,
    channel: ReplayChannel | None = None,
    preloaded: Sequence[LoadedCassette] | None = None,
    ordered: bool = False,
) -> Iterator[Replay]:
    """Serve recordings on loopback and point google-genai clients at them.

    Nothing reaches the network: a request with no recording gets an error naming the
    nearest recording and what differs (fail closed). What was served and missed is
    reported to ``channel`` (``Replay.channel``; a new one by default). Where the environment has no
    credentials, placeholders are supplied for the block (an API key, and for Vertex AI
    an ADC file with a placeholder token; see ``placeholder_credentials``).

    Example::

        with rec.replay("recordings/weather.cassette.json") as r:
            client = genai.Client()
            client.models.generate_content(model="gemini-2.0-flash", contents="Hi")
        assert not r.misses

    ``log_misses=False`` keeps misses out of the log, for a caller that reports them itself.
    ``preloaded`` gives the cassettes already loaded (instead of loading ``paths`` again).
    ``ordered`` answers concurrent calls in the recording's completion order (see
    :class:`~replayer._replay_handler.ReplayHandler`), for an ADK agent run in this process.

    Raises:
        InputError: a cassette is missing or invalid.
    """
    handler = ReplayHandler(
        list(preloaded) if preloaded is not None else load_cassettes(paths),
        rules=rules,
        realtime=realtime,
        channel=channel,
        log_misses=log_misses,
        ordered=ordered,
    )
    server = ProxyServer(handler, host=host, port=port)
    with server.running_in_thread():
        with _pointed(Replay(handler, server), point_clients=point_clients) as session:
            yield session


@contextlib.asynccontextmanager
async def replay_async(
    *paths: str | Path,
    rules: MatchRules | None = None,
    realtime: bool = False,
    point_clients: bool = True,
    host: str = "127.0.0.1",
    port: int = 0,
    log_misses: bool = True,
    channel: ReplayChannel | None = None,
    preloaded: Sequence[LoadedCassette] | None = None,
    ordered: bool = False,
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
    cassettes = (
        list(preloaded) if preloaded is not None else await asyncio.to_thread(load_cassettes, paths)
    )
    handler = ReplayHandler(
        cassettes,
        rules=rules,
        realtime=realtime,
        channel=channel,
        log_misses=log_misses,
        ordered=ordered,
    )
    async with ProxyServer(handler, host=host, port=port) as server:
        with _pointed(Replay(handler, server), point_clients=point_clients) as session:
            yield session


@contextlib.contextmanager
def _pointed(session: Replay, *, point_clients: bool) -> Iterator[Replay]:
    """Point google-genai clients at a running replay (with placeholder credentials)."""
    if not point_clients:
        yield session
        return
    cassettes = [loaded.cassette for loaded in session.handler.cassettes]
    with placeholder_credentials(os.environ, cassettes) as extra:
        with pointing_clients_at(session.url, extra=extra):
            yield session
