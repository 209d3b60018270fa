"""``rec serve``: replay recordings to any process until interrupted."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cassettes._cassette import LazyExchanges, load_cassette
from cassettes._matching import MatchRules
from recorder._traffic import ProxyServer, run_server
from replayer._file_search import find_cassettes
from replayer._replay_channel import ReplayChannel
from replayer._replay_handler import LoadedCassette, ReplayHandler

__all__ = ["ServeSummary", "serve_forever", "serving_handler"]


@dataclass(frozen=True)
class ServeSummary:
    """What a `rec serve` session did."""

    served: int
    """HTTP requests answered from the recordings."""
    misses: int
    """Requests and Live sessions no recording matched."""
    live_sessions: int = 0
    """Live (WebSocket) sessions played to their end."""


def serving_handler(
    paths: Sequence[str | Path], *, rules: MatchRules | None = None, realtime: bool = False
) -> ReplayHandler:
    """What ``rec serve`` answers with: the cassettes under ``paths``, loaded lazily, each
    exchange kept parsed only while it is in use (and the last few used), and a channel
    that counts what it served without keeping it. A long session over a large recording
    so keeps no model, playback or report per request served.

    Raises:
        InputError: a cassette is missing or invalid.
    """
    loaded = [LoadedCassette(p, load_cassette(p, lazy=True)) for p in find_cassettes(paths)]
    for cassette in loaded:
        if isinstance(cassette.cassette.exchanges, LazyExchanges):
            cassette.cassette.exchanges.keep_only_in_use()
    channel = ReplayChannel(keep_answered=False)
    return ReplayHandler(loaded, rules=rules, realtime=realtime, channel=channel)


def serve_forever(
    paths: Sequence[str | Path],
    *,
    rules: MatchRules | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    realtime: bool = False,
    on_ready: Callable[[str, int], None] = lambda url, count: None,
) -> ServeSummary:
    """Serve the cassettes under ``paths`` until SIGINT/SIGTERM or ``/__rec__/stop``.

    Raises:
        InputError: a cassette is missing or invalid, or the port is taken.
    """
    handler = serving_handler(paths, rules=rules, realtime=realtime)
    count = len(handler.cassettes)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def request_stop() -> None:
            loop.call_soon_threadsafe(stop.set)

        async with ProxyServer(handler, host=host, port=port, on_stop=request_stop) as server:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            on_ready(server.url, count)
            await stop.wait()

    run_server(main())
    return ServeSummary(
        served=handler.served,
        misses=len(handler.misses),
        live_sessions=handler.live.served,
    )
