"""Replay an ADK agent's model calls in-process: rec supplies google-genai's transport.

``rec replay --in-process`` gives every google-genai (``Gemini``) model of the agent tree
an httpx transport that hands each request to the same :class:`ReplayHandler` the replay
proxy uses: the same cassettes, the same matching, the same fail-closed misses (the error
envelope google-genai raises as ``APIError``), reported to the same channel. No socket,
no HTTP server, no parse of the request line: the call never leaves the process.

The proxy keeps running beside it, and google-genai stays pointed at it: a client the
transport does not reach (one built by a tool, or a model client ADK had already built on
this loop) is still answered by the proxy, from the same handler, so nothing escapes the
cassette either way.

The transport is installed through ADK's public ``Gemini.client_kwargs``
(``replayer._model_clients``); google-genai uses httpx with it instead of aiohttp, as it
does for any caller-supplied transport.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from cassettes._timing import now_iso
from recorder._traffic import IncomingRequest
from replayer._model_clients import model_client_args
from replayer._replay_handler import Refusal, ReplayHandler

__all__ = ["ReplayTransport", "models_in_process"]


class _Chunks(httpx.AsyncByteStream):
    """A recorded stream's bytes; a stream that was cut when recorded breaks off again."""

    def __init__(self, chunks: list[bytes], *, cut: bool) -> None:
        self._chunks = chunks
        self._cut = cut

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            if chunk:
                yield chunk
        if self._cut:
            raise httpx.ReadError("the recorded stream was cut here")


class ReplayTransport(httpx.AsyncBaseTransport):
    """An httpx transport answering from a :class:`ReplayHandler` (no socket).

    Example::

        transport = ReplayTransport(handler)
        client = genai.Client(http_options={"async_client_args": {"transport": transport}})
    """

    def __init__(self, handler: ReplayHandler) -> None:
        self.handler = handler
        self._ids = itertools.count()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        incoming = IncomingRequest(
            id=next(self._ids),
            method=request.method,
            path_qs=request.url.raw_path.decode("ascii"),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
            started=time.perf_counter(),
            started_at=now_iso(),
        )
        decision = self.handler.decide(incoming)
        if decision is None:  # auto mode forwards misses: that takes the proxy
            raise httpx.ConnectError(
                "rec: the in-process transport replays only; a miss to record goes through "
                "the proxy",
                request=request,
            )
        if isinstance(decision, Refusal):
            return httpx.Response(
                decision.status, headers=decision.headers, content=decision.body, request=request
            )
        # ParallelAgent branches answered in the order the recording finished them, as the
        # proxy does (replayer._completion_order).
        await self.handler.wait_for_turn(decision)
        self.handler.completion.answered(decision)
        played = self.handler.playback(decision)
        if played.events is None and not played.cut:
            return httpx.Response(
                played.status, headers=played.headers, content=played.body, request=request
            )
        chunks = [chunk for _, chunk in played.events or []] + [played.body]
        return httpx.Response(
            played.status,
            headers=played.headers,
            stream=_Chunks(chunks, cut=played.cut),
            request=request,
        )


@contextlib.contextmanager
def models_in_process(root: Any, handler: ReplayHandler) -> Iterator[int]:
    """Give every ``Gemini`` model under ``root`` a :class:`ReplayTransport` for the block.

    Yields:
        How many models now answer in-process (0: none of them is a google-genai model,
        and every call goes through the proxy).
    """
    with model_client_args(root, async_args={"transport": ReplayTransport(handler)}) as count:
        yield count
