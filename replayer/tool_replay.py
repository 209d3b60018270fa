"""Tools' own httpx calls served from the cassette: replay never reaches the network.

A plain program's tools always run for real, and with ``--live-tools`` an ADK agent's do
too. Their HTTP calls to their APIs
(``origin: "tool"`` exchanges, captured while recording by ``recorder.tool_traffic``) are
answered through a respx router from the recording: matched with a
:class:`cassettes.MatchIndex` on method, path, query and canonical body (FIFO per key),
with the recorded status, headers and body. Which requests are a tool's follows the
recording rule (:func:`recorder.is_tool_request`): everything except rec's own proxy
and rec's forwarder; in ``--live`` mode the model's hosts (``*.googleapis.com``) pass
through as well. A tool call with no recording fails closed, in every mode: nothing is
sent, and the tool gets an ``httpx.ConnectError`` naming the URL (credentials in it
masked) and the fix, so the case fails naming the tool.

Example::

    with serving_tool_traffic(cassette.exchanges, own=[backend.url]):
        ...  # run the agent: convert_currency's httpx.get is answered from the cassette
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Collection, Iterator, Sequence
from urllib.parse import urlsplit

import httpx
import respx

from cassettes import (
    Exchange,
    MatchIndex,
    RecordedRequest,
    body_from_bytes,
    body_to_bytes,
    mask,
)
from recorder import is_tool_request

__all__ = ["ToolTrafficReplay", "serving_tool_traffic", "tool_exchanges"]


def tool_exchanges(exchanges: Sequence[Exchange]) -> list[Exchange]:
    """The tools' own recorded calls (``origin: "tool"``) among ``exchanges``."""
    return [e for e in exchanges if e.origin == "tool"]


class ToolTrafficReplay:
    """Answers tool requests from recorded tool exchanges (sans-IO: one request in, one out).

    Args:
        exchanges: the recorded tool exchanges.
        own: base URLs whose requests are never a tool's (the replay proxy).
        pass_hosts: host suffixes that pass through too (the live model's hosts).
        label: names the recordings in the miss message.
    """

    def __init__(
        self,
        exchanges: Sequence[Exchange],
        *,
        own: Collection[str] = (),
        pass_hosts: Collection[str] = (),
        label: str = "the recording",
    ) -> None:
        self.index = MatchIndex(list(exchanges))
        self.own = tuple(own)
        self.pass_hosts = tuple(pass_hosts)
        self.label = label
        self.served = 0
        self.misses: list[str] = []

    def passes_through(self, request: httpx.Request) -> bool:
        """Whether ``request`` is rec's own (or the live model's) and goes to the network."""
        if not is_tool_request(request, self.own):
            return True
        host = request.url.host
        return any(host == suffix or host.endswith("." + suffix) for suffix in self.pass_hosts)

    def answer(self, request: httpx.Request) -> httpx.Response:
        """The recorded response for a tool request.

        Raises:
            httpx.ConnectError: no recording matches (fail closed); the message names the
                URL, the nearest recorded tool call and the fix.
        """
        recorded = RecordedRequest(
            method=request.method,
            url=str(request.url),
            body=body_from_bytes(request.content, request.headers.get("content-type")),
        )
        exchange = self.index.lookup(recorded)
        if exchange is None:
            raise httpx.ConnectError(self._miss_message(recorded), request=request)
        self.served += 1
        response = exchange.response
        return httpx.Response(
            response.status,
            headers=response.headers,
            content=body_to_bytes(response.body),
            request=request,
        )

    def _miss_message(self, request: RecordedRequest) -> str:
        nearest = self.index.nearest(request)
        hint = (
            f"; nearest recorded tool call: {nearest.request.method} "
            f"{shown_url(nearest.request.url)}"
            if nearest is not None
            else "; it has no tool calls recorded"
        )
        message = (
            f"rec: the tool call {request.method} {shown_url(request.url)} was not recorded "
            f"in {self.label}{hint}; replay never sends it. Re-record the agent (rec "
            "captures its tools' httpx calls), or, for an ADK agent, replay without "
            "--live-tools so the tools' recorded responses are used"
        )
        self.misses.append(message)
        return message


_SECRET_PARAM = re.compile(r"key|token|secret|auth|sig|pass|credential", re.IGNORECASE)


def shown_url(url: str) -> str:
    """``url`` fit for a message: userinfo dropped, credential-like query values masked."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    items = [item.partition("=") for item in parts.query.split("&") if item]
    query = "&".join(
        f"{name}=…" if _SECRET_PARAM.search(name) else f"{name}{sep}{value}"
        for name, sep, value in items
    )
    return mask(f"{parts.scheme}://{host}{parts.path}" + (f"?{query}" if query else ""))


@contextlib.contextmanager
def serving_tool_traffic(
    exchanges: Sequence[Exchange],
    *,
    own: Collection[str] = (),
    pass_hosts: Collection[str] = (),
    label: str = "the recording",
) -> Iterator[ToolTrafficReplay]:
    """Serve the tools' httpx calls from ``exchanges`` (their ``origin: "tool"`` ones).

    Installs a respx router for the block (every httpx client in the process); requests
    that are not a tool's pass through to the network.
    """
    replay = ToolTrafficReplay(
        tool_exchanges(exchanges), own=own, pass_hosts=pass_hosts, label=label
    )

    def side_effect(request: httpx.Request) -> httpx.Request | httpx.Response:
        if replay.passes_through(request):
            return request  # respx: pass through
        return replay.answer(request)

    with respx.mock(assert_all_mocked=False, assert_all_called=False, using="httpx") as router:
        router.route().mock(side_effect=side_effect)
        yield replay
