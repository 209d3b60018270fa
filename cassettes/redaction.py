"""Keep credentials out of cassettes, logs and error messages.

Three layers, applied in this order by the recorder:

1. :func:`redact_exchange` drops credential headers and query parameters, blanks the
   JSON paths the user declared, and replaces every occurrence of a value that was sent
   as a credential in this recording (:func:`credentials_in`) wherever it appears.
2. :func:`ensure_no_secrets` scans what is about to be written and refuses
   (:class:`~cassettes.errors.SecretFound`) if anything still looks like a credential,
   naming the place but never the value.
3. :func:`mask` cleans any text that reaches a log line or an error message.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, field_validator

from ._json_path import parse_json_path, render_json_path, replace_at
from .cassette import BinaryBody, Body, Exchange, JsonBody, SseBody, SseEvent, TextBody
from .errors import SecretFound

__all__ = [
    "DEFAULT_REDACTED_HEADERS",
    "DEFAULT_REDACTED_QUERY_PARAMS",
    "REDACTED",
    "RedactionRules",
    "SecretHit",
    "credentials_in",
    "ensure_no_secrets",
    "mask",
    "redact_exchange",
    "scan_for_secrets",
]

REDACTED = "<redacted>"
"""What a removed value is replaced with."""

DEFAULT_REDACTED_HEADERS = frozenset(
    {
        "x-goog-api-key",
        "authorization",
        "cookie",
        "set-cookie",
        "x-goog-user-project",
        "proxy-authorization",
    }
)
"""Header names that are always dropped (compared case-insensitively)."""

DEFAULT_REDACTED_QUERY_PARAMS = frozenset({"key"})
"""Query parameters that are always dropped."""

_MIN_SECRET_LENGTH = 8
"""Shorter credential values are not searched for in bodies: they would match ordinary text."""

# A Google API key is 39 characters. Long base64 blobs (thoughtSignature, inline data) can
# contain "AIza" by chance, so the character before must not be a base64 character and
# the one after must not continue the key.
_API_KEY = re.compile(r"(?<![0-9A-Za-z+/_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")
_OAUTH_TOKEN = re.compile(r"(?<![0-9A-Za-z+/_-])ya29\.[0-9A-Za-z_\-.]+")
# A bearer credential is token68 (RFC 7235). Requiring 16+ characters keeps prose such as
# "Bearer tokens expire" from counting while catching every real token.
_BEARER = re.compile(r"Bearer\s+[0-9A-Za-z._~+/-]{16,}=*")
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Google API key", _API_KEY),
    ("OAuth access token", _OAUTH_TOKEN),
    ("bearer token", _BEARER),
)


class RedactionRules(BaseModel):
    """What to remove from each exchange on top of the defaults.

    Example::

        RedactionRules(headers={"x-tenant-token"}, json_paths=("contents[*].parts[*].text",))
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    headers: frozenset[str] = frozenset()
    """Extra header names to drop (the defaults are always dropped)."""
    query_params: frozenset[str] = frozenset()
    """Extra query parameter names to drop (``key`` is always dropped)."""
    json_paths: tuple[str, ...] = ()
    """Dotted paths (``[*]``/``[n]`` for list items) into request and response JSON bodies,
    and into each SSE event's payload, whose values become ``"<redacted>"``."""

    @field_validator("headers")
    @classmethod
    def _lower_headers(cls, value: frozenset[str]) -> frozenset[str]:
        return frozenset(name.lower() for name in value)

    @field_validator("json_paths")
    @classmethod
    def _valid_paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for path in value:
            parse_json_path(path)
        return value

    @property
    def all_headers(self) -> frozenset[str]:
        """Defaults plus extras, lower-case."""
        return DEFAULT_REDACTED_HEADERS | self.headers

    @property
    def all_query_params(self) -> frozenset[str]:
        """Defaults plus extras."""
        return DEFAULT_REDACTED_QUERY_PARAMS | self.query_params


def credentials_in(headers: Mapping[str, str], url: str) -> set[str]:
    """The credential values a request carries, to be remembered for this recording.

    Covers the API key (header and ``key`` query parameter), bearer and other
    ``Authorization`` credentials, and cookie values. Values shorter than 8 characters
    are left out: replacing them everywhere would mangle ordinary text.
    """
    found: set[str] = set()
    for name, value in headers.items():
        lowered = name.lower()
        if lowered in ("x-goog-api-key",):
            found.add(value.strip())
        elif lowered in ("authorization", "proxy-authorization"):
            scheme, _, credential = value.strip().partition(" ")
            found.add(credential.strip() if credential else scheme)
        elif lowered == "cookie":
            for pair in value.split(";"):
                found.add(pair.partition("=")[2].strip())
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        if name in DEFAULT_REDACTED_QUERY_PARAMS:
            found.add(value)
    return {value for value in found if len(value) >= _MIN_SECRET_LENGTH}


# --- redaction -------------------------------------------------------------------------


class _Replacer:
    """Replace known secrets (and their URL-encoded forms) in strings, longest first."""

    def __init__(self, secrets: Collection[str], replacement: str = REDACTED) -> None:
        variants = {s for s in secrets if len(s) >= _MIN_SECRET_LENGTH}
        variants |= {quote(s, safe="") for s in variants}
        ordered = sorted(variants, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._replacement = replacement

    def text(self, value: str) -> str:
        if self._pattern is None:
            return value
        return self._pattern.sub(self._replacement, value)

    def json(self, value: Any) -> Any:
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self.json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v) for v in value]
        return value

    def binary(self, encoded: str) -> str:
        if self._pattern is None:
            return encoded
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return encoded
        pattern = re.compile(self._pattern.pattern.encode("utf-8"))
        cleaned = pattern.sub(self._replacement.encode("utf-8"), raw)
        return encoded if cleaned == raw else base64.b64encode(cleaned).decode("ascii")


def _redact_json(value: Any, paths: tuple[str, ...], replacer: _Replacer) -> Any:
    for path in paths:
        value = replace_at(value, parse_json_path(path), REDACTED)
    return replacer.json(value)


def _redact_body(body: Body | None, rules: RedactionRules, replacer: _Replacer) -> Body | None:
    if body is None:
        return None
    if isinstance(body, JsonBody):
        return JsonBody(value=_redact_json(body.value, rules.json_paths, replacer))
    if isinstance(body, TextBody):
        return TextBody(text=replacer.text(body.text))
    if isinstance(body, BinaryBody):
        return body.model_copy(update={"base64": replacer.binary(body.base64)})
    if isinstance(body, SseBody):
        events = [
            SseEvent(
                offset_ms=event.offset_ms,
                data=_redact_json(event.data, rules.json_paths, replacer)
                if event.lines is None
                else None,
                lines=[replacer.text(line) for line in event.lines]
                if event.lines is not None
                else None,
            )
            for event in body.events
        ]
        tail = replacer.text(body.tail) if body.tail is not None else None
        return body.model_copy(update={"events": events, "tail": tail})
    raise AssertionError(f"unknown body kind {body!r}")


def _redact_url(url: str, params: frozenset[str], replacer: _Replacer) -> str:
    parts = urlsplit(url)
    if parts.query:
        query = parse_qsl(parts.query, keep_blank_values=True)
        kept = [(name, value) for name, value in query if name not in params]
        if len(kept) != len(query):
            parts = parts._replace(query=urlencode(kept))
    return replacer.text(urlunsplit(parts))


def _redact_headers(
    headers: Mapping[str, str], names: frozenset[str], replacer: _Replacer
) -> dict[str, str]:
    return {
        name: replacer.text(value) for name, value in headers.items() if name.lower() not in names
    }


def redact_exchange(
    exchange: Exchange, rules: RedactionRules, *, known_secrets: Collection[str] = ()
) -> Exchange:
    """A copy of ``exchange`` that is safe to write.

    Drops the credential headers (request and response) and query parameters, replaces
    the values at ``rules.json_paths`` in JSON bodies and SSE payloads, and replaces
    every occurrence of a known secret anywhere (URL, header values, any string in any
    body, SSE raw lines and tails, binary bodies) with ``"<redacted>"``.
    """
    replacer = _Replacer(known_secrets)
    request = exchange.request.model_copy(
        update={
            "url": _redact_url(exchange.request.url, rules.all_query_params, replacer),
            "headers": _redact_headers(exchange.request.headers, rules.all_headers, replacer),
            "body": _redact_body(exchange.request.body, rules, replacer),
        }
    )
    response = exchange.response.model_copy(
        update={
            "headers": _redact_headers(exchange.response.headers, rules.all_headers, replacer),
            "body": _redact_body(exchange.response.body, rules, replacer),
        }
    )
    client = {key: replacer.text(value) for key, value in exchange.client.items()}
    return exchange.model_copy(update={"request": request, "response": response, "client": client})


# --- scanning --------------------------------------------------------------------------


@dataclass(frozen=True)
class SecretHit:
    """A place where a credential-shaped value was found. Never holds the value."""

    where: str
    """JSON path of the string, e.g. ``exchanges[3].response.body.events[2].data.text``."""
    kind: str
    """``"Google API key"``, ``"OAuth access token"``, ``"bearer token"`` or
    ``"known credential"``."""

    def __str__(self) -> str:
        return f"{self.kind} at {self.where}"


def _strings(value: Any, path: tuple[object, ...]) -> Iterator[tuple[tuple[object, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield (*path, key), key
            yield from _strings(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


_LITERALS = ("AIza", "ya29.", "Bearer")
"""What each of :data:`_PATTERNS` matches first, in order."""
_ANY_PATTERN = re.compile("|".join(f"(?:{pattern.pattern})" for _, pattern in _PATTERNS))
_JOIN = "\x00"
"""Joins every string of a document for one search: no pattern's characters, lookarounds
or ``\\s`` match it, so each string's edges read as a string's start and end."""


def _may_hold_secrets(document: object, known: Collection[str]) -> bool:
    """Whether any string of ``document`` may hold a secret: one search over all of its
    strings joined, instead of every pattern over every string with its path.

    Never False where :func:`scan_for_secrets` would find a hit (a match inside one string
    is a match in the joined text); a rare True with no hit (a known value spanning two
    strings) only costs the full scan.
    """
    texts: list[str] = []
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            texts.extend(key for key in value if isinstance(key, str))
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    joined = _JOIN.join(texts)
    if any(secret in joined for secret in known):
        return True
    # Each pattern starts with its literal: a substring test (fast) rules most text out.
    if not any(literal in joined for literal in _LITERALS):
        return False
    return _ANY_PATTERN.search(joined) is not None


def scan_for_secrets(obj: object, *, known_secrets: Collection[str] = ()) -> list[SecretHit]:
    """Every place in ``obj`` where a credential-shaped or known credential value appears.

    Args:
        obj: a pydantic model (a cassette, an exchange) or any JSON-like value.
        known_secrets: values sent as credentials during this recording.

    Returns:
        One hit per place and kind, in document order. Values are never included.
    """
    document = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
    known = sorted(
        {s for s in known_secrets if len(s) >= _MIN_SECRET_LENGTH}, key=len, reverse=True
    )
    if not _may_hold_secrets(document, known):
        return []
    hits: list[SecretHit] = []
    seen: set[tuple[str, str]] = set()
    for path, text in _strings(document, ()):
        kinds = [kind for kind, pattern in _PATTERNS if pattern.search(text)]
        if any(secret in text for secret in known):
            kinds.append("known credential")
        for kind in kinds:
            # A secret can sit in an object key, so the segments are masked too.
            shown = [mask(part, known) if isinstance(part, str) else part for part in path]
            where = render_json_path(shown) or "(top level)"
            if (where, kind) not in seen:
                seen.add((where, kind))
                hits.append(SecretHit(where=where, kind=kind))
    return hits


def _suggest_fix(where: str) -> str:
    """Turn a hit's place into the redaction rule that would remove it."""
    match = re.match(r"^(?:exchanges\[\d+\]\.)?(request|response)\.(headers|body)(.*)$", where)
    if match and match.group(2) == "headers":
        header = match.group(3).lstrip(".").strip("[]'\"")
        return f"add a redaction rule: --redact-header {header}"
    if match:
        rest = re.sub(r"^\.(value|events\[\d+\]\.data)", "", match.group(3))
        rest = re.sub(r"\[\d+\]", "[*]", rest).lstrip(".")
        if rest:
            return f"add a redaction rule: --redact-path {rest}"
    return "add a redaction rule (--redact-path or --redact-header) for that place"


def ensure_no_secrets(
    obj: object, *, path: str | Path, known_secrets: Collection[str] = ()
) -> None:
    """Refuse to write ``obj`` to ``path`` if it still contains a credential.

    Raises:
        SecretFound: names the file, the first place and kind of the value, how many
            other places were found, and the redaction rule that would fix it. The value
            itself is never part of the message.
    """
    hits = scan_for_secrets(obj, known_secrets=known_secrets)
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


# --- masking ---------------------------------------------------------------------------


def _marker(secret: str) -> str:
    if secret.startswith("AIza"):
        return "AIza…(redacted)"
    if secret.startswith("ya29."):
        return "ya29.…(redacted)"
    return "…(redacted)"


def mask(text: str, secrets: Collection[str] = ()) -> str:
    """``text`` safe for a log line or an error message.

    Known secrets and any key-, token- or bearer-shaped value are replaced by markers such
    as ``AIza…(redacted)`` that say what was there without revealing it.
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, _marker(secret))
        encoded = quote(secret, safe="")
        if encoded != secret and encoded in text:
            text = text.replace(encoded, _marker(secret))
    text = _API_KEY.sub("AIza…(redacted)", text)
    text = _OAUTH_TOKEN.sub("ya29.…(redacted)", text)
    return _BEARER.sub("Bearer …(redacted)", text)
