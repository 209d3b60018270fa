"""Screen a large response body for credentials piece by piece, as it passes.

The recorder writes a large body to the journal in pieces while the client is still
receiving it (:class:`BodyScreen` is fed the pieces in order, on the journal's writer
thread). A piece may be written only if nothing in it could be what the secret scan
(:func:`cassettes._secret_scan.scan_for_secrets`) would find in the stored exchange; the
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

The screen runs on the journal's writer thread while the event loop forwards the body, so
its searches over a whole piece run in the C library without the GIL (``memmem`` and
``strspn`` through :mod:`ctypes`; :func:`gil_free`): ``bytes.find`` and ``re`` hold it for
their whole pass, and the loop, woken for its next chunk, would wait for them. Where the C
library lacks those functions the same searches run as ``bytes`` methods.

A credential first seen while the body streams (a tool's key) is added with
:meth:`BodyScreen.learn`: the pieces not yet written are screened for it too.
"""

from __future__ import annotations

import ctypes
import functools
import re
from collections.abc import Callable, Collection, Sequence
from urllib.parse import unquote_to_bytes

from cassettes._secret_shapes import (
    API_KEY,
    BYTES_OPENING_KEYS,
    JSON_ESCAPED,
    MIN_SECRET_LENGTH,
    TEXT_HINTS,
    found_at,
    spellings_of,
)

__all__ = ["BodyScreen", "gil_free"]

_OPENER = re.compile(
    rb'[{,]\s*"(?:thoughtSignature|thought_signature|base64)"\s*:\s*"'
    rb'|[{,]\s*"(?:inlineData|inline_data)"\s*:\s*\{\s*'
    rb'(?:"(?:mimeType|mime_type)"\s*:\s*"[^"\\]*"\s*,\s*)?"data"\s*:\s*"'
)
"""Where a base64 bytes value starts, after one of the table's ``BYTES_OPENING_KEYS``, as
the scan places them. The leading ``{`` or ``,`` puts the key where a key stands: a quote
inside a JSON string is escaped, so no string's content can spell it."""
_HINTS = tuple(hint.encode("ascii") for hint in (*TEXT_HINTS, "://", "="))
"""What no plain (not bytes) text of a screened body may hold."""
_API_KEY_BYTES = re.compile(API_KEY.pattern.encode("ascii"))
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_"
_GIL_FREE_FROM = 1 << 16
"""From this many bytes on a search runs in the C library without the GIL (below it the
call's own cost is more than the search's)."""


def _c_library() -> tuple[Callable[..., int | None], Callable[..., int]] | None:
    """The C library's ``memmem`` and ``strspn``, called without the GIL (None: the C
    library has not both, as on Windows)."""
    try:
        libc = ctypes.CDLL(None)
        memmem, strspn = libc.memmem, libc.strspn
    except (OSError, TypeError, AttributeError):
        return None
    memmem.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t)
    memmem.restype = ctypes.c_void_p
    strspn.argtypes = (ctypes.c_void_p, ctypes.c_char_p)
    strspn.restype = ctypes.c_size_t
    return memmem, strspn


_LIBC = _c_library()


def gil_free() -> bool:
    """Whether the screen's long searches run without the GIL here."""
    return _LIBC is not None


def _address(text: bytes) -> int:
    """Where ``text``'s bytes are (``c_char_p`` points at a ``bytes`` object's own buffer,
    which lives as long as the object; the caller holds it)."""
    address = ctypes.cast(ctypes.c_char_p(text), ctypes.c_void_p).value
    assert address is not None
    return address


def _find(text: bytes, needle: bytes, start: int = 0, end: int | None = None) -> int:
    """``text.find(needle, start, end)``; without the GIL over a long span."""
    end = len(text) if end is None else min(end, len(text))
    if _LIBC is None or end - start < _GIL_FREE_FROM or not needle:
        return text.find(needle, start, end)
    base = _address(text)
    hit = _LIBC[0](base + start, end - start, needle, len(needle))
    return -1 if hit is None else hit - base


def _all_base64(text: bytes, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is base64 characters only, ``end`` being a quote or the
    text's end (``strspn`` stops there); without the GIL over a long span."""
    if _LIBC is None or end - start < _GIL_FREE_FROM:
        return not text[start:end].translate(None, _BASE64)
    base = _address(text)
    return _LIBC[1](base + start, _BASE64) >= end - start


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
        self._known: set[str] = set()
        self._spellings: list[bytes] = []
        """What is searched for: each spelling that holds no other one (finding the
        shorter finds every text holding the longer)."""
        self.window = 64 + 512
        """Bytes held back: longer than any credential the screen looks for, and than a
        bytes value's opening (its key and its mime type)."""
        self.failed = False
        """True once a piece could not be cleared (nothing more is cleared)."""
        self._held = b""
        self._in_bytes = False
        """Whether ``_held`` starts inside a bytes value."""
        self.learn(known_secrets)

    def learn(self, known_secrets: Collection[str]) -> None:
        """Screen what is fed from now on for these credentials too (those already known
        cost nothing). The bytes already cleared were screened without the new ones."""
        new = {
            secret
            for secret in known_secrets
            if secret not in self._known and len(secret) >= MIN_SECRET_LENGTH
        }
        if not new:
            return
        self._known |= new
        spellings = {
            spelling
            for secret in new
            for spelling in spellings_of(secret)
            if len(spelling) >= MIN_SECRET_LENGTH
        }
        if any(JSON_ESCAPED.search(spelling) for spelling in spellings):
            self.failed = True
        every = {*self._spellings, *(spelling.encode("utf-8") for spelling in spellings)}
        self._spellings = sorted(
            spelling
            for spelling in every
            if not any(other != spelling and other in spelling for other in every)
        )
        # A secret percent-encoded whole is three bytes a byte.
        longest = max(3 * len(secret.encode("utf-8")) for secret in self._known)
        self.window = max(self.window, max(map(len, every)) + 512, longest + 512)

    def feed(self, piece: bytes | Sequence[bytes]) -> bytes | None:
        """The bytes now safe to write (perhaps none), or None: ``piece`` (bytes, or the
        chunks it came in) could not be cleared and nothing more will be."""
        if isinstance(piece, bytes):
            return self._take(self._held + piece, final=False)
        return self._take(b"".join([self._held, *piece]), final=False)

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
                match = _next_opener(text, pos)
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
        if any(_find(text, spelling) >= 0 for spelling in self._spellings):
            return False
        if self._spellings and _find(text, b"%") >= 0:
            decoded = unquote_to_bytes(text)  # a secret with any of its characters escaped
            if any(spelling in decoded for spelling in self._spellings):
                return False
        plain: list[bytes] = []
        for index, (start, end, is_bytes, closed, _opener) in enumerate(segments):
            if not is_bytes:
                plain.append(text[start:end])
                continue
            starts_value = index > 0 or not self._in_bytes
            if starts_value:
                plain.append(b'"' + text[start : start + _VALUE_START])
            if not _all_base64(text, start, end):
                return False  # not base64: a backslash, a space, another character
            pad = text.find(b"=", start, end)  # padding: only at a closed value's end
            if pad >= 0 and (not closed or text.count(b"=", pad, end) != end - pad):
                return False
            find = functools.partial(_find, text)
            if found_at(text, (b"AIza",), _API_KEY_BYTES, start, end, find=find):
                return False
            if (text.find(b"-", start, end) >= 0 or text.find(b"_", start, end) >= 0) and (
                text.find(b"+", start, end) >= 0 or text.find(b"/", start, end) >= 0
            ):
                return False  # both alphabets: the spellings looked for are of one each
        joined = b'""'.join(plain)
        return not any(_find(joined, hint) >= 0 for hint in _HINTS)


_OPENER_KEYS = tuple(f'"{key}"'.encode("ascii") for key in BYTES_OPENING_KEYS)
"""The key each :data:`_OPENER` spells: searched for without the GIL, the pattern tried
only where one is."""
_SPACE = b" \t\n\r\x0b\x0c"
"""What ``\\s`` matches in a bytes pattern."""


def _next_opener(text: bytes, pos: int) -> re.Match[bytes] | None:
    """``_OPENER.search(text, pos)``, the pattern tried only before a key it spells: the
    leftmost match is the one of the first such key that matches (a match's span before
    its key is ``{`` or ``,`` and spaces, which hold no key)."""
    while True:
        hits = [at for key in _OPENER_KEYS if (at := _find(text, key, pos)) >= 0]
        if not hits:
            return None
        at = min(hits)
        start = at
        while start > pos and text[start - 1] in _SPACE:
            start -= 1
        if start > pos and text[start - 1] in b"{,":
            match = _OPENER.match(text, start - 1)
            if match is not None:
                return match
        pos = at + 1
