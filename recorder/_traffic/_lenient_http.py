"""An aiohttp connector whose responses end where their framing says, as httpx reads them.

aiohttp's response parser reads everything on a connection as a sequence of responses:
bytes an upstream sends after a complete response (more than its ``Content-Length``,
garbage after a chunked body's last chunk) are parsed as the next response's status line,
and the error fails the response they followed, even one already complete, when they
arrive in the same read. A direct client (httpx, which google-genai uses) reads the
declared response and never looks at the rest. :func:`lenient_connector` gives the
recording proxy that reading: a response ends at its declared length or last chunk, what
follows on that connection is dropped, and the connection is closed, never reused (what
follows could otherwise pass for the answer to the next request).

It wraps aiohttp's fast parser, so a well-formed response costs a buffer append of the
bytes that precede its headers being parsed. Only when that parser fails before it has
handed over a response are those bytes parsed again by aiohttp's pure-Python parser, told
to stop after one response. This reaches into aiohttp's response protocol (its parser
attribute and the arguments of ``set_response_params``): where an aiohttp release differs,
the wrapper is not installed and aiohttp's own reading applies.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import aiohttp
from aiohttp.client_exceptions import ClientPayloadError
from aiohttp.client_proto import ResponseHandler
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.http_parser import HttpResponseParserPy

from recorder._traffic._compat import (
    aiohttp_protocol_factory,
    aiohttp_response_parser,
    set_aiohttp_protocol_factory,
)

log = logging.getLogger(__name__)

_NOTHING: tuple[tuple[()], bool, bytes] = ((), False, b"")


def _interim(message: Any) -> bool:
    """A 1xx answer (``100 Continue``): the response follows it on the connection."""
    code = getattr(message, "code", 0)
    return 100 <= code < 200 and code != 101


class _OneResponseParser:
    """Delegates to aiohttp's parser for one response; drops what follows its end."""

    def __init__(self, parser: Any, protocol: ResponseHandler, params: dict[str, Any]) -> None:
        self._parser = parser
        self._protocol = protocol
        self._params = params
        self._before_message: bytearray | None = bytearray()
        """The bytes fed before the response's head was handed over (None after)."""
        self._payload: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)

    def _ended(self) -> bool:
        return self._payload is not None and self._payload.is_eof()

    def feed_eof(self) -> Any:
        if self._ended():
            return None  # the connection closing after the response ends nothing more
        return self._parser.feed_eof()

    def _drop(self) -> tuple[tuple[()], bool, bytes]:
        self._protocol.force_close()
        return _NOTHING

    def feed_data(self, data: bytes) -> Any:
        if data and self._ended():
            return self._drop()  # after the response's end: never a response
        if self._before_message is not None:
            self._before_message += data
        try:
            result = self._parser.feed_data(data)
        except HttpProcessingError:
            if self._ended():  # the response ended in this read; the rest is not one
                return self._drop()
            if self._before_message is None:
                raise  # broken inside a response already handed over: a real cut
            result = self._reparsed(bytes(self._before_message))
            if result is None:
                raise
        final = [(message, payload) for message, payload in result[0] if not _interim(message)]
        if final:
            self._before_message = None
            self._payload = final[-1][1]
        return result

    def _reparsed(self, data: bytes) -> Any:
        """``data`` parsed by a parser that stops after one response; None if that fails
        too (the response itself is broken)."""
        try:
            parser = HttpResponseParserPy(self._protocol, **self._params, max_msg_queue_size=1)
            result = parser.feed_data(data)
        except (HttpProcessingError, TypeError, ValueError):
            return None
        if not result[0] or _interim(result[0][-1][0]):
            return None  # nothing, or only an interim answer: not a response to end at
        self._parser = parser
        self._protocol.force_close()  # it held more than one response: never reused
        return result


class _OneResponseHandler(ResponseHandler):
    """aiohttp's response protocol with each response read by :class:`_OneResponseParser`."""

    def set_response_params(self, **params: Any) -> None:
        super().set_response_params(**params)
        parser = aiohttp_response_parser(self)
        if parser is None or not hasattr(parser, "feed_data"):
            return
        fallback = {  # as ResponseHandler.set_response_params builds its parser
            "loop": self._loop,
            "limit": params.get("read_bufsize", 2**16),
            "timer": params.get("timer"),
            "payload_exception": ClientPayloadError,
            "response_with_body": not params.get("skip_payload", False),
            "read_until_eof": params.get("read_until_eof", False),
            "auto_decompress": params.get("auto_decompress", True),
            "max_line_size": params.get("max_line_size", 8190),
            "max_field_size": params.get("max_field_size", 8190),
            "max_headers": params.get("max_headers", 128),
        }
        self._parser = _OneResponseParser(parser, self, fallback)  # type: ignore[assignment]


def lenient_connector(**kwargs: Any) -> aiohttp.TCPConnector:
    """A :class:`aiohttp.TCPConnector` (``kwargs`` as its own) whose connections read one
    response at a time, as described in the module docstring."""
    connector = aiohttp.TCPConnector(**kwargs)
    factory = aiohttp_protocol_factory(connector)
    if isinstance(factory, functools.partial) and factory.func is ResponseHandler:
        lenient = functools.partial(_OneResponseHandler, *factory.args, **factory.keywords)
        set_aiohttp_protocol_factory(connector, lenient)
    else:
        log.debug("aiohttp's connector differs: responses are read by aiohttp as they come")
    return connector
