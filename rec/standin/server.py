"""A stand-in Gemini API: real HTTP on 127.0.0.1, speaking the wire protocol of DESIGN.md §2.

This is the "real API" in rec's tests and a scripted fake Gemini for users' own tests, so
it imports nothing from rec's other packages. It serves::

    POST {prefix}/{version}/models/{model}:generateContent
    POST {prefix}/{version}/models/{model}:streamGenerateContent?alt=sse
    POST {prefix}/{version}/models/{model}:countTokens
    POST {prefix}/{version}/models/{model}:batchEmbedContents
    POST {prefix}/v1beta1/projects/{p}/locations/{l}/publishers/google/models/{m}:...   (Vertex)
    POST {prefix}/chat/completions     (OpenAI chat completions: rec/standin/openai_wire.py)
    POST {prefix}/v1/messages          (Anthropic messages: rec/standin/anthropic_wire.py)

What it answers comes from a *responder*: any callable ``(StandinRequest) -> Reply | None``.
``None`` means "use the built-in answer" (countTokens and batchEmbedContents have one;
generate calls get a 400 that says no reply was scripted). See :class:`Reply` for the
behaviours (unary JSON, SSE chunks, errors, mid-stream error events, gzip, cut streams,
delays, raw framing), :class:`ScriptedResponder` for canned replies (both defined in
``rec/standin/replies.py``) and ``rec/standin/brain.py``
(:class:`RuleBrain`) for a deterministic fake model.

Usage::

    with StandinGemini(ScriptedResponder([Reply.text("hi")])) as api:
        client = genai.Client(api_key=FAKE, http_options=HttpOptions(base_url=api.url))
        client.models.generate_content(model="gemini-2.0-flash", contents="hello")
        assert api.requests[0].rpc == "generateContent"

The server is a small asyncio HTTP/1.1 server (keep-alive, Content-Length request bodies
and chunked ones, chunked streaming responses) running in a daemon thread, so the exact
bytes on the wire, including a cut chunked body, are under the test's control. Starting
it takes about a millisecond.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip as _gzip
import json
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from rec.standin import anthropic_wire
from rec.standin._serving import serve_until_interrupted, start_loop_thread, stop_loop_thread
from rec.standin.openai_wire import (
    completion_chunks,
    completion_document,
    error_document,
    gemini_body,
    is_chat_completion,
)
from rec.standin.replies import (
    GENERATE_RPCS,
    Reply,
    Responder,
    ScriptedResponder,
    StandinRequest,
    builtin_reply,
    finish_chunks,
    merge_chunks,
    parse_model_path,
)

__all__ = ["StandinGemini", "main"]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def _head(status: int, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _event(document: Any) -> bytes:
    return b"data: " + json.dumps(document, separators=(",", ":")).encode() + b"\r\n\r\n"


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


_BASE_HEADERS = [
    ("Vary", "Origin"),
    ("Vary", "X-Origin"),
    ("Vary", "Referer"),
    ("Server", "scaffolding on HTTPServer2"),
    ("X-XSS-Protection", "0"),
    ("X-Frame-Options", "SAMEORIGIN"),
    ("X-Content-Type-Options", "nosniff"),
]


class StandinGemini:
    """The stand-in server. ``start()``/``stop()`` or use it as a context manager.

    Attributes:
        responder: decides replies; may be swapped at any time (see :meth:`responding`).
        requests: every request received, in arrival order.
        require_key: answer 403 when a Gemini API call has no ``x-goog-api-key``.
        routes: extra handlers by path for non-Gemini endpoints (e.g. a tool's API).
        bind_port: the port to listen on (0, the default: a free one).
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        require_key: bool = True,
        routes: dict[str, Responder] | None = None,
        bind_port: int = 0,
    ) -> None:
        self.responder: Responder = responder or (lambda request: None)
        self.require_key = require_key
        self.routes: dict[str, Responder] = dict(routes or {})
        self.requests: list[StandinRequest] = []
        self.bind_port = bind_port
        self.port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    # -- lifecycle -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        if self.port is None:
            raise RuntimeError("StandinGemini is not started")
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> StandinGemini:
        """Bind 127.0.0.1 (``bind_port``, else an ephemeral port) and serve in a daemon thread.

        Raises:
            OSError: the port is in use.
        """
        if self._thread is not None:
            raise RuntimeError("StandinGemini already started")
        self._loop, server, self._thread = start_loop_thread(
            lambda: asyncio.start_server(self._connection, "127.0.0.1", self.bind_port),
            "standin-gemini",
        )
        self._server = server
        self.port = server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        """Close every connection and the listener; join the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        stop_loop_thread(loop, thread, shutdown(), timeout=5)

    def __enter__(self) -> StandinGemini:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- test helpers --------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the requests received so far."""
        self.requests.clear()

    @contextmanager
    def responding(self, responder: Responder) -> Iterator[StandinGemini]:
        """Use another responder inside the block, then restore the previous one."""
        previous, self.responder = self.responder, responder
        try:
            yield self
        finally:
            self.responder = previous

    def calls(self, rpc: str | None = None) -> list[StandinRequest]:
        """Received model API requests, optionally of one RPC."""
        return [r for r in self.requests if r.rpc and (rpc is None or r.rpc == rpc)]

    # -- HTTP ----------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    break
                keep_alive = await self._respond(request, writer)
                if not keep_alive or request.headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._writers.discard(writer)
            writer.transport.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> StandinRequest | None:
        line = await reader.readline()
        if not line.strip():
            return None
        method, target, _ = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        names: list[str] = []
        while True:
            raw = (await reader.readline()).decode("latin-1")
            if raw in ("\r\n", "\n", ""):
                break
            name, _, value = raw.partition(":")
            names.append(name.strip())
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = b""
            while True:
                size = int((await reader.readline()).split(b";")[0], 16)
                if size == 0:
                    await reader.readline()
                    break
                body += await reader.readexactly(size)
                await reader.readline()
        else:
            body = await reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("content-encoding", "").lower() == "gzip":
            body = _gzip.decompress(body)
        split = urlsplit(target)
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        request = StandinRequest(
            method=method,
            path=split.path,
            query=dict(parse_qsl(split.query)),
            headers=headers,
            raw_body=body,
            body=parsed,
            index=len(self.requests),
            header_names=tuple(names),
            **parse_model_path(split.path),
        )
        self.requests.append(request)
        return request

    def _decide(self, request: StandinRequest) -> Reply:
        route = self.routes.get(request.path)
        if route is not None:
            return route(request) or Reply.fail(404, f"standin: route {request.path} gave nothing")
        if request.rpc is None:
            return builtin_reply(request)
        authorised = request.api_key or (
            request.vertex and request.headers.get("authorization", "").startswith("Bearer ")
        )
        if self.require_key and not authorised:
            return Reply.fail(
                403,
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity to call "
                "this API.",
            )
        try:
            reply = self.responder(request)
        except Exception as exc:  # noqa: BLE001 - a broken responder answers 500
            return Reply.fail(500, f"standin responder raised {type(exc).__name__}: {exc}")
        return reply if reply is not None else builtin_reply(request)

    async def _respond(self, request: StandinRequest, writer: asyncio.StreamWriter) -> bool:
        if request.path not in self.routes and is_chat_completion(request.method, request.path):
            return await self._respond_openai(request, writer)
        if request.path not in self.routes and anthropic_wire.is_message_call(
            request.method, request.path
        ):
            return await self._respond_anthropic(request, writer)
        reply = self._decide(request)
        if reply.hang:
            await asyncio.Event().wait()  # until the client goes or the server stops
        if reply.first_delay_s:
            await asyncio.sleep(reply.first_delay_s)
        if reply.body is not None:
            return await self._send_raw(writer, reply)
        chunks = list(reply.chunks)
        if not reply.exact and request.rpc in GENERATE_RPCS:
            chunks = finish_chunks(request, chunks)
        if reply.error is not None and (reply.error_after is None or not request.stream):
            status = int(reply.error["error"]["code"])
            return await self._send_unary(request, writer, reply, status, reply.error)
        if not request.stream:
            return await self._send_unary(
                request, writer, reply, reply.status, merge_chunks(chunks)
            )
        return await self._send_stream(writer, reply, chunks)

    async def _respond_openai(self, request: StandinRequest, writer: asyncio.StreamWriter) -> bool:
        """An OpenAI chat completion, answered by the responder as a Gemini call would be
        (``rec/standin/openai_wire.py``)."""
        body = request.body if isinstance(request.body, dict) else {}
        stream = bool(body.get("stream"))
        seen = dataclasses.replace(
            request,
            body=gemini_body(body),
            model=str(body.get("model", "")),
            rpc="streamGenerateContent" if stream else "generateContent",
        )
        authorised = request.headers.get("authorization", "").startswith("Bearer ")
        reply = self._foreign_reply(request, seen, authorised)
        if reply.first_delay_s:
            await asyncio.sleep(reply.first_delay_s)
        if reply.error is not None:
            code = int(reply.error["error"]["code"])
            document = error_document(code, str(reply.error["error"]["message"]))
            return await self._send_unary(
                request, writer, reply.replace(gzip="never"), code, document
            )
        if not stream:
            document = completion_document(body, request.raw_body, list(reply.chunks))
            return await self._send_unary(
                request, writer, reply.replace(gzip="never"), 200, document
            )
        events = completion_chunks(body, request.raw_body, list(reply.chunks))
        return await self._send_stream(writer, reply.replace(raw_events=tuple(events)), [])

    def _foreign_reply(
        self, request: StandinRequest, seen: StandinRequest, authorised: bool
    ) -> Reply:
        """The responder's reply to a request of another wire, shown to it as ``seen``."""
        if self.require_key and not authorised:
            return Reply.fail(401, "standin: no API key")
        try:
            return self.responder(seen) or builtin_reply(seen)
        except Exception as exc:  # noqa: BLE001 - a broken responder answers 500
            return Reply.fail(500, f"standin responder raised {type(exc).__name__}: {exc}")

    async def _respond_anthropic(
        self, request: StandinRequest, writer: asyncio.StreamWriter
    ) -> bool:
        """An Anthropic message, answered by the responder as a Gemini call would be
        (``rec/standin/anthropic_wire.py``)."""
        body = request.body if isinstance(request.body, dict) else {}
        stream = bool(body.get("stream"))
        seen = dataclasses.replace(
            request,
            body=anthropic_wire.gemini_body(body),
            model=str(body.get("model", "")),
            rpc="streamGenerateContent" if stream else "generateContent",
        )
        authorised = bool(request.headers.get("x-api-key")) or request.headers.get(
            "authorization", ""
        ).startswith("Bearer ")
        reply = self._foreign_reply(request, seen, authorised)
        if reply.first_delay_s:
            await asyncio.sleep(reply.first_delay_s)
        plain = reply.replace(gzip="never")
        if reply.error is not None:
            code = int(reply.error["error"]["code"])
            document = anthropic_wire.anthropic_error(code, str(reply.error["error"]["message"]))
            return await self._send_unary(request, writer, plain, code, document)
        chunks = list(reply.chunks)
        if not stream:
            document = anthropic_wire.message_document(body, request.raw_body, chunks)
            return await self._send_unary(request, writer, plain, 200, document)
        events = anthropic_wire.message_events(body, request.raw_body, chunks)
        return await self._send_stream(writer, reply.replace(raw_events=tuple(events)), [])

    async def _send_unary(
        self,
        request: StandinRequest,
        writer: asyncio.StreamWriter,
        reply: Reply,
        status: int,
        document: Any,
    ) -> bool:
        body = (json.dumps(document, indent=2) + "\n").encode()
        headers = [("Content-Type", "application/json; charset=UTF-8"), *_BASE_HEADERS]
        if reply.gzip == "always" or (reply.gzip == "auto" and request.accepts_gzip):
            body = _gzip.compress(body, mtime=0)
            headers.append(("Content-Encoding", "gzip"))
        headers += [*reply.headers, ("Content-Length", str(len(body)))]
        writer.write(_head(status, headers) + body)
        await writer.drain()
        return True

    async def _send_raw(self, writer: asyncio.StreamWriter, reply: Reply) -> bool:
        assert reply.body is not None
        names = {name.lower() for name, _ in reply.headers}
        headers = [*reply.headers]
        if "content-length" not in names and "transfer-encoding" not in names:
            headers.append(("Content-Length", str(len(reply.body))))
        body = reply.body if reply.cut_at is None else reply.body[: reply.cut_at]
        writer.write(_head(reply.status, headers) + body)
        await writer.drain()
        if reply.cut_at is not None:
            writer.transport.close()
            return False
        return True

    async def _send_stream(
        self, writer: asyncio.StreamWriter, reply: Reply, chunks: list[Any]
    ) -> bool:
        events = (
            list(reply.raw_events)
            if reply.raw_events is not None
            else [_event(c) for c in chunks[: reply.error_after]]
        )
        if reply.error is not None and reply.error_after is not None:
            events.append(_event(reply.error))
        headers = [
            ("Content-Type", "text/event-stream"),
            ("Content-Disposition", "attachment"),
            *_BASE_HEADERS,
            ("Transfer-Encoding", "chunked"),
        ]
        compressor = None
        if reply.gzip == "always":
            compressor = zlib.compressobj(wbits=31)
            headers.append(("Content-Encoding", "gzip"))
        writer.write(_head(200, [*headers, *reply.headers]))
        await writer.drain()
        sent = 0
        for i, data in enumerate(events):
            if reply.cut_after is not None and i >= reply.cut_after:
                break
            if reply.cut_at is not None and sent + len(data) > reply.cut_at:
                writer.write(_chunked(data[: reply.cut_at - sent]))
                await writer.drain()
                writer.transport.close()
                return False
            sent += len(data)
            if i:
                await asyncio.sleep(reply.delay_s)
            if compressor is not None:
                data = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
            writer.write(_chunked(data))
            await writer.drain()
        if reply.cut_after is not None:
            writer.transport.close()  # FIN without the terminating zero-size chunk
            return False
        tail = _chunked(compressor.flush()) if compressor is not None else b""
        writer.write(tail + b"0\r\n\r\n")
        await writer.drain()
        return True


def main(argv: list[str] | None = None) -> None:
    """Run the stand-in from a shell: ``python -m rec.standin --events 5 --delay-ms 300``.

    Every generate call answers with a text split into ``--events`` stream events
    ``--delay-ms`` apart (the latency benchmark's upstream).
    """
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--events", type=int, default=5)
    parser.add_argument("--delay-ms", type=float, default=300.0)
    args = parser.parse_args(argv)
    text = " ".join(f"word{i}" for i in range(args.events * 2))
    reply = Reply.text(text, chunks=args.events, delay_s=args.delay_ms / 1000)
    with StandinGemini(ScriptedResponder([reply], repeat_last=True)) as server:
        serve_until_interrupted(server.url)


if __name__ == "__main__":
    main()
