"""The cheap key that groups recorded requests before any is canonicalised.

:class:`cassettes.MatchIndex` first sorts recordings into buckets by method, normalised
path, canonical query and, for a generate body, the number of ``contents`` turns and the
digest of the canonical last turn; a request's full canonical key is computed only for the
bucket it lands in. A bucket is a pre-filter: two requests with the same canonical key
always share one, and a shared bucket never makes two different requests match.

The key is computed here from a request's parts (:func:`bucket_key`) or straight from a
cassette's bytes in the layout rec writes (:func:`raw_bucket_key`), so neither a cassette's
side index (``cassettes._side_index``) nor matching has to parse a body to get it. The
normalisations canonical keys share (version segment, bytes fields, compact JSON) live here
too, so both spell a request the same way.
"""

from __future__ import annotations

import functools
import hashlib
import json
import mmap
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from cassettes import _dump_layout as written
from cassettes._canonical_json import compact_json, loads
from cassettes._providers import provider_route
from cassettes._secret_shapes import is_secret_name

__all__ = [
    "BucketKey",
    "Route",
    "bucket_key",
    "canonical_bytes",
    "compact_json",
    "has_turns",
    "json_value_span",
    "json_scalar",
    "narrow",
    "normalise_bytes",
    "normalise_bytes_utf8",
    "raw_bucket_key",
    "raw_json_request",
    "route_of",
    "with_first_user",
]

Route = tuple[str, str, tuple[tuple[str, str], ...]]
"""Upper-case method, normalised path, sorted credential-free query."""

BucketKey = tuple[object, ...]
"""A route, then the body's kind (``json`` or the body model's name), then for a generate
body the number of turns and the digest of the canonical last turn."""

_VERSION_SEGMENT = re.compile(r"^v\d+(?:(?:alpha|beta)\d*)?$")

# Fields google-genai serialises from ``bytes`` (types.py fields typed Optional[bytes]),
# camelCase or snake_case, as they read in the compact, key-sorted serialisation:
# ``"thoughtSignature":"<b64>"``; a Blob's ``data`` is its first key (``data`` <
# ``displayName`` < ``mimeType``). The quotes around a key are unescaped, so the pattern
# never matches inside a string value. One alternation with few branches keeps the scan
# fast on large bodies.
_BYTES_FIELD = re.compile(
    r'"(?:thought_?[sS]ignature|image_?[bB]ytes|video_?[bB]ytes|voice_?[sS]ample_?[aA]udio'
    r"|consent_?[aA]udio|continuation_?[tT]oken|sdk_?[bB]lob|image_?[dD]ata"
    r'|inline_?[dD]ata":\{"data)":"([A-Za-z0-9+/_=-]*)"'
)


def _normalise_path(path: str) -> str:
    segments = path.split("/")
    for index, segment in enumerate(segments):
        if _VERSION_SEGMENT.match(segment):
            segments[index] = "{v}"
            break
    return "/".join(segments)


_STANDARD_TO_URLSAFE = str.maketrans("+/", "-_")


def canonical_bytes(value: str) -> str:
    """One spelling for the same bytes: the URL-safe alphabet, padded.

    Standard and URL-safe base64 of the same bytes differ only in two characters and the
    padding, so translating is enough (far cheaper than decoding). URL-safe is chosen
    because google-genai sends every bytes field that way, so requests need no rewrite.
    """
    text = value.translate(_STANDARD_TO_URLSAFE)
    if len(text) % 4:
        text = text.rstrip("=")
        text += "=" * (-len(text) % 4)
    return text


_BYTES_FIELD_HINTS = ("ytes", "udio", "oken", "lob", "mage", "nline")
"""With ``ignature`` (checked first: a thought signature is the common bytes field), a
piece of every name :data:`_BYTES_FIELD` matches: text holding none of them has no bytes
field, and is not scanned (a substring search is far cheaper than the pattern)."""


def normalise_bytes(text: str) -> str:
    """Rewrite every bytes field of a canonical serialisation to the canonical base64."""
    if "ignature" not in text and not any(hint in text for hint in _BYTES_FIELD_HINTS):
        return text
    data = text.encode("utf-8", "surrogatepass")
    return normalise_bytes_utf8(data).decode("utf-8", "surrogatepass")


_BYTES_FIELD_UTF8 = re.compile(_BYTES_FIELD.pattern.encode("ascii"))
_SIGNATURE_OPENS = b'ignature":"'
"""What a thought signature (the common bytes field) holds right before its value."""
_OTHER_OPENS = re.compile(rb'":"(?<=(?:ytes|udio|oken|blob|Blob|data|Data)":")')
"""What every other field :data:`_BYTES_FIELD` matches holds right before its value: its
name's last letters (``data`` for a Blob's) and ``":"`` (searched as that literal, each
one found looked behind: one pass, where a ``bytes.find`` a name costs five)."""


def _bytes_fields(data: bytes) -> list[re.Match[bytes]]:
    """The matches ``_BYTES_FIELD_UTF8.finditer(data)`` gives.

    The pattern tried at every quote of a large body costs more than the rest of keying
    it, so where no field but thought signatures can be (:data:`_OTHER_OPENS` finds none),
    each signature is found with ``bytes.find`` and the pattern is tried
    only where its name would start (``"thoughtS`` or ``"thought_S``, 9 or 10 bytes
    before), left to right, none overlapping the one before: the matches ``finditer``
    takes. ``bytes.find``, not ``in``: ``in`` tries the needle as an integer first, and
    raises and clears a TypeError a call."""
    if _OTHER_OPENS.search(data) is not None:
        return list(_BYTES_FIELD_UTF8.finditer(data))
    found: list[re.Match[bytes]] = []
    end = 0
    at = data.find(_SIGNATURE_OPENS)
    while at >= 0:
        for start in (at - 10, at - 9):
            match = _BYTES_FIELD_UTF8.match(data, start) if start >= end else None
            if match is not None:
                found.append(match)
                end = match.end()
                break
        at = data.find(_SIGNATURE_OPENS, at + 1)
    return found


def normalise_bytes_utf8(data: bytes) -> bytes:
    """:func:`normalise_bytes` of a canonical serialisation's UTF-8 bytes (the pattern is
    ASCII, so it finds the same fields in the bytes as in the text)."""
    pieces: list[bytes] = []
    last = 0
    for match in _bytes_fields(data):
        spelled = match.group(1)
        if spelled.find(b"+") < 0 and spelled.find(b"/") < 0 and not len(spelled) % 4:
            continue  # URL-safe and padded already: canonical_bytes leaves it as it is
        value = spelled.decode("ascii")
        canonical = canonical_bytes(value)
        if canonical != value:
            pieces.append(data[last : match.start(1)])
            pieces.append(canonical.encode("ascii"))
            last = match.end(1)
    if not pieces:
        return data
    pieces.append(data[last:])
    return b"".join(pieces)


@functools.lru_cache(maxsize=4096)
def route_of(method: str, url: str) -> Route:
    """Method, normalised path and canonical query of a request (cached: a recording's
    requests share a few URLs)."""
    parts = urlsplit(url)
    query = tuple(
        sorted(
            (name, value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
            if name != "key" and not is_secret_name(name)  # credentials are never stored
        )
    )
    path = provider_route(parts.path) or _normalise_path(parts.path)
    return method.upper(), path, query


def _turn_digest(turn: Any) -> str:
    text = normalise_bytes(compact_json(turn))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


_KIND_BUCKET = {"json": "json", "text": "TextBody", "base64": "BinaryBody", "sse": "SseBody"}


def bucket_key(
    method: str, url: str, body_kind: str | None, value: Any = None, *, use_turns: bool = True
) -> BucketKey:
    """The bucket of a request: its route, its body's kind (None: no body) and, with
    ``use_turns``, for a JSON object body with a ``contents`` list its number of turns and
    the digest of its canonical last turn. The history, which makes up most of an agent's
    request, is left out, so building an index never serialises it."""
    route = route_of(method, url)
    if body_kind is None:
        return (*route, "NoneType")
    name = _KIND_BUCKET.get(body_kind, body_kind)
    if use_turns and body_kind == "json" and isinstance(value, dict):
        contents = value.get("contents")
        if isinstance(contents, list):
            last = _turn_digest(contents[-1]) if contents else ""
            return (*route, "json", len(contents), last)
    return (*route, name)


def narrow(key: BucketKey, *, use_turns: bool) -> BucketKey:
    """The key ``bucket_key`` gives with ``use_turns`` off, from the one it gives with it on."""
    return key if use_turns else key[:4]


def has_turns(key: BucketKey) -> bool:
    """Whether ``key`` counts a generate body's turns (and digests its last turn)."""
    return len(key) > 4


def with_first_user(key: BucketKey, digest: str | None) -> BucketKey:
    """A key with turns narrowed by the digest of the first user turn
    (``cassettes._first_user``)."""
    return (*key, digest)


def json_scalar(text: bytes) -> Any:
    """The JSON value ``text`` (one line of a cassette, its trailing comma dropped): a string
    without escapes is decoded directly, anything else by ``json``.

    Raises:
        ValueError: not JSON.
    """
    if text.endswith(b","):
        text = text[:-1]
    if len(text) >= 2 and text[0] == 0x22 and text[-1] == 0x22:
        inner = text[1:-1]
        if _PLAIN_STRING.fullmatch(inner):
            return inner.decode("utf-8")
    return json.loads(text)


_PLAIN_STRING = re.compile(rb'[^\x00-\x1f"\\]*')
"""The inside of a JSON string that holds no escape (nor a byte JSON refuses unescaped)."""


def _line_value(data: bytes | mmap.mmap, marker: bytes, start: int, end: int) -> Any:
    at = data.find(marker, start, end)
    if at < 0:
        raise LookupError(marker)
    at += len(marker)
    return json_scalar(data[at : data.find(b"\n", at, end)])


def _request_lines(
    data: bytes | mmap.mmap, start: int, end: int
) -> tuple[str, str, int, int] | None:
    """The method and URL of the exchange at ``data[start:end]``, and where its body's
    lines start and end (-1, -1: no body); None when they are not laid out as rec writes
    them. Raises LookupError or ValueError as :func:`_line_value` does."""
    opened = data.find(written.REQUEST_OPEN, start, end)
    if opened < 0:
        return None
    closed = data.find(written.RESPONSE_LINE, opened, end) - len(written.REQUEST_TAIL)
    if (
        closed <= opened
        or data[closed : closed + len(written.REQUEST_TAIL)] != written.REQUEST_TAIL
    ):
        return None
    method = _line_value(data, written.METHOD_LINE, opened, closed)
    url = _line_value(data, written.URL_LINE, opened, closed)
    if not isinstance(method, str) or not isinstance(url, str):
        return None
    body = data.find(written.BODY_LINE, opened, closed)
    if body < 0:
        return method, url, -1, -1
    return method, url, body, closed


def raw_bucket_key(
    data: bytes, start: int, end: int, *, use_turns: bool = True
) -> BucketKey | None:
    """:func:`bucket_key` of the exchange at ``data[start:end]`` read from its lines,
    parsing only its method, URL and last turn; None when the lines are not laid out as
    rec writes them (the caller parses the exchange instead)."""
    try:
        request = _request_lines(data, start, end)
        if request is None:
            return None
        method, url, body, body_end = request
        route = route_of(method, url)
        if body < 0:
            return (*route, "NoneType")
        kind = _line_value(data, written.KIND_LINE, body, body_end)
        if kind != "json":
            name = _KIND_BUCKET.get(kind) if isinstance(kind, str) else None
            return None if name is None else (*route, name)
        if not use_turns:
            return (*route, "json")
        value = data.find(written.VALUE_LINE, body, body_end)
        if value < 0 or not data.startswith(b"{\n", value + len(written.VALUE_LINE)):
            return None  # not an object with keys: parsed, whatever it is
        contents = data.find(written.CONTENTS_LINE, value, body_end)
        if contents < 0:
            return (*route, "json")
        if not data.startswith(b"[\n", contents + len(written.CONTENTS_LINE)):
            return None
        contents_end = data.find(written.CONTENTS_CLOSE, contents, body_end)
        turns = data.count(written.TURN_OPEN, contents, contents_end)
        lines = data.count(written.TURN_INDENT, contents, contents_end) - data.count(
            written.DEEPER_INDENT, contents, contents_end
        )
        if turns == 0 or lines != 2 * turns:
            return None  # a turn that is not an object with keys
        last_at = data.rfind(written.TURN_OPEN, contents, contents_end)
        last = json.loads(data[last_at:contents_end])
    except (LookupError, ValueError, RecursionError):
        return None
    return (*route, "json", turns, _turn_digest(last))


def json_value_span(
    data: bytes | mmap.mmap, start: int, end: int
) -> tuple[str, str, int, int] | None:
    """The method and URL of the exchange at ``data[start:end]`` and where its JSON body's
    value lies in ``data`` (start, end), read from its lines, nothing parsed but the method
    and URL; None when the lines are not laid out as rec writes them or the body is not
    JSON.

    Raises:
        LookupError, ValueError: lines that are not as rec writes them (as the readers
            here catch them).
    """
    request = _request_lines(data, start, end)
    if request is None or request[2] < 0:
        return None
    method, url, body, body_end = request
    value = data.find(written.VALUE_LINE, body, body_end)
    if value < 0 or _line_value(data, written.KIND_LINE, body, body_end) != "json":
        return None
    return method, url, value + len(written.VALUE_LINE), body_end


def raw_json_request(data: bytes | mmap.mmap, start: int, end: int) -> tuple[str, str, Any] | None:
    """The method, URL and JSON body value of the exchange at ``data[start:end]``, read
    from its lines (only the body's value parsed, as ``json.loads`` reads it); None when
    the lines are not laid out as rec writes them or the body is not JSON (the caller
    parses the exchange instead)."""
    try:
        found = json_value_span(data, start, end)
        if found is None:
            return None
        method, url, value, value_end = found
        return method, url, loads(data[value:value_end])
    except (LookupError, ValueError, RecursionError):
        return None
