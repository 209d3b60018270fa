"""Replay a Gemini Live session frame by frame, never going to the network.

A Live WebSocket that reaches the replaying proxy is answered from the cassettes' ``live``
sections (:mod:`cassettes._live`). Its first message (``setup``) picks the first unused
recorded session whose ``setup`` matches (the last match again once all were played, as a
repeated REST request gets the last answer); from then on the recorded frames are walked in
order: each recorded server frame is sent (text or binary, as recorded; at its recorded
offset with ``realtime``), and each recorded client frame must be matched by the client's
next message. Frames are compared in the canonical form of REST bodies
(:func:`cassettes._matching.canonical_request`: keys sorted, bytes fields in one spelling,
the ``--ignore`` paths left out), so the same ignore paths loosen both.

Audio and video chunks (``realtime_input``) are compared by the sha256 of their bytes
(``MatchRules.live_audio="hash"``, the default). Re-encoded audio is not byte-stable, so
``"turns"`` (``--live-audio turns``) matches them by turn boundaries only: chunks on both
sides are left out of the comparison (any number, any bytes), and matching holds at every
other frame (``audio_stream_end``, ``activity_end``, a ``client_content`` turn).

A divergence fails closed: nothing more is sent, the socket is closed with code 1008 and a
reason naming the miss (google-genai raises it as an ``APIError`` which
:meth:`~replayer._replay_channel.ReplayChannel.miss_behind` maps back to the miss), and a
:class:`~cassettes._errors.ReplayMiss` naming the session, the frame and its turn, with the
diff, goes to the replay channel.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import WSMsgType, web

from cassettes._cassette import JsonBody, RecordedRequest
from cassettes._divergence import explain_miss, live_close_reason
from cassettes._errors import ReplayMiss
from cassettes._live import (
    LiveFrame,
    LiveSession,
    audio_digest,
    frame_from_message,
    frame_kind,
    turn_of,
)
from cassettes._matching import MatchRules, canonical_request
from replayer._replay_channel import ReplayChannel

__all__ = ["LiveReplayer", "LoadedSession"]

log = logging.getLogger(__name__)

_POLICY_VIOLATION = 1008
"""The WebSocket close code a divergence closes with."""
_FRAME_URL = "http://rec.replay/live"


@dataclass(frozen=True)
class LoadedSession:
    """A recorded Live session and the cassette file it came from."""

    path: Path
    session: LiveSession


def _canonical(frame: LiveFrame, rules: MatchRules) -> tuple[str, str]:
    """(kind, canonical text) of a frame, as REST bodies are compared."""
    if frame.data is None:
        return (
            ("base64", frame.base64 or "")
            if frame.base64 is not None
            else ("text", frame.text or "")
        )
    request = RecordedRequest(method="WS", url=_FRAME_URL, body=JsonBody(value=frame.data))
    return "json", canonical_request(request, rules).body_text


def _is_chunk(frame: LiveFrame) -> bool:
    """Whether a frame is only media chunks (no stream end, no text, no activity marker)."""
    if audio_digest(frame) is None or not isinstance(frame.data, dict):
        return False
    (value,) = frame.data.values()
    return isinstance(value, dict) and set(value) <= {
        "audio",
        "video",
        "media_chunks",
        "mediaChunks",
    }


@dataclass
class LiveReplayer:
    """Serves Live sessions from recordings (see the module docstring).

    Args:
        sessions: the recorded sessions, in recording order.
        rules: the match rules (``--ignore`` paths apply to every client frame).
        realtime: send server frames at their recorded offsets.
        channel: where misses go.
        log_misses: log each miss as a warning.
    """

    sessions: Sequence[LoadedSession]
    rules: MatchRules = field(default_factory=MatchRules)
    realtime: bool = False
    channel: ReplayChannel = field(default_factory=ReplayChannel)
    log_misses: bool = True
    served: int = 0
    """Sessions played to their end."""
    _used: set[int] = field(default_factory=set)

    async def serve(self, request: web.Request) -> web.StreamResponse:
        """Play one Live session to the client whose handshake is ``request``."""
        socket = web.WebSocketResponse(max_msg_size=0, autoping=True)
        await socket.prepare(request)
        started = time.perf_counter()
        first = await self._next_client_frame(socket, started)
        if first is None:
            return socket
        chosen = self._choose(first)
        if chosen is None:
            nearest = next((i for i in range(len(self.sessions)) if i not in self._used), None)
            if nearest is None and self.sessions:
                nearest = len(self.sessions) - 1
            await self._diverge(socket, nearest, 0, first, "the setup")
            return socket
        self._used.add(chosen)
        loaded = self.sessions[chosen]
        if await self._play(socket, chosen, loaded.session, first, started):
            self.served += 1
        if not socket.closed:
            await socket.close()
        return socket

    def _choose(self, first: LiveFrame) -> int | None:
        """The first unused session whose ``setup`` matches; once every match was used,
        the last of them again (as REST replays the last answer to a repeated request)."""
        wanted = _canonical(first, self.rules)
        last: int | None = None
        for index, loaded in enumerate(self.sessions):
            opening = next((f for f in loaded.session.frames if f.sender == "client"), None)
            if opening is None or _canonical(opening, self.rules) != wanted:
                continue
            if index not in self._used:
                return index
            last = index
        return last

    async def _next_client_frame(
        self, socket: web.WebSocketResponse, started: float
    ) -> LiveFrame | None:
        message = await socket.receive()
        if message.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
            return None
        offset = (time.perf_counter() - started) * 1000.0
        return frame_from_message("client", offset, message.data)

    async def _send(self, socket: web.WebSocketResponse, frame: LiveFrame, started: float) -> None:
        if self.realtime:
            delay = frame.offset_ms - (time.perf_counter() - started) * 1000.0
            if delay > 0:
                await asyncio.sleep(delay / 1000.0)
        if frame.data is not None:
            text = json.dumps(frame.data, ensure_ascii=False)
            if frame.binary:
                await socket.send_bytes(text.encode("utf-8"))
            else:
                await socket.send_str(text)
        elif frame.base64 is not None:
            await socket.send_bytes(base64.b64decode(frame.base64))
        else:
            await socket.send_str(frame.text or "")

    async def _play(
        self,
        socket: web.WebSocketResponse,
        index: int,
        session: LiveSession,
        first: LiveFrame,
        started: float,
    ) -> bool:
        """Walk the recorded frames; False when the client diverged (the socket is closed)."""
        frames = session.frames
        turns = self.rules.live_audio == "turns"
        pending: LiveFrame | None = first
        position = 0
        while position < len(frames):
            recorded = frames[position]
            if recorded.sender == "server":
                await self._send(socket, recorded, started)
                position += 1
                continue
            if turns and _is_chunk(recorded):
                position += 1  # matched by the turn boundary that follows it
                continue
            got = pending if pending is not None else await self._next_client_frame(socket, started)
            pending = None
            while turns and got is not None and _is_chunk(got):
                got = await self._next_client_frame(socket, started)
            if got is None:
                return True  # the client closed: what it asked for was answered
            if _canonical(recorded, self.rules) != _canonical(got, self.rules):
                await self._diverge(socket, index, position, got, f"frame {position}")
                return False
            position += 1
        extra = await self._next_client_frame(socket, started)
        while turns and extra is not None and _is_chunk(extra):
            extra = await self._next_client_frame(socket, started)
        if extra is not None:
            await self._diverge(socket, index, len(frames), extra, "the end of the session")
            return False
        return True

    async def _diverge(
        self,
        socket: web.WebSocketResponse,
        index: int | None,
        position: int,
        got: LiveFrame,
        what: str,
    ) -> None:
        miss = self._miss(index, position, got, what)
        if self.log_misses:
            log.warning("%s", miss)
        miss_id = self.channel.missed(miss)
        await socket.close(
            code=_POLICY_VIOLATION, message=live_close_reason(miss_id).encode("utf-8")[:123]
        )

    def _miss(self, index: int | None, position: int, got: LiveFrame, what: str) -> ReplayMiss:
        kind = frame_kind(got)
        if index is None:
            return ReplayMiss(
                f"a Live session opened with {kind}, but the cassettes have no Live sessions",
                path="the replayed cassettes",
                where="live.sessions",
                fix="Record the program's Live session with `rec start`",
            )
        loaded = self.sessions[index]
        frames = loaded.session.frames
        where = f"live.sessions[{loaded.session.id}].frames[{position}]"
        turn = turn_of(frames, min(position, len(frames)))
        fix = "Re-record with `rec start`, or loosen matching with an ignore path"
        if position >= len(frames):
            return ReplayMiss(
                f"Live session {loaded.session.id}, turn {turn}: the client sent {kind} after "
                f"the recorded session ended ({len(frames)} frames)",
                path=loaded.path,
                where=where,
                fix="Re-record with `rec start`",
            )
        recorded = frames[position]
        expected = frame_kind(recorded)
        diff: list[str] = []
        if audio_digest(recorded) is not None or audio_digest(got) is not None:
            diff.append(
                f"media sha256 changed: {(audio_digest(recorded) or 'none')[:16]} -> "
                f"{(audio_digest(got) or 'none')[:16]}"
            )
            fix += ", or match audio by turn boundaries only (--live-audio turns)"
        elif expected != kind:
            diff.append(f"message changed: {expected} -> {kind}")
        else:
            explained = explain_miss(
                RecordedRequest(method="WS", url=_FRAME_URL, body=JsonBody(value=got.data)),
                _as_exchange(recorded),
                rules=self.rules,
            )
            diff.extend(explained.diff)
        return ReplayMiss(
            f"Live session {loaded.session.id}, {what} (turn {turn}): the client's {kind} "
            f"differs from the recorded {expected}",
            path=loaded.path,
            where=where,
            fix=fix,
            diff=diff,
        )

    def status(self) -> dict[str, int]:
        return {"live_sessions": len(self.sessions), "live_served": self.served}


def _as_exchange(frame: LiveFrame):  # type: ignore[no-untyped-def]
    from cassettes._cassette import Exchange, RecordedResponse

    return Exchange(
        id=0,
        recorded_at="",
        request=RecordedRequest(method="WS", url=_FRAME_URL, body=JsonBody(value=frame.data)),
        response=RecordedResponse(status=200),
    )
