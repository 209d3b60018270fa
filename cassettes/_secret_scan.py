"""Find what still looks like a credential in a document about to be written.

:func:`scan_for_secrets` is the one detector: it looks at every string and key of a
document (over the one walk, :mod:`cassettes._secret_walk`) for the shapes, named
parameters and known values of the table (:mod:`cassettes._secret_shapes`), at base64
bytes fields decoded, and at each event stream's strings joined across its events.

Most documents hold no credential at all, and the recorder scans every exchange, so the
scan first glances at the document's JSON text (:func:`exchange_clear_at_a_glance`,
:func:`text_clear_at_a_glance`): every hit needs, inside one string, a hint literal of the
table, a ``name=value`` parameter, a URL password or a known spelling, each spelled the same
in JSON text; a text with none is clear without a walk. The recorder's screen of a body
written in pieces applies the same table to the body's bytes.

:func:`ensure_no_secrets` is the refusal: a document the scan finds anything in is not
written, and the error names the place, never the value.
"""

from __future__ import annotations

import binascii
import contextlib
import functools
import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from cassettes._cassette import Exchange, SseBody
from cassettes._errors import SecretFound
from cassettes._json_path import render_json_path
from cassettes._secret_shapes import (
    _KIND,
    _SECRET_PARAM,
    _SHAPE,
    API_KEY,
    BYTES_KEYS,
    INLINE_DATA_KEYS,
    JSON_ESCAPED,
    MIN_SECRET_LENGTH,
    TEXT_HINTS,
    KnownSpellings,
    _is_value,
    found_at,
    has_secret_param,
    has_url_password,
    is_secret_name,
    mask,
    percent_decoded_holds,
    shape_matches,
    spellings_of,
)
from cassettes._secret_walk import JsonPath, map_strings, stream_texts

__all__ = [
    "SecretHit",
    "ensure_no_secrets",
    "exchange_clear_at_a_glance",
    "journal_text",
    "scan_for_secrets",
    "text_clear_at_a_glance",
]


@dataclass(frozen=True)
class SecretHit:
    """A place where a credential-shaped value was found. Never holds the value."""

    where: str
    """JSON path of the string, e.g. ``exchanges[3].response.body.events[2].data.text``."""
    kind: str
    """What was found: a shape (``"Google API key"``, ``"JSON web token"``, ...),
    ``"credential in a query parameter"`` or ``"known credential"``."""

    def __str__(self) -> str:
        return f"{self.kind} at {self.where}"


def _is_bytes_field(path: JsonPath) -> bool:
    """Whether the string at ``path`` is base64 bytes (a signature, inline data, a body)."""
    if not path:
        return False
    last = path[-1]
    if last in BYTES_KEYS:
        return True
    return last == "data" and len(path) > 1 and path[-2] in INLINE_DATA_KEYS


def _decoded(text: str) -> bytes | None:
    """The bytes of standard or URL-safe base64, padded or not (None: not base64)."""
    if "-" not in text and "_" not in text:
        # Standard alphabet: decoded without copying the text (a padding error falls
        # through to the padded path below).
        with contextlib.suppress(binascii.Error, ValueError):
            return binascii.a2b_base64(text)
    try:
        raw = text.encode("ascii")  # not ASCII: not base64 (as b64decode would say)
        return binascii.a2b_base64(raw.translate(_URLSAFE_TO_STANDARD) + b"==")
    except (binascii.Error, ValueError):
        return None


_URLSAFE_TO_STANDARD = bytes.maketrans(b"-_", b"+/")


def _kinds(
    text: str,
    path: JsonPath,
    known: KnownSpellings | None,
    known_bytes: Sequence[bytes],
    known_spellings: Sequence[str],
) -> list[str]:
    """The kinds of credential in one string (one pass of the combined pattern)."""
    if _is_bytes_field(path):
        # Random bytes spell anything: only a whole Google API key counts, and the known
        # credentials are looked for in the decoded bytes.
        kinds = ["Google API key"] if found_at(text, ("AIza",), API_KEY) else []
        raw = _decoded(text) if known_bytes else None
        if raw is not None and any(secret in raw for secret in known_bytes):
            kinds.append("known credential (base64-encoded)")
    else:
        kinds = list(dict.fromkeys(_KIND[m.lastgroup or ""] for m in shape_matches(text)))
        if "=" in text:
            kinds += [
                "credential in a query parameter"
                for m in _SECRET_PARAM.finditer(text)
                if is_secret_name(m.group("name"))
                and _is_value(m.group("value"))
                and not _SHAPE.search(m.group("value"))
            ][:1]
    if known is not None and _has_known(text, known, known_spellings):
        kinds.append("known credential")
    return kinds


_LONG = 1 << 16
"""Above this length a string is searched with ``str.find`` before the regex engine runs:
Python's engine tries an alternation, or a pattern that starts with a lookbehind, at every
position, which costs seconds on a 50 MB inline-data string."""


def _has_known(text: str, known: KnownSpellings, spellings: Sequence[str]) -> bool:
    """Whether ``text`` holds one of the known ``spellings`` (``known`` alternates them)."""
    if (
        len(text) > _LONG
        and not any(spelling in text for spelling in spellings)
        and not percent_decoded_holds(text, spellings)
    ):
        return False
    return known.search(text)


@functools.lru_cache(maxsize=64)
def _scan_spellings(
    plain: frozenset[str],
) -> tuple[tuple[str, ...], tuple[bytes, ...], KnownSpellings | None]:
    """What :func:`scan_for_secrets` looks for, for one set of known credentials: their
    spellings (longest first), their bytes, and the pattern of both; built once per set
    (the recorder scans every exchange with the same few)."""
    known = tuple(
        sorted(
            {
                spelling
                for s in plain
                for spelling in spellings_of(s)
                if len(spelling) >= MIN_SECRET_LENGTH
            },
            key=len,
            reverse=True,
        )
    )
    known_bytes = tuple(s.encode("utf-8") for s in plain)
    return known, known_bytes, KnownSpellings(plain, known) if known else None


def scan_for_secrets(
    obj: object, *, known_secrets: Collection[str] = (), text: str | None = None
) -> list[SecretHit]:
    """Every place in ``obj`` where a credential-shaped or known credential value appears.

    Looks at every string and key; at base64 bytes fields decoded; and at each event
    stream's strings joined across events (a credential split over two events is found,
    reported at ``...events[*].data.PATH``).

    Args:
        obj: a pydantic model (a cassette, an exchange) or any JSON-like value.
        known_secrets: values sent as credentials during this recording.
        text: for an exchange, its JSON as pydantic-core writes it (its journal line,
            ``exclude_none`` or not), looked at instead of writing the exchange again.

    Returns:
        One hit per place and kind, in document order. Values are never included.
    """
    known, known_bytes, known_pattern = _scan_spellings(
        frozenset(s for s in known_secrets if len(s) >= MIN_SECRET_LENGTH)
    )
    document, streams, written = _glanced_texts(obj, text)
    with contextlib.suppress(ValueError):  # a lone surrogate: the walk reads it
        if written is not None and _clear_at_a_glance(
            written, [joined for _, joined in streams], known, known_bytes
        ):
            return []
    if document is None:
        document = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
    hits: dict[tuple[str, str], SecretHit] = {}

    def visit(path: JsonPath, text: str, _is_key: bool) -> str:
        for kind in _kinds(text, path, known_pattern, known_bytes, known):
            # A secret can sit in an object key, so the segments are masked too.
            shown = [mask(part, known) if isinstance(part, str) else part for part in path]
            where = render_json_path(shown) or "(top level)"
            hits.setdefault((where, kind), SecretHit(where=where, kind=kind))
        return text

    map_strings(document, visit)
    for path, joined_text in streams:
        visit(path, joined_text, False)
    return list(hits.values())


def _glanced_texts(
    obj: object, text: str | None
) -> tuple[Any, list[tuple[JsonPath, str]], str | None]:
    """What :func:`scan_for_secrets` glances at: the document (None for an exchange, made
    only if the glance fails), its streams joined, and its JSON text (None when it cannot
    be written: a lone surrogate, a value json cannot write; the walk reads it).

    The recorder scans every exchange: its streams are read off its events and its text
    comes straight from pydantic (or is the line it was read from), so most are clear
    without a JSON copy.
    """
    if isinstance(obj, Exchange):
        with contextlib.suppress(ValueError):
            text = obj.model_dump_json() if text is None else text
        return None, _exchange_streams(obj), text
    document = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
    try:
        written: str | None = json.dumps(document, ensure_ascii=False)
    except (TypeError, ValueError):
        written = None
    return document, list(stream_texts(document)), written


_COMMON_CHARACTERS = " etaoinshrdlcumwfgypbvkjxqz"
"""Lower-case letters and the space, commonest first in text (English letter frequency);
any other character (capitals, digits, punctuation) is rarer than all of them."""


def _anchor(literal: str) -> int:
    """Where the rarest character of ``literal`` stands (the first, of equally rare ones)."""

    def commonness(at: int) -> tuple[int, int]:
        rank = _COMMON_CHARACTERS.find(literal[at])
        return (len(_COMMON_CHARACTERS) - rank if rank >= 0 else 0, at)

    return min(range(len(literal)), key=commonness)


def _anchored(literals: Sequence[str]) -> str:
    """One pattern matching where one of ``literals`` (none empty) occurs, each entered at
    its rarest character (:func:`_anchor`): the part before it is checked with a
    lookbehind once that character is found, the part after it matched on.

    Python's engine skips, in C, every position whose character starts no alternative, and
    tries the alternatives at the rest; a pattern starting at each literal's first
    character would stop at nearly every ``e``, ``s`` or ``g`` of a text, this one mostly
    at capitals, digits and punctuation. A match says only that some literal occurs (its
    span begins at the anchor).
    """
    groups: dict[str, list[str]] = {}
    for literal in literals:
        at = _anchor(literal)
        before, rarest, after = literal[:at], literal[at], literal[at + 1 :]
        behind = f"(?<={re.escape(before + rarest)})" if before else ""
        groups.setdefault(rarest, []).append(behind + re.escape(after))
    parts = []
    for rarest, rests in sorted(groups.items()):
        if "" in rests:  # the character alone is a literal: nothing more to check
            parts.append(re.escape(rarest))
            continue
        rests = sorted(set(rests))
        tail = rests[0] if len(rests) == 1 else "(?:" + "|".join(rests) + ")"
        parts.append(re.escape(rarest) + tail)
    return "|".join(parts)


_GLANCE_HINT = re.compile(_anchored(TEXT_HINTS))
"""Any of the table's :data:`~cassettes._secret_shapes.TEXT_HINTS`, in one pass, stopping
only at their rarest characters (:func:`_anchored`): about twice as fast on recorded
traffic as the same literals alternated from their first characters."""
_INLINE_DATA_VALUE = re.compile(
    r'("(?:inlineData|inline_data)":\s*\{\s*(?:"(?:mimeType|mime_type)":\s*"[^"\\]*",\s*)?'
    r'"data":\s*)"[A-Za-z0-9+/=_-]*"'
)
"""Inline data's base64 value in JSON text, its ``data`` first in its object or after the
mime type (elsewhere the glance reads it as text, and the scan looks string by string)."""


def exchange_clear_at_a_glance(exchange: Exchange, *, read_from: bytes | None = None) -> bool:
    """Whether ``exchange`` certainly holds no credential-shaped value, judged from its JSON
    text (no Python copy of the exchange is made).

    ``read_from`` is the JSON the exchange was read from (its journal line); it is the text
    looked at when it spells every string as written (no ``\\u`` or ``\\/`` escape),
    else pydantic-core writes the exchange again. True means :func:`scan_for_secrets`
    would find nothing; False means "scan it".
    """
    streams = _exchange_streams(exchange)
    text = journal_text(read_from)
    if text is None:
        try:
            text = exchange.model_dump_json()
        except ValueError:  # a lone surrogate pydantic-core cannot write: the scan reads it
            return False
    return _clear_at_a_glance(text, [joined for _, joined in streams], (), [])


def journal_text(line: bytes | None) -> str | None:
    """The JSON line an exchange was read from (its journal line), as the text the glance
    may look at in place of the exchange written again: None when there is none, when it
    spells a string otherwise than as written (a ``\\u`` or ``\\/`` escape), or when it
    is not UTF-8."""
    if line is None or b"\\u" in line or b"\\/" in line:
        return None
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _exchange_streams(exchange: Exchange) -> list[tuple[JsonPath, str]]:
    """:func:`~cassettes._secret_walk.stream_texts` of the exchange, read off its response
    body's events (no JSON copy of the body is made)."""
    body = exchange.response.body
    if not isinstance(body, SseBody):
        return []
    events = [{"data": event.data, "lines": event.lines} for event in body.events]
    return [
        (("response", "body", *path), joined)
        for path, joined in stream_texts({"kind": "sse", "events": events})
    ]


def text_clear_at_a_glance(text: str) -> bool:
    """Whether the JSON document ``text`` certainly holds no credential-shaped value, for a
    document with no recorded event stream (an EvalSet): True means :func:`scan_for_secrets`
    of it would find nothing; False means "scan it"."""
    return _clear_at_a_glance(text, [], (), [])


def _clear_at_a_glance(
    text: str, joined: list[str], known: Sequence[str], known_bytes: Sequence[bytes]
) -> bool:
    """Whether a document certainly holds no credential, judged from its JSON ``text``
    (``json.dumps`` or pydantic's, which escape the same characters) and its ``joined``
    stream texts.

    Every hit needs, inside one string or key, a shape's hint literal, a ``?name=value``
    parameter or a known spelling; each of those is spelled in the JSON text as it is in
    the string (none holds a character JSON escapes), so if the text holds none, no string
    does. Joined stream texts are not in the text and are looked at one by one; base64
    bytes fields, where known credentials are looked for decoded, are decoded from the text
    (:func:`_bytes_values_blanked`). False means "scan string by string".

    A long text is looked at in pieces (:func:`_pieces`): an agent's request repeats every
    earlier turn of its conversation, so a piece seen clear before, with the same known
    credentials, is not looked at again (:func:`_piece_clear`).
    """
    if known and _escaped_in_json(tuple(known)):
        return False
    inline = "inlineData" in text or "inline_data" in text
    if len(text) >= _PIECE_MIN:  # the long pieces first, then the short ones together
        spellings, secret_bytes = tuple(known), tuple(known_bytes)
        rest: list[str] = []
        for piece in _pieces(text):
            if len(piece) < _PIECE_MIN:
                rest.append(piece)
            elif not _piece_clear(piece, spellings, secret_bytes, inline):
                return False
        text = "".join(rest)
    return _text_clear(text, joined, known, known_bytes, inline=inline)


def _text_clear(
    text: str,
    joined: list[str],
    known: Sequence[str],
    known_bytes: Sequence[bytes],
    *,
    inline: bool,
) -> bool:
    """:func:`_clear_at_a_glance` of one text (or piece of one), whose document holds
    inline data when ``inline`` says so.

    What needs no table comes first (a known spelling as is, base64 bytes values blanked);
    then the table is asked, in one verdict, for a whole API key in the text as written
    (it counts in a bytes value too; a bare ``AIza`` is a hint), a known credential
    percent-encoded, and a hint, URL password or secret parameter outside bytes values."""
    if any(spelling in candidate for candidate in (text, *joined) for spelling in known):
        return False
    # Base64 bytes spell hint literals by chance; only a whole API key counts there. No
    # known spelling is in the text, so only a value spelled oddly needs decoding.
    blanked = _bytes_values_blanked(text, known_bytes, spellings_absent=True, inline=inline)
    if blanked is None:
        return False
    if "inlineData" in blanked or "inline_data" in blanked:
        blanked = _INLINE_DATA_VALUE.sub(r'\1""', blanked)
    return not (
        ("AIza" in text and found_at(text, ("AIza",), API_KEY))
        or (known and any(percent_decoded_holds(c, known) for c in (text, *joined)))
        or any(
            _GLANCE_HINT.search(c) or has_url_password(c) or has_secret_param(c)
            for c in (blanked, *joined)
        )
    )


_PIECE_START = re.compile(r'\{"(?:parts|role|functionDeclarations|status)":')
"""Where a piece of a JSON text starts: an object whose first key is a conversation
turn's (Gemini's ``parts``, a chat message's ``role``), a tool list's or a response's.

A ``{"`` followed by a letter stands outside every string: inside one, a quote is
escaped, so the quote after a ``{`` would close the string, and a letter never follows
a closing quote in JSON. So every string, and every key with its value, lies whole in
one piece. (No piece starts inside an inline data object: its ``data`` is found by the
pattern of its whole object.)"""
_PIECE_MIN = 512
"""A piece is this long at least, but for the first and the last; shorter ones are looked
at together, not remembered (the look costs less than remembering)."""
_PIECE_KEY_CHARS = 4096
"""A longer piece is remembered by a digest of its text, not the text itself (it bounds
what the memo holds: at most :data:`_PIECES` keys of this size)."""
_PIECES = 2048
"""How many pieces' verdicts are remembered (least recently used first out)."""


def _pieces(text: str) -> list[str]:
    """``text`` cut where :data:`_PIECE_START` matches, the cuts after the first grouped
    into pieces of :data:`_PIECE_MIN` characters or more (the last may be shorter): a
    request that repeats the turns of the one before it is cut the same way up to its
    last turn."""
    starts = [match.start() for match in _PIECE_START.finditer(text)]
    if not starts:
        return [text]
    pieces = [text[: starts[0]]]
    begin = starts[0]
    for at in starts[1:]:
        if at - begin >= _PIECE_MIN:
            pieces.append(text[begin:at])
            begin = at
    pieces.append(text[begin:])
    return pieces


def _piece_key(piece: str) -> str | bytes:
    """What a piece is remembered by: its text, or for a long one a 16-byte digest."""
    if len(piece) <= _PIECE_KEY_CHARS:
        return piece
    return hashlib.blake2b(piece.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_seen_clear: OrderedDict[tuple[object, ...], None] = OrderedDict()
"""Pieces seen clear, by :func:`_piece_key`, the known credentials' spellings and bytes,
and whether their document holds inline data; least recently used first."""
_seen_lock = threading.Lock()


def _piece_clear(
    piece: str, known: tuple[str, ...], known_bytes: tuple[bytes, ...], inline: bool
) -> bool:
    """:func:`_text_clear` of one piece, remembered when clear. The memo is keyed by the
    known credentials too: a piece seen clear is looked at again once one is learnt."""
    key = (_piece_key(piece), known, known_bytes, inline)
    with _seen_lock:
        if key in _seen_clear:
            _seen_clear.move_to_end(key)
            return True
    if not _text_clear(piece, [], known, known_bytes, inline=inline):
        return False
    with _seen_lock:
        _seen_clear[key] = None
        if len(_seen_clear) > _PIECES:
            _seen_clear.popitem(last=False)
    return True


_BASE64_STRING = re.compile(r'"[A-Za-z0-9+/=_-]*"')


def _bytes_values(text: str, keys: Collection[str]) -> Iterator[tuple[int, int, int, str]]:
    """Each value of one of ``keys`` in the JSON ``text``: where the key starts, where its
    value starts and ends (the end is -1 for a value that is not a base64 string, the start
    is where something else stands), and the key."""
    for key in keys:
        marker = f'"{key}":'
        at = text.find(marker)
        while at >= 0:
            start = at + len(marker)
            if text.startswith(" ", start):  # json.dumps puts a space there, pydantic not
                start += 1
            value = _BASE64_STRING.match(text, start)
            yield at, start, -1 if value is None else value.end(), key
            at = text.find(marker, start)


@functools.lru_cache(maxsize=64)
def _escaped_in_json(spellings: tuple[str, ...]) -> bool:
    """Whether one of ``spellings`` holds a character JSON text spells differently."""
    return any(JSON_ESCAPED.search(spelling) for spelling in spellings)


def _spelled_oddly(value: str) -> bool:
    """Whether the base64 ``value`` (of ``[A-Za-z0-9+/=_-]``) may decode to bytes whose
    known credentials none of their base64 spellings shows in it: a ``=`` before its
    end (the decoder skips a stray one, shifting the groups after it) or both alphabets
    at once (decoded as one, spelled as neither).

    A value of one alphabet with ``=`` only at its end decodes group by group: a credential
    in its bytes has every whole 3-byte group of it spelled as
    :func:`~cassettes._secret_shapes.spellings_of` spells it at that alignment."""
    if "=" in value.rstrip("="):
        return True
    return ("-" in value or "_" in value) and ("+" in value or "/" in value)


def _bytes_values_blanked(
    text: str,
    known_bytes: Sequence[bytes],
    *,
    spellings_absent: bool = False,
    inline: bool | None = None,
) -> str | None:
    """The JSON ``text`` with each base64 value of a :data:`BYTES_KEYS` key made ``""``
    (leftmost first, as ``re.sub`` of ``"KEY": ?"[A-Za-z0-9+/=_-]*"`` gives it), or None
    when a bytes field decodes to a known credential: one pass finds the values for both.

    With ``known_bytes``, every value of a bytes key (and of ``data`` when the text has
    inline data) is decoded as the full scan decodes it; a string value that is not plain
    base64 is left to the full scan (None). ``spellings_absent`` says the text holds no
    base64 spelling of the credentials (:func:`~cassettes._secret_shapes.spellings_of`,
    8 characters or more): then only a value :func:`_spelled_oddly` can decode to one, and
    only those are decoded. ``inline`` says whether the document holds inline data (a
    piece of one may not show its key: :func:`_pieces`). A key's spelling followed by
    ``":"`` matches every real key (a quote inside a string is escaped), and perhaps the end
    of some other key, which only costs a decode.
    """
    keys: Collection[str] = BYTES_KEYS
    if inline is None:
        inline = "inlineData" in text or "inline_data" in text
    if known_bytes and inline:
        keys = BYTES_KEYS | {"data"}
    found: list[tuple[int, int, int]] = []
    for at, start, end, key in _bytes_values(text, keys):
        if end < 0:
            if known_bytes and text.startswith('"', start):
                return None  # a string that is not plain base64: the full scan decodes it
            continue
        if known_bytes and not (spellings_absent and not _spelled_oddly(text[start + 1 : end - 1])):
            raw = _decoded(text[start + 1 : end - 1])
            if raw is not None and any(secret in raw for secret in known_bytes):
                return None
        if key in BYTES_KEYS:
            found.append((at, start, end))
    if not found:
        return text
    parts: list[str] = []
    end = 0
    for at, start, stop in sorted(found):
        if at >= end:  # leftmost first, none overlapping, as re.sub takes them
            parts += (text[end:start], '""')
            end = stop
    parts.append(text[end:])
    return "".join(parts)


def _suggest_fix(where: str) -> str:
    """Turn a hit's place into the redaction rule that would remove it."""
    match = re.match(r"^(?:exchanges\[\d+\]\.)?(request|response)\.(headers|body)(.*)$", where)
    if match and match.group(2) == "headers":
        header = match.group(3).lstrip(".").strip("[]'\"")
        return f"add a redaction rule: --redact-header {header}"
    if match:
        rest = re.sub(r"^\.(value|events\[(?:\d+|\*)\]\.data)", "", match.group(3))
        rest = re.sub(r"\[\d+\]", "[*]", rest).lstrip(".")
        if rest:
            return f"add a redaction rule: --redact-path {rest}"
    return "add a redaction rule (--redact-path or --redact-header) for that place"


def ensure_no_secrets(
    obj: object, *, path: str | Path, known_secrets: Collection[str] = (), text: str | None = None
) -> None:
    """Refuse to write ``obj`` to ``path`` if it still contains a credential (``text``: as
    :func:`scan_for_secrets` takes it).

    Raises:
        SecretFound: names the file, the first place and kind of the value, how many
            other places were found, and the redaction rule that would fix it. The value
            itself is never part of the message.
    """
    hits = scan_for_secrets(obj, known_secrets=known_secrets, text=text)
    if not hits:
        return
    first = hits[0]
    more = (
        f" (and {len(hits) - 1} more place{'s' if len(hits) > 2 else ''})" if len(hits) > 1 else ""
    )
    raise SecretFound(
        f"a value that looks like a {first.kind} would be written{more}; nothing was written",
        path=path,
        where=first.where,
        fix=f"Remove it from the recording: {_suggest_fix(first.where)}, then record again",
    )
