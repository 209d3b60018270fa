"""Turn HTTP bodies into stored bodies and back.

Bodies are stored decoded (gzip, deflate and br removed) and parsed when they are JSON,
so a cassette diff shows content, not compressed bytes. Headers are adjusted to match:
``content-encoding`` is dropped and ``content-length`` recomputed on replay.

A body is stored parsed only when its parsed form gives the client the same thing back
(see ``exact_json``): JSON with ``NaN``/``Infinity``, numbers beyond a float, or deep
nesting is stored as text. A body whose ``content-encoding`` rec cannot undo (``zstd``,
or a "gzip" body that is not gzip) is stored as its exact bytes with the encoding beside
it (:func:`stored_body`), and replayed byte for byte.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from typing import Any

from cassettes._canonical_json import strict_loads
from cassettes._cassette import BinaryBody, Body, JsonBody, SseBody, TextBody
from cassettes._errors import InputError
from cassettes._exact_json import exact_json, nests_too_deep
from cassettes._sse import frame_event, frame_tail

__all__ = [
    "IncrementalDecoder",
    "body_from_bytes",
    "body_from_parts",
    "body_parts",
    "body_to_bytes",
    "decode_content",
    "json_of",
    "stored_body",
]


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
        self.encoding = coding
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
        """Decode one chunk; returns whatever plain bytes it completed.

        Raises:
            ValueError: the bytes are not in the encoding the header named.
        """
        if self._decompress is None or not chunk:
            return chunk
        import brotli

        try:
            if hasattr(self._decompress, "process"):  # brotli
                return self._decompress.process(chunk)  # type: ignore[no-any-return]
            return self._decompress.decompress(chunk)  # type: ignore[attr-defined,no-any-return]
        except (zlib.error, brotli.error) as exc:
            raise ValueError(f"not {self.encoding} data ({exc})") from None

    def complete(self) -> bool:
        """Whether what was fed is one whole encoded body, nothing after it (as
        :func:`decode_content` decodes it)."""
        if self._decompress is None:
            return True
        if hasattr(self._decompress, "is_finished"):  # brotli
            return bool(self._decompress.is_finished())
        return bool(
            self._decompress.eof  # type: ignore[attr-defined]
            and not self._decompress.unused_data  # type: ignore[attr-defined]
        )


def raw_body(data: bytes, *, content_encoding: str | None = None) -> BinaryBody | None:
    """The exact bytes of a body, still encoded with ``content_encoding`` when given."""
    if not data:
        return None
    return _raw(data, content_encoding=content_encoding)


def _raw(data: bytes, *, content_encoding: str | None = None) -> BinaryBody:
    return BinaryBody(
        base64=base64.b64encode(data).decode("ascii"), content_encoding=content_encoding
    )


def body_parts(data: bytes, content_type: str | None) -> tuple[str, Any] | None:
    """What :func:`body_from_bytes` stores, as its kind and payload with no model built:
    ``("json", value)``, ``("text", text)``, ``("base64", text)``, or None (no body)."""
    if not data:
        return None
    ctype = (content_type or "").lower()
    if "json" in ctype or data[:1] in (b"{", b"["):
        # Read by orjson where it reads it as exact_json below would; what it refuses is
        # decided below (text, bytes, or JSON orjson does not read).
        read, value, opened = strict_loads(data)
        if read and not nests_too_deep(data, value, opened=opened):
            return "json", value
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "base64", base64.b64encode(data).decode("ascii")
    if "\x00" in text:
        return "base64", base64.b64encode(data).decode("ascii")
    if "json" in ctype or text[:1] in ("{", "["):
        parsed, value = exact_json(text)
        if parsed:
            return "json", value
    return "text", text


def body_from_bytes(data: bytes, content_type: str | None) -> Body | None:
    """Store decoded body bytes: JSON parsed, text as text, anything else base64."""
    return body_from_parts(body_parts(data, content_type))


def body_from_parts(parts: tuple[str, Any] | None) -> Body | None:
    """The stored body of :func:`body_parts`' answer."""
    if parts is None:
        return None
    kind, payload = parts
    if kind == "json":
        return JsonBody(value=payload)
    if kind == "text":
        return TextBody(text=payload)
    return BinaryBody(base64=payload)


def stored_body(
    raw: bytes, *, content_type: str | None, content_encoding: str | None
) -> Body | None:
    """Store a body as received (``raw``, still content-encoded): decoded and parsed when
    rec can undo the encoding, else the exact bytes with the encoding kept beside them."""
    import brotli

    try:
        data = decode_content(raw, content_encoding)
    except (InputError, OSError, EOFError, zlib.error, brotli.error):
        return raw_body(raw, content_encoding=content_encoding)
    return body_from_bytes(data, content_type)


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
