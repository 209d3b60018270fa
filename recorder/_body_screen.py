"""Screen a large response body for credentials piece by piece, as it passes.

The recorder writes a large body to the journal in pieces while the client is still
receiving it (:class:`BodyScreen` is fed the pieces in order, on the journal's writer
thread). A piece may be written only if nothing in it could be what the secret scan
(:func:`cassettes._redaction.scan_for_secrets`) would find in the stored exchange; the
screen is the cheap, stricter test that proves it, and the first piece it cannot clear
ends the screening: that exchange is then built, redacted and scanned whole, as every
small one is.

It works on the body's JSON text, the way the scan's quick glance does: every hit the
scan reports needs a shape's literal hint, a ``name=value`` parameter, a URL with ``://``
or a known spelling inside one string or key, and each is spelled the same in JSON text
(a body with ``\\u`` or ``\\/`` escapes is not screened). Inside a base64 bytes value
(``inlineData.data``, ``thoughtSignature``, ``base64``), where random bytes spell hints by
chance, it looks where the scan does: for a whole Google API key, for the known
credentials (their base64 spellings at each byte alignment, in one alphabet: a value that
mixes both is not screened), and for a shape at the value's start (the only place a shape
can start in base64 text). The last :attr:`BodyScreen.window` bytes of what it was
fed are held back until the next piece has been seen with them, so a credential split
across two pieces is caught before either half is written.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from cassettes._redaction import _GLANCE_HINTS, _JSON_ESCAPED
from cassettes._secret_shapes import _API_KEY, MIN_SECRET_LENGTH, _encodings

__all__ = ["BodyScreen"]

_OPENER = re.compile(
    rb'[{,]\s*"(?:thoughtSignature|thought_signature|base64)"\s*:\s*"'
    rb'|[{,]\s*"(?:inlineData|inline_data)"\s*:\s*\{\s*'
    rb'(?:"(?:mimeType|mime_type)"\s*:\s*"[^"\\]*"\s*,\s*)?"data"\s*:\s*"'
)
"""Where a base64 bytes value starts, as the scan's ``_is_bytes_field`` places them. The
leading ``{`` or ``,`` puts the key where a key stands: a quote inside a JSON string is
escaped, so no string's content can spell it."""
_HINTS = tuple(hint.encode("ascii") for hint in (*_GLANCE_HINTS, "://", "="))
"""What no plain (not bytes) text of a screened body may hold."""
_API_KEY_BYTES = re.compile(_API_KEY.pattern.encode("ascii"))
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_"
_VALUE_START = 32
"""How much of a bytes value's start is screened as plain text (a shape's hint is at
most 11 characters long)."""


class BodyScreen:
    """Feeds of one body's pieces in order; says which bytes are safe to write.

    Example::

        screen = BodyScreen(known_secrets)
        for piece in pieces:
            safe = screen.feed(piece)   # None once a piece could hold a credential
        rest = screen.finish()
    """

    def __init__(self, known_secrets: Collection[str]) -> None:
        plain = {secret for secret in known_secrets if len(secret) >= MIN_SECRET_LENGTH}
        spellings = {
            spelling
            for secret in plain
            for spelling in _encodings(secret)
            if len(spelling) >= MIN_SECRET_LENGTH
        }
        self._spellings = [spelling.encode("utf-8") for spelling in spellings]
        self.window = max((64, *map(len, self._spellings))) + 512
        """Bytes held back: longer than any credential the screen looks for, and than a
        bytes value's opening (its key and its mime type)."""
        self.failed = any(_JSON_ESCAPED.search(spelling) for spelling in spellings)
        """True once a piece could not be cleared (nothing more is cleared)."""
        self._held = b""
        self._in_bytes = False
        """Whether ``_held`` starts inside a bytes value."""

    def feed(self, piece: bytes) -> bytes | None:
        """The bytes now safe to write (perhaps none), or None: ``piece`` could not be
        cleared and nothing more will be."""
        return self._take(self._held + piece, final=False)

    def finish(self) -> bytes | None:
        """The held-back rest, once the body is complete; None if it cannot be cleared."""
        return self._take(self._held, final=True)

    def _take(self, text: bytes, *, final: bool) -> bytes | None:
        if self.failed:
            return None
        segments = self._segments(text)
        if not self._clean(text, segments, final=final):
            self.failed = True
            self._held = b""
            return None
        if final:
            if segments and segments[-1][2] and not segments[-1][3]:
                self.failed = True  # the body ends inside a bytes value: not JSON
                return None
            self._held = b""
            return text
        cut = len(text) - self.window
        if cut <= 0:
            self._held = text
            return b""
        # The state at the cut: never inside a bytes value's opening (it would not be
        # recognised again in the held-back rest).
        for start, end, is_bytes, _closed, opener in segments:
            if start <= cut < end:
                if not is_bytes and opener is not None and cut > opener:
                    cut = opener
                self._in_bytes = is_bytes
                break
        self._held = text[cut:]
        return text[:cut]

    def _segments(self, text: bytes) -> list[tuple[int, int, bool, bool, int | None]]:
        """``text`` split into (start, end, is bytes value, value closed here, where a
        plain segment's closing opener starts) from the state at its start."""
        out: list[tuple[int, int, bool, bool, int | None]] = []
        pos, in_bytes = 0, self._in_bytes
        while pos < len(text):
            if in_bytes:
                end = text.find(b'"', pos)
                if end < 0:
                    out.append((pos, len(text), True, False, None))
                    break
                out.append((pos, end, True, True, None))
                pos, in_bytes = end, False
            else:
                match = _OPENER.search(text, pos)
                if match is None:
                    out.append((pos, len(text), False, False, None))
                    break
                out.append((pos, match.end(), False, False, match.start()))
                pos, in_bytes = match.end(), True
        return out

    def _clean(
        self,
        text: bytes,
        segments: list[tuple[int, int, bool, bool, int | None]],
        *,
        final: bool,
    ) -> bool:
        """Whether nothing in ``text`` could be a credential the scan would report."""
        if b"\\" in text and (b"\\u" in text or b"\\/" in text):
            return False
        if any(spelling in text for spelling in self._spellings):
            return False
        plain: list[bytes] = []
        for index, (start, end, is_bytes, closed, _opener) in enumerate(segments):
            part = text[start:end]
            if not is_bytes:
                plain.append(part)
                continue
            starts_value = index > 0 or not self._in_bytes
            if starts_value:
                plain.append(b'"' + part[:_VALUE_START])
            if part.translate(None, _BASE64):
                return False  # not base64: a backslash, a space, another character
            if b"=" in part and (not closed or b"=" in part.rstrip(b"=")):
                return False
            if b"AIza" in part and _has_api_key(text, start, end):
                return False
            if (b"-" in part or b"_" in part) and (b"+" in part or b"/" in part):
                return False  # both alphabets: the spellings looked for are of one each
        joined = b'""'.join(plain)
        return not any(hint in joined for hint in _HINTS)


def _has_api_key(text: bytes, start: int, end: int) -> bool:
    """Whether a whole Google API key starts in ``text[start:end]`` (tried only where its
    literal start ``AIza`` occurs)."""
    at = text.find(b"AIza", start, end)
    while at >= 0:
        if _API_KEY_BYTES.match(text, at) is not None:
            return True
        at = text.find(b"AIza", at + 1, end)
    return False
