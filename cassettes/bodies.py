"""Turn HTTP bodies into stored bodies and back.

Bodies are stored decoded (gzip, deflate and br removed) and parsed when they are JSON,
so a cassette diff shows content, not compressed bytes. Headers are adjusted to match:
``content-encoding`` is dropped and ``content-length`` recomputed on replay.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib

from .cassette import BinaryBody, Body, JsonBody, SseBody, TextBody
from .errors import InputError
from .sse import frame_event, frame_tail

__all__ = ["IncrementalDecoder", "body_from_bytes", "body_to_bytes", "decode_content", "json_of"]


def decode_content(data: bytes, encoding: str | None) -> bytes:
    """Undo ``content-encoding`` (gzip, deflate, br; several comma-separated are undone in reverse).

    Raises:
        InputError: an encoding rec cannot decode.
    """
    if not encoding:
        return data
    for coding in reversed([c.strip().lower() for c in encoding.split(",") if c.strip()]):
        if coding in ("identity", ""):
            continue
        if coding in ("gzip", "x-gzip"):
            data = gzip.decompress(data)
        elif coding == "deflate":
            try:
                data = zlib.decompress(data)
            except zlib.error:
                data = zlib.decompress(data, -zlib.MAX_WBITS)
        elif coding == "br":
            import brotli

            data = brotli.decompress(data)
        else:
            raise InputError(
                f"unsupported content-encoding {coding!r}",
                where="response headers",
                fix="Send `accept-encoding: gzip` from the client",
            )
    return data


class IncrementalDecoder:
    """Undo a ``content-encoding`` chunk by chunk, for a stream that must not be buffered."""

    def __init__(self, encoding: str | None) -> None:
        coding = (encoding or "identity").strip().lower()
        self._decompress: object | None
        if coding in ("identity", ""):
            self._decompress = None
        elif coding in ("gzip", "x-gzip"):
            self._decompress = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            self._decompress = zlib.decompressobj()
        elif coding == "br":
            import brotli

            self._decompress = brotli.Decompressor()
        else:
            raise InputError(
                f"unsupported content-encoding {coding!r}",
                where="response headers",
                fix="Send `accept-encoding: gzip` from the client",
            )

    def feed(self, chunk: bytes) -> bytes:
        """Decode one chunk; returns whatever plain bytes it completed."""
        if self._decompress is None or not chunk:
            return chunk
        if hasattr(self._decompress, "process"):  # brotli
            return self._decompress.process(chunk)  # type: ignore[no-any-return]
        return self._decompress.decompress(chunk)  # type: ignore[attr-defined,no-any-return]


def body_from_bytes(data: bytes, content_type: str | None) -> Body | None:
    """Store decoded body bytes: JSON parsed, text as text, anything else base64."""
    if not data:
        return None
    ctype = (content_type or "").lower()
    if "json" in ctype or data[:1] in (b"{", b"["):
        try:
            return JsonBody(value=json.loads(data))
        except ValueError:
            pass
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return BinaryBody(base64=base64.b64encode(data).decode("ascii"))
    if "\x00" in text:
        return BinaryBody(base64=base64.b64encode(data).decode("ascii"))
    return TextBody(text=text)


def body_to_bytes(body: Body | None) -> bytes:
    """The bytes of a stored body, as a client receives them (SSE framed exactly)."""
    if body is None:
        return b""
    if isinstance(body, JsonBody):
        return json.dumps(body.value, ensure_ascii=False).encode("utf-8")
    if isinstance(body, TextBody):
        return body.text.encode("utf-8")
    if isinstance(body, BinaryBody):
        return base64.b64decode(body.base64)
    if isinstance(body, SseBody):
        out = b"".join(frame_event(e, body.line_ending) for e in body.events)
        return out + frame_tail(body.tail)
    raise AssertionError(f"unknown body {body!r}")


def json_of(body: Body | None) -> object | None:
    """The parsed JSON of a body, or None when it is not JSON."""
    return body.value if isinstance(body, JsonBody) else None
