"""Replay mode: answer every request from cassettes, never from the network.

A hit is played back as recorded: the same status and headers, a JSON body, or an SSE
stream framed byte for byte (optionally at the recorded pace), cut where the recording
was cut. A miss is never forwarded: the client gets a Google error envelope whose
message names the cassette, the nearest recording and what differs, so google-genai
raises it as an ``APIError``; the miss itself goes to the handler's
:class:`~replayer._replay_channel.ReplayChannel` under the id the envelope carries. In
``auto`` mode a miss is forwarded and recorded instead. A Gemini Live WebSocket is played
frame by frame from the cassettes' ``live`` sections (``replayer._live_replay``); it is
never forwarded, also in ``auto`` mode.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from cassettes._bodies import body_to_bytes
from cassettes._cassette import (
    BinaryBody,
    Cassette,
    Exchange,
    LazyExchanges,
    RecordedRequest,
    SseBody,
)
from cassettes._divergence import explain_miss, miss_error_body
from cassettes._errors import InputError, ReplayMiss
from cassettes._google_error import google_error
from cassettes._matching import MatchIndex, MatchRules, WireRequest
from cassettes._secret_shapes import mask
from cassettes._sse import frame_event, frame_tail
from recorder._traffic import IncomingRequest, ResponseWriter, gateway_mode_refusal
from replayer._completion_order import ORDER_WAIT_S, CompletionOrder
from replayer._exchange_rows import exchange_rows
from replayer._live_replay import LiveReplayer, LoadedSession
from replayer._recorded_path import RecordedPath
from replayer._replay_channel import ReplayChannel

if TYPE_CHECKING:  # the recorder loads only where a miss is recorded (`auto` mode)
    from recorder import Forwarder

__all__ = ["LoadedCassette", "Playback", "Refusal", "ReplayHandler", "playback"]

log = logging.getLogger(__name__)

_REPLAY_BASE = "http://rec.replay"
_DROP_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})
_PLAYBACKS = 16
"""Playbacks a handler keeps built (see :meth:`ReplayHandler.playback`)."""


@dataclass(frozen=True)
class LoadedCassette:
    """A cassette and the file it came from (for messages)."""

    path: Path
    cassette: Cassette


@dataclass(frozen=True)
class Refusal:
    """An error the replay answers instead of a recording (a miss, a gateway-mode call)."""

    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Playback:
    """A recorded response as the client receives it."""

    status: int
    headers: dict[str, str]
    body: bytes
    """The whole body; for a stream, the bytes after its last event (a cut stream's tail)."""
    events: list[tuple[float, bytes]] | None
    """A stream's events, framed, with their recorded offsets (ms); None for a whole body."""
    cut: bool
    """The stream was cut when recorded: the connection breaks after the tail."""


def _gateway_refusal(request: IncomingRequest) -> Refusal | None:
    """The error a Vertex gateway-mode call is answered with (never forwarded), or None."""
    refusal = gateway_mode_refusal(request.method, request.path_qs)
    if refusal is None:
        return None
    return Refusal(400, {"content-type": "application/json"}, json.dumps(refusal).encode())


def _call(request: IncomingRequest) -> str:
    """``METHOD /path`` of a request (its query left out: it may hold a key)."""
    return f"{request.method} {request.path_qs.split('?', 1)[0]}"


def playback(exchange: Exchange) -> Playback:
    """The bytes to answer with for a recorded exchange (SSE framed exactly)."""
    response = exchange.response
    headers = {k: v for k, v in response.headers.items() if k not in _DROP_HEADERS}
    body = response.body
    if isinstance(body, BinaryBody) and body.content_encoding:
        headers["content-encoding"] = body.content_encoding  # stored still encoded
    if not isinstance(body, SseBody):
        return Playback(response.status, headers, body_to_bytes(body), None, cut=False)
    events = [(event.offset_ms, frame_event(event, body.line_ending)) for event in body.events]
    return Playback(response.status, headers, frame_tail(body.tail), events, cut=not body.complete)


class ReplayHandler:
    """Serve requests from cassettes.

    Args:
        cassettes: the recordings to serve (their exchanges form one index).
        rules: how loosely requests match.
        realtime: pace SSE events at their recorded offsets (default: as fast as possible).
        fallback: in ``auto`` mode, the forwarder that records misses.
        channel: where hits and misses are reported (a new one by default); in auto mode
            the recorder reports what it recorded into the same channel.
        log_misses: log each miss as a warning (``rec serve``); off where the caller
            reports the miss itself (``rec replay`` fails the case with it), so it is
            printed once.
        ordered: answer concurrent calls in the order the recording finished them
            (:mod:`replayer._completion_order`: ParallelAgent branches). On where rec runs
            the agent itself (``rec replay``, ``AgentEvaluator``, the ``rec`` fixture); off
            for ``rec serve`` and ``replay()``, whose clients may send in another order
            than the recording's (one client sending one request at a time would wait
            :data:`~replayer._completion_order.ORDER_WAIT_S` for each held call).
    """

    def __init__(
        self,
        cassettes: Sequence[LoadedCassette],
        *,
        rules: MatchRules | None = None,
        realtime: bool = False,
        fallback: Forwarder | None = None,
        channel: ReplayChannel | None = None,
        log_misses: bool = True,
        ordered: bool = False,
    ) -> None:
        self.log_misses = log_misses
        self.rules = rules or MatchRules()
        self.realtime = realtime
        self.fallback = fallback
        self.cassettes = list(cassettes)
        # A tool's own calls are not the model's (see replayer._tool_replay). Lazily loaded
        # cassettes stay unparsed: matching reads their keys from the file's bytes.
        parts: list[Sequence[Exchange]] = []
        self._parts: list[tuple[Path, Sequence[Exchange], Sequence[int]]] = []
        """Each cassette's exchanges and the positions of its model exchanges among them,
        in the index's order."""
        self._origin: dict[int, Path] = {}
        self._lazy_paths: list[tuple[LazyExchanges, Path]] = []
        for loaded in self.cassettes:
            found = loaded.cassette.exchanges
            if isinstance(found, LazyExchanges):
                # The origins come from the side index or the scan: no exchange's page is read.
                positions = found.of_tools(False)
                model = found.select(positions)
                self._lazy_paths.append((model, loaded.path))
                parts.append(model)
                self._parts.append((loaded.path, found, positions))
                continue
            kept = [e for e in found if e.origin != "tool"]
            self._origin.update((id(e), loaded.path) for e in kept)
            parts.append(kept)
            self._parts.append((loaded.path, kept, range(len(kept))))
        lazy = [p for p in parts if isinstance(p, LazyExchanges)]
        if lazy and len(lazy) == len(parts):
            self.index = MatchIndex(sum(lazy[1:], lazy[0]), self.rules)
        else:
            self.index = MatchIndex([e for part in parts for e in part], self.rules)
        self.completion = CompletionOrder(
            [c.cassette.exchanges for c in self.cassettes] if ordered else []
        )
        self.channel = channel or ReplayChannel()
        self.live = LiveReplayer(
            [
                LoadedSession(loaded.path, session)
                for loaded in self.cassettes
                for session in (loaded.cassette.live.sessions if loaded.cassette.live else [])
            ],
            rules=self.rules,
            realtime=realtime,
            channel=self.channel,
            log_misses=log_misses,
        )
        self.served = 0
        """Requests answered from the cassettes."""
        self.path: RecordedPath | None = None
        """In ``auto`` mode under ``rec replay``: the case being run, whose requests go to
        the model from the first one its recording does not hold
        (:mod:`replayer._recorded_path`); None answers every hit from the recording."""
        self._playbacks: dict[int, tuple[Exchange, Playback]] = {}
        self._unreadable_said: set[str] = set()

    @property
    def misses(self) -> list[ReplayMiss]:
        """Requests no recording matched (each was answered with an error)."""
        return self.channel.misses

    def _cassette_label(self) -> str:
        if len(self.cassettes) == 1:
            return str(self.cassettes[0].path)
        return f"{len(self.cassettes)} cassettes"

    def decide(self, request: IncomingRequest) -> Exchange | Refusal | None:
        """What to answer ``request`` with (the sync decision, for the proxy and for the
        in-process transport alike): the recorded exchange of a hit, an error envelope
        (a miss, explained; a gateway-mode call), or None: forward it (``auto`` mode).

        A hit is reported to the channel as served, a miss as missed.
        """
        # Matched from the body's parsed parts; the request's model is built for a miss.
        wire = WireRequest(
            request.method, _REPLAY_BASE + request.path_qs, request.headers, request.body
        )
        case = self.path if self.fallback is not None else None
        if case is not None and case.left:  # past the departure: nothing is replayed
            return self._forwarded(request, case)
        hit = self.index.lookup_wire(wire)
        if hit is not None:
            self.served += 1
            if case is not None:
                case.served()
            self.channel.answered(hit)
            return hit
        refusal = _gateway_refusal(request)
        if refusal is not None:
            return refusal
        recorded = wire.recorded()
        if self.fallback is not None:  # the recorder reports what it records to the channel
            if case is not None:
                case.leave(_call(request), self._differs(recorded))
            return None
        nearest = self.index.nearest(recorded)
        path = self.origin(nearest) if nearest is not None else None
        miss = explain_miss(
            recorded,
            nearest,
            rules=self.rules,
            cassette_path=path or self._cassette_label(),
            hints=self.channel.hints,
        )
        if self.log_misses:
            log.warning("%s", miss)
        body = miss_error_body(miss, miss_id=self.channel.missed(miss))
        return Refusal(
            int(body["error"]["code"]),
            {"content-type": "application/json; charset=UTF-8"},
            json.dumps(body).encode("utf-8"),
        )

    def _forwarded(self, request: IncomingRequest, path: RecordedPath) -> Refusal | None:
        """A request past the case's departure: forwarded (None), or a gateway-mode refusal."""
        refusal = _gateway_refusal(request)
        if refusal is None:
            path.sent()
        return refusal

    def _differs(self, recorded: RecordedRequest) -> str:
        """The first difference between ``recorded`` and the nearest recorded request."""
        nearest = self.index.nearest(recorded)
        if nearest is None:
            return "the recording holds no model request"
        miss = explain_miss(recorded, nearest, rules=self.rules, max_lines=1)
        differs = miss.diff[0] if miss.diff else "no recorded request is the same"
        return f"{differs} (nearest: exchanges[{nearest.id}])"

    async def handle(self, request: IncomingRequest, writer: ResponseWriter) -> None:
        try:
            decision = self.decide(request)
            if decision is None:
                assert self.fallback is not None
                await self.fallback.forward(request, writer)
            elif isinstance(decision, Refusal):
                await writer.send(decision.status, decision.headers, decision.body)
            else:
                await self._play_in_recorded_order(decision, request, writer)
        except InputError as exc:  # a cassette edited in place while served
            if writer.started:
                raise
            await self._refuse_unreadable(exc, writer)

    async def _refuse_unreadable(self, exc: InputError, writer: ResponseWriter) -> None:
        """Answer, without a traceback, a request the recordings can no longer be read
        for (a cassette changed on disk in place: its exchanges are not what was loaded);
        said once in the log, and to every such request."""
        message = mask(f"rec cannot read the recordings it serves: {exc}")
        if message not in self._unreadable_said:
            self._unreadable_said.add(message)
            log.error("%s", message)
        # 409 ABORTED: not retried by clients (the file will not change back).
        await writer.send_error(google_error(409, message, "ABORTED"))

    async def handle_live(self, request: web.Request) -> web.StreamResponse:
        """A Live WebSocket: played from the recorded sessions, never forwarded."""
        return await self.live.serve(request)

    async def _play_in_recorded_order(
        self, exchange: Exchange, request: IncomingRequest, writer: ResponseWriter
    ) -> None:
        """Play ``exchange`` once the calls recorded to finish before it have been answered
        (bounded: see :mod:`replayer._completion_order`, ParallelAgent branches)."""
        await self.wait_for_turn(exchange)
        try:
            await self._play(exchange, request, writer)
        finally:
            self.completion.answered(exchange)

    async def wait_for_turn(self, exchange: Exchange) -> None:
        """Wait (bounded) until the calls recorded to finish before ``exchange`` have been
        answered; the caller then plays it and notes ``completion.answered(exchange)``."""
        if not self.completion.holds(exchange):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ORDER_WAIT_S
        while self.completion.waits_for(exchange) and loop.time() < deadline:
            await asyncio.sleep(0.005)

    def wait_for_turn_blocking(self, exchange: Exchange) -> None:
        """:meth:`wait_for_turn` for a sync caller (its thread waits)."""
        if not self.completion.holds(exchange):
            return
        deadline = time.monotonic() + ORDER_WAIT_S
        while self.completion.waits_for(exchange) and time.monotonic() < deadline:
            time.sleep(0.005)

    def playback(self, exchange: Exchange) -> Playback:
        """:func:`playback` of a recorded exchange, built the first time it is played (an
        exhausted queue's last answer repeats); at most :data:`_PLAYBACKS` are kept, so a
        server answering thousands of requests keeps none of theirs."""
        found = self._playbacks.get(id(exchange))
        if found is None or found[0] is not exchange:
            if len(self._playbacks) >= _PLAYBACKS:
                self._playbacks.clear()
            found = (exchange, playback(exchange))
            self._playbacks[id(exchange)] = found
        return found[1]

    async def _play(
        self, exchange: Exchange, request: IncomingRequest, writer: ResponseWriter
    ) -> None:
        played = self.playback(exchange)
        if played.events is None:
            await writer.send(played.status, played.headers, played.body)
            return
        await writer.start(played.status, played.headers)
        for offset_ms, chunk in played.events:
            if self.realtime:
                delay = offset_ms - request.elapsed_ms()
                if delay > 0:
                    await asyncio.sleep(delay / 1000.0)
            await writer.write(chunk)
        await writer.write(played.body)  # the tail, if any
        if played.cut:
            writer.abort()

    def origin(self, exchange: Exchange) -> Path | None:
        """The cassette file an exchange was loaded from."""
        found = self._origin.get(id(exchange))
        if found is None:
            for exchanges, path in self._lazy_paths:
                if any(e is exchange for e in exchanges.loaded()):
                    return path
        return found

    def unused(self) -> list[Exchange]:
        """Recorded exchanges no request has played (a sign the agent took a shorter path)."""
        return self.index.unused()

    def unused_ids(self) -> dict[Path, frozenset[int]]:
        """Per cassette, the ids of the model exchanges no request has played (read from
        a lazily loaded file's lines: nothing is parsed for it)."""
        used = self.index.used
        found: dict[Path, frozenset[int]] = {}
        offset = 0
        for path, exchanges, positions in self._parts:
            every = [row.id for row in exchange_rows(exchanges).rows]  # read in one pass
            ids = frozenset(every[p] for k, p in enumerate(positions) if offset + k not in used)
            found[path] = found.get(path, frozenset()) | ids
            offset += len(positions)
        return found

    def status(self) -> dict[str, Any]:
        return {
            "mode": "auto" if self.fallback is not None else "replay",
            "served": self.served,
            "misses": len(self.misses),
            "recorded": self.fallback.recorded if self.fallback is not None else 0,
            **self.live.status(),
            "cassettes": [str(c.path) for c in self.cassettes],
        }

    async def aclose(self) -> None:
        if self.fallback is not None:
            await self.fallback.aclose()
