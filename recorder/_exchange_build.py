"""The exchange an answered request becomes: built, redacted and scanned, with its journal
text.

:func:`build_exchange` is the recorder's per-exchange CPU work: parsing the bodies and a
stream's events, redaction and the secret scan. It decides and says; it does not log. The
forwarder (``recorder._forwarding``) logs and counts what it reports, whether it ran in
the recorder's own process or in the build worker (``recorder._build_worker``). Its input,
:class:`Received`, is plain data (no connection, no aiohttp object), so it crosses to the
worker as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from cassettes._bodies import body_from_bytes, raw_body, stored_body
from cassettes._cassette import Body, Exchange, RecordedRequest, RecordedResponse, SseBody, SseEvent
from cassettes._errors import SecretFound
from cassettes._redaction import (
    RedactionRules,
    redacted_with_text,
    stored_headers,
    stored_url,
)
from cassettes._secret_scan import ensure_no_secrets
from cassettes._sse import event_from_raw
from cassettes._user_agent import client_versions
from recorder._journal import Written

__all__ = [
    "DROP_REQUEST_HEADERS",
    "ExchangeBuild",
    "Received",
    "build_exchange",
]

DROP_REQUEST_HEADERS = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)
"""Hop-by-hop and framing headers: neither forwarded upstream nor stored."""
_NOISE_REQUEST_HEADERS = frozenset({"accept-encoding", "accept"})
"""Differ per HTTP client (httpx, aiohttp) and say nothing about the call: not stored."""
_UNSTORED_REQUEST_HEADERS = DROP_REQUEST_HEADERS | _NOISE_REQUEST_HEADERS
_DROP_STORED_RESPONSE_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}
)


@dataclass
class Received:
    """What the forwarder saw of one exchange, gathered on the event loop; it becomes the
    stored :class:`Exchange` off the loop (:func:`build_exchange`)."""

    method: str
    request_headers: Mapping[str, str]
    """Lower-cased names, as the client sent them (credentials included: redacted by the
    build)."""
    request_body: bytes
    started_at: str
    """ISO 8601 wall-clock time the request arrived."""
    url: str
    status: int
    headers: dict[str, str]
    content_type: str | None
    encoding: str | None
    received: list[bytes]
    """The body as received, in the chunks it came in (joined off the loop, if at all)."""
    duration_ms: float
    raw_events: list[tuple[str, float]] | None
    """A stream's events as (raw text, offset ms), parsed off the loop; None for a body
    stored whole (not a stream, or one rec cannot split)."""
    line_ending: str
    tail: str | None
    cut: bool
    known_secrets: frozenset[str]
    """The credentials seen so far (a snapshot: the loop keeps adding to the live set)."""

    def size(self) -> int:
        """Bytes of the request and response bodies."""
        return len(self.request_body) + sum(map(len, self.received))


@dataclass(frozen=True)
class ExchangeBuild:
    """What :func:`build_exchange` made of one exchange."""

    written: Written[Exchange] | None
    """The exchange and its journal line; None when it must not be written."""
    problem: str | None = None
    """Why nothing is written (for the log), when it is not."""
    level: int = logging.ERROR
    """The log level :attr:`problem` is reported at."""
    refused: bool = False
    """Not written because the secret scan found a credential the redaction left."""


def build_exchange(got: Received, exchange_id: int, rules: RedactionRules) -> ExchangeBuild:
    """The exchange to journal, redacted and scanned, with its journal text (written once:
    the secret scan reads it too), or why it must not be written."""
    if not 100 <= got.status <= 599:
        return ExchangeBuild(
            None,
            f"#{exchange_id} was answered but not recorded: the upstream's status "
            f"{got.status} is not an HTTP status (100-599), which a cassette cannot hold",
        )
    if got.cut and got.raw_events is None:
        return ExchangeBuild(
            None,
            f"#{exchange_id}: a cut non-streaming response is not recorded",
            level=logging.WARNING,
        )
    response_body = _response_body(got)
    request_body = body_from_bytes(got.request_body, got.request_headers.get("content-type"))
    exchange = Exchange(
        id=exchange_id,
        recorded_at=got.started_at,
        duration_ms=got.duration_ms,
        client=client_versions(got.request_headers),
        # Built with the rules' drops applied: redaction then copies nothing unless a
        # known credential stands somewhere.
        request=RecordedRequest(
            method=got.method,
            url=stored_url(got.url, rules),
            headers=_stored(got.request_headers, _UNSTORED_REQUEST_HEADERS, rules),
            body=request_body,
        ),
        response=RecordedResponse(
            status=got.status,
            headers=_stored(got.headers, _DROP_STORED_RESPONSE_HEADERS, rules),
            body=response_body,
        ),
    )
    exchange, text = redacted_with_text(exchange, rules, known_secrets=got.known_secrets)
    try:
        ensure_no_secrets(exchange, path="journal", known_secrets=got.known_secrets, text=text)
    except SecretFound as exc:
        return ExchangeBuild(None, f"#{exchange_id} was not recorded: {exc}", refused=True)
    return ExchangeBuild(Written(exchange, text.encode("utf-8") + b"\n"))


def _stored(
    headers: Mapping[str, str], unstored: frozenset[str], rules: RedactionRules
) -> dict[str, str]:
    """``headers`` as stored: sorted by name, without ``unstored`` and those redaction
    drops."""
    kept = {k: v for k, v in sorted(headers.items()) if k not in unstored}
    return stored_headers(kept, rules)


def _response_body(got: Received) -> Body | None:
    """The response body as stored: a stream's events, a parsed body, or its bytes (None:
    an empty body)."""
    if got.raw_events is not None:
        line_ending: Literal["\r\n", "\n"] = "\n" if got.line_ending == "\n" else "\r\n"
        events: list[SseEvent] = [
            event_from_raw(raw, offset_ms=offset, line_ending=line_ending)
            for raw, offset in got.raw_events
        ]
        return SseBody(line_ending=line_ending, complete=not got.cut, events=events, tail=got.tail)
    if not (got.content_type or "").startswith("text/event-stream"):
        return stored_body(
            b"".join(got.received), content_type=got.content_type, content_encoding=got.encoding
        )
    # Not decodable, or not UTF-8: the bytes themselves, replayed as they came.
    return raw_body(b"".join(got.received), content_encoding=got.encoding)
