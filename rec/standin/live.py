"""A stand-in for the Gemini Live API: ``BidiGenerateContent`` over plain WebSocket on 127.0.0.1.

It speaks the JSON frames google-genai's ``client.aio.live.connect`` exchanges with the
real service::

    client  {"setup": {"model": "models/...", "generationConfig": ..., "tools": [...]}}
    server  {"setupComplete": {}}
    client  {"client_content": {"turns": [{"role": "user", "parts": [{"text": "hi"}]}],
                                "turn_complete": true}}
    server  {"serverContent": {"modelTurn": {"parts": [{"text": "You said: "}]}}}
    server  {"serverContent": {"modelTurn": {"parts": [{"text": "hi"}]}}}
    server  {"serverContent": {"generationComplete": true}}
    server  {"serverContent": {"turnComplete": true}, "usageMetadata": {...}}

A turn whose text names a word of ``tool_calls`` gets a ``toolCall`` instead (and a
``turnComplete``, as Gemini 2.5 Live models send); the client's ``tool_response`` then
gets the reply ``"The tool said: <its response JSON>"``. Audio
(``realtime_input`` with ``audio`` or ``media_chunks``) is gathered until the client sends
``audio_stream_end`` (or ``activity_end``); the reply is an ``inputTranscription`` and
``"I heard N bytes of audio"``; a reply in a session that streamed ``video`` frames says how
many it saw. A session whose setup asks for ``AUDIO`` response modality
gets each reply piece as synthetic 24 kHz PCM (``inlineData``) with its text as an
``outputTranscription`` instead of text parts.

A setup with ``sessionResumption`` gets a ``sessionResumptionUpdate`` (a fresh ``newHandle``)
after each ``turnComplete``, and its replies count the turns of the conversation; a later
socket whose setup gives one of those handles resumes the conversation where the handle was
given (an unknown handle is refused with close code 1008). With ``go_away_after=N`` the
stand-in sends ``goAway`` after the N-th turn of a socket and closes it ``timeLeft`` later,
as the real service ends a connection. Like the real API, every server message is
sent as a binary WebSocket frame (``binary=False`` sends text frames).

Both Gemini API paths (``v1beta`` and ``v1alpha``) are served, and Vertex AI's
(``google.cloud.aiplatform.{v1beta1,v1}.LlmBidiService/BidiGenerateContent``); the key must
come as the ``key`` query parameter or the ``x-goog-api-key`` header, or, on a Vertex AI
path, an ``Authorization: Bearer`` token. Nothing here imports rec's other
packages (it stands in for the real service).

Usage::

    with StandinLive() as live:
        client = genai.Client(api_key=FAKE_API_KEY,
                              http_options={"base_url": live.url})   # ws:// needs rec's reach
        ...
        assert live.connections == 1
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from rec.standin._serving import serve_until_interrupted, start_loop_thread, stop_loop_thread

__all__ = [
    "GEMINI_LIVE_PATHS",
    "LIVE_PATHS",
    "VERTEX_LIVE_PATHS",
    "LiveSessionLog",
    "StandinLive",
    "main",
]

GEMINI_LIVE_PATHS = tuple(
    f"/ws/google.ai.generativelanguage.{version}.GenerativeService.BidiGenerateContent"
    for version in ("v1beta", "v1alpha")
)
VERTEX_LIVE_PATHS = tuple(
    f"/ws/google.cloud.aiplatform.{version}.LlmBidiService/BidiGenerateContent"
    for version in ("v1beta1", "v1")
)
LIVE_PATHS = GEMINI_LIVE_PATHS + VERTEX_LIVE_PATHS
"""The WebSocket paths the stand-in serves: the Gemini API's and Vertex AI's."""


@dataclass
class LiveSessionLog:
    """What the stand-in received on one socket (for tests to assert on)."""

    path: str
    api_key: str | None
    frames: list[Any] = field(default_factory=list)
    """The client's messages, parsed."""


def _reply_text(text: str) -> str:
    return f"You said: {text}"


@dataclass
class _Conversation:
    """What one socket's session holds: its modalities, the audio and video gathered, and,
    with session resumption, the turns of the conversation so far (kept across sockets)."""

    modes: set[str] = field(default_factory=set)
    audio: bytearray = field(default_factory=bytearray)
    video_frames: int = 0
    resumable: bool = False
    history: list[str] = field(default_factory=list)
    turns: int = 0
    """Turns answered on this socket (``go_away_after`` counts them)."""


class StandinLive:
    """A Live API stand-in in a daemon thread (see the module docstring).

    Args:
        reply: the model's answer to a text turn (default: ``"You said: <text>"``).
        tool_calls: a word in a turn's text -> (function name, arguments) to call instead.
        binary: send the server's messages as binary frames (as the Gemini API does).
        chunks: how many ``modelTurn`` messages a reply is split into.
        go_away_after: send ``goAway`` after this many turns on one socket, then close it
            ``go_away_seconds`` later (None: never).
        port: the port to listen on (0: a free one).
    """

    def __init__(
        self,
        *,
        reply: Callable[[str], str] = _reply_text,
        tool_calls: dict[str, tuple[str, dict[str, Any]]] | None = None,
        binary: bool = True,
        chunks: int = 2,
        go_away_after: int | None = None,
        go_away_seconds: float = 1.0,
        port: int = 0,
    ) -> None:
        self._reply = reply
        self._tool_calls = dict(tool_calls or {})
        self._binary = binary
        self._chunks = max(1, chunks)
        self._go_away_after = go_away_after
        self._go_away_seconds = go_away_seconds
        self._handles: dict[str, list[str]] = {}
        """Session resumption handle -> the conversation's turns when it was given."""
        self._closers: set[asyncio.Task[None]] = set()
        self.sessions: list[LiveSessionLog] = []
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def connections(self) -> int:
        """WebSockets accepted so far."""
        return len(self.sessions)

    @property
    def url(self) -> str:
        """The base URL to give a client (``http://127.0.0.1:PORT``)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> StandinLive:
        self._loop, server, self._thread = start_loop_thread(self._serve, "standin-live")
        self._server = server
        self.port = next(iter(server.sockets)).getsockname()[1]
        return self

    async def _serve(self) -> Server:
        return await serve(self._session, "127.0.0.1", self.port, process_request=self._check_path)

    def stop(self) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None:
            return

        async def shutdown() -> None:
            for closer in list(self._closers):
                closer.cancel()
            server.close()
            await server.wait_closed()

        stop_loop_thread(loop, self._thread, shutdown(), timeout=10)
        self._server = None

    def __enter__(self) -> StandinLive:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _check_path(self, connection: ServerConnection, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if path not in LIVE_PATHS:
            return connection.respond(404, f"no Live endpoint at {path}\n")
        query = dict(parse_qsl(urlsplit(request.path).query))
        if query.get("key") or request.headers.get("x-goog-api-key"):
            return None
        bearer = request.headers.get("authorization", "")
        if path in VERTEX_LIVE_PATHS and bearer.startswith("Bearer ") and bearer[7:].strip():
            return None
        return connection.respond(401, "API key or access token missing\n")

    async def _send(self, connection: ServerConnection, message: dict[str, Any]) -> None:
        text = json.dumps(message)
        await connection.send(text.encode() if self._binary else text)

    async def _session(self, connection: ServerConnection) -> None:
        request = connection.request
        assert request is not None
        parts = urlsplit(request.path)
        headers: Headers = request.headers
        log = LiveSessionLog(
            path=parts.path,
            api_key=dict(parse_qsl(parts.query)).get("key") or headers.get("x-goog-api-key"),
        )
        self.sessions.append(log)
        state = _Conversation()
        try:
            async for raw in connection:
                message = json.loads(raw)
                log.frames.append(message)
                await self._answer(connection, message, state)
        except ConnectionClosed:
            return

    async def _setup(
        self, connection: ServerConnection, setup: dict[str, Any], state: _Conversation
    ) -> None:
        config = setup.get("generationConfig", setup.get("generation_config")) or {}
        wanted = config.get("responseModalities", config.get("response_modalities")) or []
        state.modes.update(str(mode).upper() for mode in wanted)
        resumption = setup.get("sessionResumption", setup.get("session_resumption"))
        if isinstance(resumption, dict):
            state.resumable = True
            handle = resumption.get("handle")
            if handle:
                if handle not in self._handles:
                    await connection.close(1008, "session resumption handle not found")
                    return
                state.history = list(self._handles[handle])
        await self._send(connection, {"setupComplete": {}})

    async def _answer(
        self, connection: ServerConnection, message: dict[str, Any], state: _Conversation
    ) -> None:
        if "setup" in message:
            setup = message["setup"] if isinstance(message["setup"], dict) else {}
            await self._setup(connection, setup, state)
            return
        content = message.get("client_content", message.get("clientContent"))
        if isinstance(content, dict):
            text = " ".join(
                str(part.get("text", ""))
                for turn in content.get("turns") or []
                for part in turn.get("parts") or []
                if isinstance(part, dict) and part.get("text")
            )
            if content.get("turn_complete", content.get("turnComplete")):
                await self._turn(connection, text, state)
            return
        answer = message.get("tool_response", message.get("toolResponse"))
        if isinstance(answer, dict):
            responses = answer.get("function_responses") or answer.get("functionResponses") or []
            said = json.dumps([r.get("response") for r in responses], sort_keys=True)
            await self._say(connection, f"The tool said: {said}", state)
            return
        realtime = message.get("realtime_input", message.get("realtimeInput"))
        if isinstance(realtime, dict):
            await self._realtime(connection, realtime, state)

    async def _realtime(
        self, connection: ServerConnection, realtime: dict[str, Any], state: _Conversation
    ) -> None:
        audio = state.audio
        if isinstance(realtime.get("video"), dict):
            state.video_frames += 1
        blobs = [realtime[k] for k in ("audio", "video") if isinstance(realtime.get(k), dict)]
        blobs += realtime.get("media_chunks") or realtime.get("mediaChunks") or []
        for blob in blobs:
            audio += base64.urlsafe_b64decode(str(blob.get("data", "")) + "==")
        if isinstance(realtime.get("text"), str):
            await self._turn(connection, realtime["text"], state)
        ended = (
            realtime.get("audio_stream_end")
            or realtime.get("audioStreamEnd")
            or "activity_end" in realtime
            or "activityEnd" in realtime
        )
        if ended:
            heard = len(audio)
            audio.clear()
            await self._send(
                connection,
                {"serverContent": {"inputTranscription": {"text": f"{heard} bytes of sound"}}},
            )
            await self._say(connection, f"I heard {heard} bytes of audio", state)

    async def _turn(self, connection: ServerConnection, text: str, state: _Conversation) -> None:
        for word, (name, args) in self._tool_calls.items():
            if word in text:
                call = {"id": f"call-{name}", "name": name, "args": args}
                await self._send(connection, {"toolCall": {"functionCalls": [call]}})
                await self._end_turn(connection, state, {"serverContent": {"turnComplete": True}})
                return
        reply = self._reply(text)
        if state.video_frames:
            reply += f" (I saw {state.video_frames} video frames)"
        if state.resumable:
            state.history.append(text)
            reply += f" (turn {len(state.history)} of the conversation)"
        await self._say(connection, reply, state)

    async def _say(self, connection: ServerConnection, reply: str, state: _Conversation) -> None:
        size = -(-len(reply) // self._chunks) or 1
        for start in range(0, len(reply), size):
            piece = reply[start : start + size]
            if "AUDIO" in state.modes:
                content: dict[str, Any] = {
                    "modelTurn": {"parts": [{"inlineData": _spoken(piece)}]},
                    "outputTranscription": {"text": piece},
                }
            else:
                content = {"modelTurn": {"parts": [{"text": piece}]}}
            await self._send(connection, {"serverContent": content})
        await self._send(connection, {"serverContent": {"generationComplete": True}})
        usage = {
            "promptTokenCount": 5,
            "responseTokenCount": len(reply.split()),
            "totalTokenCount": 9,
        }
        await self._end_turn(
            connection, state, {"serverContent": {"turnComplete": True}, "usageMetadata": usage}
        )

    async def _end_turn(
        self, connection: ServerConnection, state: _Conversation, complete: dict[str, Any]
    ) -> None:
        """Send ``turnComplete``; then, with session resumption, a new handle to resume the
        conversation from; then, after ``go_away_after`` turns, ``goAway`` (the socket is
        closed ``go_away_seconds`` later, as the real service cuts a connection off)."""
        await self._send(connection, complete)
        state.turns += 1
        if state.resumable:
            handle = uuid.uuid4().hex
            self._handles[handle] = list(state.history)
            update = {"newHandle": handle, "resumable": True}
            await self._send(connection, {"sessionResumptionUpdate": update})
        if self._go_away_after is not None and state.turns == self._go_away_after:
            left = self._go_away_seconds
            await self._send(connection, {"goAway": {"timeLeft": f"{left:g}s"}})
            closer = asyncio.get_running_loop().create_task(
                self._close_later(connection, left), name="standin-live-go-away"
            )
            self._closers.add(closer)
            closer.add_done_callback(self._closers.discard)

    @staticmethod
    async def _close_later(connection: ServerConnection, seconds: float) -> None:
        await asyncio.sleep(seconds)
        await connection.close(1000, "session time is up")


def _spoken(text: str) -> dict[str, str]:
    """Synthetic 24 kHz 16-bit PCM standing in for ``text`` spoken: 10 ms of samples a character,
    derived from the text so the same reply is the same sound."""
    samples = b"".join(bytes([ord(char) % 256, 0]) * 240 for char in text)
    return {"mimeType": "audio/pcm;rate=24000", "data": base64.b64encode(samples).decode()}


def main(argv: list[str] | None = None) -> None:
    """Run the Live stand-in from a shell: ``python -m rec.standin.live --port 8765``.

    Prints its base URL, then serves until interrupted.
    """
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--go-away-after", type=int, default=None, help="send goAway after this many turns"
    )
    args = parser.parse_args(argv)
    with StandinLive(port=args.port, go_away_after=args.go_away_after) as server:
        serve_until_interrupted(server.url)


if __name__ == "__main__":
    main()
