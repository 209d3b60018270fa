"""A recorded JSON request as google-genai sends it, by digest: matching from the wire's bytes.

google-genai sends a request body as ``json.dumps(body)`` spells it (``", "`` and ``": "``
between items, every non-ASCII character escaped), and an agent replayed sends its
recorded requests byte for byte. A cassette's side index (``cassettes._side_index``)
keeps, per exchange, the digest of its JSON request body spelled that way
(:func:`recorded_wire_digest`), read from the cassette's own lines: the body's value, as
rec writes it with indent 2 (``json.dumps(value, indent=2, ensure_ascii=False)``, see
``cassettes._json_text``), is that spelling with line breaks and indents between its
items, and non-ASCII characters unescaped. :class:`cassettes.MatchIndex` hashes a request's
bytes (:func:`wire_digest`) and finds the recordings it equals without parsing it.

A digest stands for the recording only where a request holding exactly those bytes is read
by the matcher as that recording's value: a JSON object or array (a scalar body's kind
depends on the request's content type) that orjson reads as ``json`` does and that nests
no deeper than a stored body may (``cassettes._bodies.body_parts``). The bytes a digest is
taken of are the value's own lines, so a body that redaction masked is digested masked,
as it is matched. Anything else has no digest and is matched by its parsed body.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import re

from cassettes._bucket_keys import json_value_span
from cassettes._canonical_json import shape_of, strict_loads
from cassettes._exact_json import MAX_JSON_DEPTH, nests_too_deep

__all__ = ["DIGEST_SIZE", "NO_DIGEST", "recorded_wire_digest", "wire_digest"]

DIGEST_SIZE = 16
"""Bytes of a wire digest (the first 16 of a sha256)."""
NO_DIGEST = bytes(DIGEST_SIZE)
"""The digest column's entry for an exchange without one."""

_ITEM_BREAK = re.compile(rb",\n *")
"""A comma ending a line of an indented document: ``", "`` in ``json.dumps``' spelling
(a JSON string holds no raw line break, so every line break is between items, and each
line starts with its indent: spaces, then a value, a key or a bracket)."""
_ESCAPED = re.compile(r"[^\x00-\x7e]+")
"""What ``json.dumps`` escapes beyond what rec writes escaped: DEL and every non-ASCII
character."""
_ESCAPE_ASCII = json.encoder.encode_basestring_ascii


def wire_digest(data: bytes) -> bytes:
    """The digest of a request body's bytes (compared with :func:`recorded_wire_digest`)."""
    return hashlib.sha256(data).digest()[:DIGEST_SIZE]


def wire_spelling(indented: bytes) -> bytes:
    """``json.dumps(value)`` of the value that ``json.dumps(value, indent=N,
    ensure_ascii=False)`` wrote as ``indented`` (at any depth of a larger document)."""
    # Every other line break (after an opening or before a closing bracket) goes with its
    # indent: the lines joined, each stripped of its leading spaces (a C call a line).
    spelled = b"".join(map(bytes.lstrip, _ITEM_BREAK.sub(b", ", indented).split(b"\n")))
    if spelled.isascii() and spelled.find(b"\x7f") < 0:
        return spelled
    text = spelled.decode("utf-8")
    return _ESCAPED.sub(lambda run: _ESCAPE_ASCII(run.group())[1:-1], text).encode("ascii")


def recorded_wire_digest(data: bytes | mmap.mmap, start: int, end: int) -> bytes:
    """The :func:`wire_digest` of the JSON request body of the exchange at
    ``data[start:end]`` (in the layout rec writes) as google-genai would send it;
    :data:`NO_DIGEST` where no request's bytes can stand for it (see the module
    docstring)."""
    try:
        found = json_value_span(data, start, end)
    except (LookupError, ValueError, RecursionError):
        return NO_DIGEST
    if found is None:
        return NO_DIGEST
    spelled = wire_spelling(data[found[2] : found[3]])
    if spelled[:1] + spelled[-1:] not in (b"{}", b"[]"):
        return NO_DIGEST  # not an object or array (or not the value alone)
    plain, opened = shape_of(spelled)
    # orjson reads the JSON rec wrote as ``json`` does but for these (each searched for
    # anywhere: a string holding one only costs the body its digest).
    if not plain or spelled.find(b"NaN") >= 0 or spelled.find(b"Infinity") >= 0:
        return NO_DIGEST
    if opened > MAX_JSON_DEPTH:  # it may nest too deep: read it as matching would
        read, value, opened = strict_loads(spelled)
        if not read or nests_too_deep(spelled, value, opened=opened):
            return NO_DIGEST
    return wire_digest(spelled)
