"""A minimal HTTP/1.1 server that answers with canned bytes: no parsing, no matching.

Two uses in the benchmarks:

- the **floor of the base-URL seam**: google-genai pointed at a server that only sends
  back the recorded response bytes, in order, whatever was asked. Whatever rec's replay
  costs beyond this is rec's own share.
- the **upstream** of the recording-proxy benchmarks, standing in for a real model API.
  Like real servers may, it writes a stream's headers and its first event as two small
  writes, and with ``nagle=True`` it leaves Nagle's algorithm on (``TCP_NODELAY`` off),
  so a proxy that does not forward promptly pays the Nagle / delayed-ACK penalty.

In a thread (``with CannedServer(answer) as server: server.url``) or as a process::

    python bench/_canned_server.py [--nagle] [--events 3] [--gap-ms 0]

which prints its URL on the first line and serves Gemini-shaped answers until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Canned", "CannedServer", "gemini_answer"]


@dataclass(frozen=True)
class Canned:
    """One canned answer: a unary body, or SSE events sent one write each."""

    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("content-type", "application/json; charset=UTF-8"),)
    body: bytes = b""
    events: tuple[bytes, ...] | None = None
    """For a stream: each event's bytes (``data: ...\\r\\n\\r\\n``), written separately."""
    gap_s: float = 0.0
    """Pause between stream events."""


Answer = Callable[[str, str, bytes], Canned]
"""(method, path and query, request body) -> the answer."""


@dataclass
class CannedServer:
    """Serve ``answer``'s bytes on 127.0.0.1 (keep-alive, Content-Length or chunked bodies)."""

    answer: Answer
    nagle: bool = False
    port: int = 0
    requests: int = 0
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def serve(self, ready: Callable[[], None] = lambda: None) -> None:
        server = await asyncio.start_server(self._connection, "127.0.0.1", self.port)
        self.port = server.sockets[0].getsockname()[1]
        ready()
        async with server:
            await server.serve_forever()

    def __enter__(self) -> CannedServer:
        started = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            task = loop.create_task(self.serve(started.set))
            try:
                loop.run_until_complete(task)
            except asyncio.CancelledError:
                pass
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="canned-server", daemon=True)
        self._thread.start()
        started.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        loop = self._loop
        if loop is not None:

            def cancel() -> None:
                for task in asyncio.all_tasks(loop):
                    task.cancel()

            loop.call_soon_threadsafe(cancel)
        if self._thread is not None:
            self._thread.join(timeout=10)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if self.nagle and sock is not None:  # asyncio turns Nagle off by default
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
        try:
            while True:
                line = await reader.readline()
                if not line.strip():
                    return
                method, target, _ = line.decode("latin-1").split(" ", 2)
                length, chunked = 0, False
                while True:
                    header = await reader.readline()
                    if header in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = header.decode("latin-1").partition(":")
                    name = name.strip().lower()
                    if name == "content-length":
                        length = int(value)
                    elif name == "transfer-encoding" and "chunked" in value.lower():
                        chunked = True
                if chunked:
                    parts = []
                    while size := int((await reader.readline()).split(b";")[0], 16):
                        parts.append(await reader.readexactly(size))
                        await reader.readline()
                    await reader.readline()
                    body = b"".join(parts)
                else:
                    body = await reader.readexactly(length)
                self.requests += 1
                await self._send(writer, self.answer(method, target, body))
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # a closed connection, or the server shutting down
        finally:
            writer.close()

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, canned: Canned) -> None:
        head = [f"HTTP/1.1 {canned.status} OK"] + [f"{k}: {v}" for k, v in canned.headers]
        if canned.events is None:
            head.append(f"content-length: {len(canned.body)}")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + canned.body)
            await writer.drain()
            return
        head.append("transfer-encoding: chunked")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()  # headers and the first event: two separate small writes
        for i, event in enumerate(canned.events):
            if i and canned.gap_s:
                await asyncio.sleep(canned.gap_s)
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()


def _candidate(text: str) -> dict[str, object]:
    return {
        "content": {"role": "model", "parts": [{"text": text}]},
        "index": 0,
    }


def gemini_answer(events: int = 3, gap_s: float = 0.0) -> Answer:
    """Gemini-shaped answers: a JSON response, or ``events`` SSE events for a stream."""
    usage = {"promptTokenCount": 812, "candidatesTokenCount": 24, "totalTokenCount": 836}
    whole = {
        "candidates": [
            {**_candidate("It is sunny and 21 degrees in Paris."), "finishReason": "STOP"}
        ],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "bench-response",
    }
    unary = Canned(body=json.dumps(whole, indent=2).encode())
    chunks = []
    for i in range(events):
        doc: dict[str, object] = {
            "candidates": [_candidate(f"part {i} of the answer ")],
            "modelVersion": "gemini-2.5-flash",
            "responseId": "bench-response",
        }
        if i == events - 1:
            doc["candidates"] = [{**_candidate("done."), "finishReason": "STOP"}]
            doc["usageMetadata"] = usage
        chunks.append(b"data: " + json.dumps(doc, separators=(",", ":")).encode() + b"\r\n\r\n")
    stream = Canned(
        headers=(("content-type", "text/event-stream"),), events=tuple(chunks), gap_s=gap_s
    )

    def answer(method: str, target: str, body: bytes) -> Canned:
        return stream if ":streamGenerateContent" in target else unary

    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nagle", action="store_true", help="leave Nagle's algorithm on")
    parser.add_argument("--events", type=int, default=3)
    parser.add_argument("--gap-ms", type=float, default=0.0)
    args = parser.parse_args()
    server = CannedServer(gemini_answer(args.events, args.gap_ms / 1000), nagle=args.nagle)
    asyncio.run(server.serve(lambda: print(server.url, flush=True)))


if __name__ == "__main__":
    main()
