"""Replay google-genai's model calls in-process: rec supplies google-genai's transport.

An httpx transport (sync :class:`SyncReplayTransport` and async :class:`ReplayTransport`)
hands each request to the same :class:`ReplayHandler` the replay proxy uses: the same
cassettes, the same matching, the same fail-closed misses (the error envelope google-genai
raises as ``APIError``), reported to the same channel. No socket, no HTTP server, no parse
of the request line: the call never leaves the process.

Two ways in:

- ``rec.replay()`` and the ``rec`` fixture (:func:`answering_in_process`): every
  google-genai client built in the block whose base URL is the replay's sends through the
  transports (``replayer._model_clients.clients_answered_by``);
- ``rec replay --in-process`` (:func:`models_in_process`): every google-genai (``Gemini``)
  model of the agent tree is given the async transport through ADK's public
  ``Gemini.client_kwargs``.

The proxy keeps running beside them, and google-genai stays pointed at it: a client the
transports do not reach (one built in another process, in another language, or before
the block) is still answered by the proxy, from the same handler, so nothing escapes the
cassette either way. google-genai uses httpx instead of aiohttp for a client given a
transport, as it does for any caller-supplied transport.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from cassettes._cassette import Exchange
from recorder._traffic import IncomingRequest
from replayer._model_clients import clients_answered_by, model_client_args, tls_context
from replayer._replay_handler import Playback, Refusal, ReplayHandler

__all__ = [
    "ReplayTransport",
    "SyncReplayTransport",
    "answering_in_process",
    "models_in_process",
]

_CUT = "the recorded stream was cut here"


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
            raise httpx.ReadError(_CUT)


class _SyncChunks(httpx.SyncByteStream):
    """:class:`_Chunks` for a sync client."""

    def __init__(self, chunks: list[bytes], *, cut: bool) -> None:
        self._chunks = chunks
        self._cut = cut

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            if chunk:
                yield chunk
        if self._cut:
            raise httpx.ReadError(_CUT)


class _Answering:
    """What the sync and async transports share: the request handed to the handler's
    decision, and the recorded answer as an httpx response."""

    def __init__(self, handler: ReplayHandler, url: str | None = None) -> None:
        self.handler = handler
        self.url = url
        """The replay's URL: a request elsewhere (a per-request base URL) is sent for real,
        as it would be without the transport; None answers every request."""
        self._ids = itertools.count()
        self._headers: dict[int, tuple[Playback, httpx.Headers]] = {}
        """Per recorded answer (by :class:`Playback`), its headers as httpx holds them."""

    def _elsewhere(self, request: httpx.Request) -> bool:
        return self.url is not None and not str(request.url).startswith(self.url)

    def _decide(self, request: httpx.Request, body: bytes) -> Exchange | httpx.Response:
        """The recorded exchange that answers ``request``, or the response it gets instead
        (a miss's error envelope, a refusal)."""
        # httpx's headers are the mapping the handler reads: lower-case names when iterated,
        # any name's values joined, found whatever its case. The wall-clock arrival time is
        # read only where a request is forwarded and recorded, which never happens here.
        incoming = IncomingRequest(
            id=next(self._ids),
            method=request.method,
            path_qs=request.url.raw_path.decode("ascii"),
            headers=request.headers,
            body=body,
            started=time.perf_counter(),
            started_at="",
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
        return decision

    def _played(self, exchange: Exchange, request: httpx.Request, *, sync: bool) -> httpx.Response:
        # ParallelAgent branches are answered in the order the recording finished them,
        # as the proxy does (replayer._completion_order): the caller has waited its turn.
        self.handler.completion.answered(exchange)
        played: Playback = self.handler.playback(exchange)
        headers = self._headers_of(played)
        if played.events is None and not played.cut:
            body = httpx.ByteStream(played.body)
            return httpx.Response(played.status, headers=headers, stream=body, request=request)
        chunks = [chunk for _, chunk in played.events or []] + [played.body]
        stream = _SyncChunks(chunks, cut=played.cut) if sync else _Chunks(chunks, cut=played.cut)
        return httpx.Response(played.status, headers=headers, stream=stream, request=request)

    def _headers_of(self, played: Playback) -> httpx.Headers:
        """A recorded answer's headers, built once (a whole body's with its length, as
        httpx gives a response built from content)."""
        found = self._headers.get(id(played))
        if found is None or found[0] is not played:
            headers = dict(played.headers)
            if played.events is None and not played.cut:
                headers["content-length"] = str(len(played.body))
            found = (played, httpx.Headers(headers))
            self._headers[id(played)] = found
        return found[1]


def _raw_response(
    response: httpx.Response, content: bytes, request: httpx.Request
) -> httpx.Response:
    return httpx.Response(
        response.status_code, headers=response.headers, content=content, request=request
    )


class ReplayTransport(_Answering, httpx.AsyncBaseTransport):
    """An httpx transport answering from a :class:`ReplayHandler` (no socket).

    Example::

        transport = ReplayTransport(handler)
        client = genai.Client(http_options={"async_client_args": {"transport": transport}})
    """

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._elsewhere(request):
            async with httpx.AsyncHTTPTransport(verify=tls_context()) as real:
                response = await real.handle_async_request(request)
                content = b"".join([chunk async for chunk in response.aiter_raw()])
            return _raw_response(response, content, request)
        decided = self._decide(request, await request.aread())
        if isinstance(decided, httpx.Response):
            return decided
        await self.handler.wait_for_turn(decided)
        return self._played(decided, request, sync=False)


class SyncReplayTransport(_Answering, httpx.BaseTransport):
    """:class:`ReplayTransport` for google-genai's sync calls."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._elsewhere(request):
            with httpx.HTTPTransport(verify=tls_context()) as real:
                response = real.handle_request(request)
                content = b"".join(response.iter_raw())
            return _raw_response(response, content, request)
        decided = self._decide(request, request.read())
        if isinstance(decided, httpx.Response):
            return decided
        self.handler.wait_for_turn_blocking(decided)
        return self._played(decided, request, sync=True)


def answering_in_process(
    handler: ReplayHandler, url: str
) -> contextlib.AbstractContextManager[None]:
    """Every google-genai client built in this process during the block whose base URL is
    the replay's ``url`` is answered by ``handler`` through the in-process transports."""
    return clients_answered_by(
        url, SyncReplayTransport(handler, url), ReplayTransport(handler, url)
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
