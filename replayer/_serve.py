"""``rec serve``: replay recordings to any process until interrupted."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cassettes._matching import MatchRules
from recorder._traffic import ProxyServer, run_server
from replayer._replay_api import load_cassettes
from replayer._replay_handler import ReplayHandler

__all__ = ["ServeSummary", "serve_forever"]


@dataclass(frozen=True)
class ServeSummary:
    """What a `rec serve` session did."""

    served: int
    """HTTP requests answered from the recordings."""
    misses: int
    """Requests and Live sessions no recording matched."""
    live_sessions: int = 0
    """Live (WebSocket) sessions played to their end."""


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
    loaded = load_cassettes(paths)
    handler = ReplayHandler(loaded, rules=rules, realtime=realtime)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def request_stop() -> None:
            loop.call_soon_threadsafe(stop.set)

        async with ProxyServer(handler, host=host, port=port, on_stop=request_stop) as server:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            on_ready(server.url, len(loaded))
            await stop.wait()

    run_server(main())
    return ServeSummary(
        served=handler.served,
        misses=len(handler.misses),
        live_sessions=handler.live.served,
    )
