"""A raw asyncio server on loopback that plays a misbehaving upstream byte by byte.

Subclasses write :meth:`RawUpstream.handle`; the server runs on a loop of its own in a
thread, from ``with`` to its end, and :attr:`RawUpstream.url` is its address.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Self


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """Read one HTTP/1.1 request (its head and a Content-Length body); return its head."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    await reader.readexactly(length)
    return head


class RawUpstream:
    """A server on 127.0.0.1 answering each connection with :meth:`handle`."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.url = ""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def serve() -> asyncio.Server:
            return await asyncio.start_server(self.handle, "127.0.0.1", 0)

        server = self._loop.run_until_complete(serve())
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        self._ready.set()
        self._loop.run_forever()
        server.close()

    def __enter__(self) -> Self:
        self._thread.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
