"""Keep credentials out of cassettes, logs and error messages.

Three layers, applied in this order by the recorder:

1. :func:`redact_exchange` drops credential headers and query parameters, blanks the
   JSON paths the user declared, and replaces every occurrence of a value that was sent
   as a credential in this recording (:func:`credentials_in`) wherever it appears.
2. :func:`ensure_no_secrets` scans what is about to be written and refuses
   (:class:`~cassettes._errors.SecretFound`) if anything still looks like a credential,
   naming the place but never the value.
3. :func:`~cassettes._secret_shapes.mask` cleans any text that reaches a log line, a report
   or an error message (the shapes and names it and the scan look for live there too).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import itertools
import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, field_validator

from cassettes._cassette import BinaryBody, Body, Exchange, JsonBody, SseBody, SseEvent, TextBody
from cassettes._errors import SecretFound
from cassettes._exact_json import nests_too_deep
from cassettes._json_path import WILDCARD, parse_json_path, render_json_path, replace_at
from cassettes._live import LiveJournalLine
from cassettes._secret_shapes import (
    _API_KEY,
    _HINT_LITERALS,
    _KIND,
    _SECRET_PARAM,
    _SHAPE,
    _SHAPES,
    MIN_SECRET_LENGTH,
    KnownSpellings,
    _encodings,
    _is_value,
    is_secret_name,
    mask,
    percent_decoded_holds,
    remember_credentials,
    shape_matches,
    url_credentials,
    without_credentials,
)

__all__ = [
    "DEFAULT_REDACTED_HEADERS",
    "DEFAULT_REDACTED_QUERY_PARAMS",
    "REDACTED",
    "RedactionRules",
    "SecretHit",
    "credentials_in",
    "ensure_no_secrets",
    "exchange_clear_at_a_glance",
    "redact_exchange",
    "redact_live_line",
    "redacted_with_text",
    "scan_for_secrets",
    "text_clear_at_a_glance",
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

_BYTES_KEYS = frozenset({"thoughtSignature", "thought_signature", "base64"})
"""Keys whose string values are base64 bytes: scanned decoded for known credentials."""
_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')
"""The characters JSON text spells differently than the string holding them."""


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
    """The credential values a request carries, registered as this process's known credentials.

    Covers every header and query parameter named like a credential (:func:`is_secret_name`:
    the API key, ``Authorization`` without its scheme, ``X-Api-Key``, ``apikey``,
    ``access_token``), cookie values and a password in the URL. Values shorter than 8
    characters are left out: replacing them everywhere would mangle ordinary text.
    """
    found: set[str] = set()
    for name, value in headers.items():
        lowered = name.lower()
        if lowered == "cookie":
            for pair in value.split(";"):
                found.add(pair.partition("=")[2].strip())
        elif lowered in ("authorization", "proxy-authorization"):
            scheme, _, credential = value.strip().partition(" ")
            found.add(credential.strip() if credential else scheme)
            if scheme.lower() == "basic" and credential:
                found |= _basic_credentials(credential.strip())
        elif is_secret_name(lowered) or lowered in DEFAULT_REDACTED_HEADERS:
            found.add(value.strip())
    parts = urlsplit(url)
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in DEFAULT_REDACTED_QUERY_PARAMS or is_secret_name(name):
            found.add(value)
    found |= url_credentials(url)
    found = {value for value in found if len(value) >= MIN_SECRET_LENGTH}
    remember_credentials(found)
    return found


def _basic_credentials(encoded: str) -> set[str]:
    """``user:password`` and the password of an HTTP Basic credential."""
    try:
        userinfo = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return set()
    return {userinfo, userinfo.partition(":")[2]}


# --- redaction -------------------------------------------------------------------------


class _Replacer:
    """Replace known secrets (and their URL-encoded forms) in strings, longest first."""

    def __init__(self, secrets: Collection[str], replacement: str = REDACTED) -> None:
        # As is and percent-encoded. A base64 spelling is refused by the scan, not
        # replaced: replacing it inside inline data would leave bytes that do not decode.
        plain = {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}
        variants = plain | {quote(s, safe="") for s in plain}
        self._pattern = _known_spellings(tuple(sorted(plain))) if plain else None
        self._replacement = replacement
        self._spelled_in_json = not any(_JSON_ESCAPED.search(v) for v in variants)
        """Whether every variant is spelled in JSON text as in a string (none holds a
        character JSON escapes), so a JSON text without one has no string with one."""

    @property
    def idle(self) -> bool:
        """Whether it replaces nothing (no secrets)."""
        return self._pattern is None

    def text(self, value: str) -> str:
        if self._pattern is None:
            return value
        return self._pattern.sub(self._replacement, value)

    def absent_from(self, exchange: Exchange) -> bool:
        """Whether no string of ``exchange`` holds a secret, judged from its JSON text (a
        binary body, whose bytes are searched decoded, is not judged so)."""
        if self._pattern is None:
            return True
        return self.absent_from_text(exchange, exchange.model_dump_json())

    def absent_from_text(self, exchange: Exchange, text: str) -> bool:
        """:meth:`absent_from`, judged from ``text``, the exchange's JSON as pydantic-core
        writes it (``exclude_none`` or not: only fields holding None are left out, and
        they hold no string)."""
        if self._pattern is None:
            return True
        if not self._spelled_in_json:
            return False
        if isinstance(exchange.request.body, BinaryBody) or isinstance(
            exchange.response.body, BinaryBody
        ):
            return False
        return not self._pattern.search(text)

    def json(self, value: Any) -> Any:
        if self._pattern is None:
            return value
        if isinstance(value, (dict, list)) and self._spelled_in_json:
            # One search of the JSON text rules out the walk for nearly every body.
            with contextlib.suppress(TypeError, ValueError):
                if not self._pattern.search(json.dumps(value, ensure_ascii=False)):
                    return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self._walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        return value

    def binary(self, encoded: str) -> str:
        if self._pattern is None:
            return encoded
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return encoded
        pattern = re.compile(self._pattern.literal.pattern.encode("utf-8"))
        cleaned = pattern.sub(self._replacement.encode("utf-8"), raw)
        return encoded if cleaned == raw else base64.b64encode(cleaned).decode("ascii")


_IDLE = _Replacer(())
"""The replacer of no secrets: it replaces nothing."""


@functools.lru_cache(maxsize=64)
def _known_spellings(secrets: tuple[str, ...]) -> KnownSpellings:
    """``secrets`` as is and with any of their characters percent-encoded (compiled once
    per set of secrets)."""
    return KnownSpellings(secrets, ())


def _redact_json(value: Any, paths: tuple[str, ...], replacer: _Replacer) -> Any:
    for path in paths:
        value = replace_at(value, parse_json_path(path), REDACTED)
    return replacer.json(value)


def _redact_body(body: Body | None, rules: RedactionRules, replacer: _Replacer) -> Body | None:
    if body is None or (replacer.idle and not rules.json_paths and _kept_whole(body)):
        return body  # nothing in it to replace: not copied
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
                lines=_redact_lines(event.lines, rules.json_paths, replacer)
                if event.lines is not None
                else None,
            )
            for event in body.events
        ]
        tail = replacer.text(body.tail) if body.tail is not None else None
        return body.model_copy(update={"events": events, "tail": tail})
    raise AssertionError(f"unknown body kind {body!r}")


def _redact_lines(lines: list[str], paths: tuple[str, ...], replacer: _Replacer) -> list[str]:
    """An event stored verbatim (``event:`` and ``data:`` lines, as Anthropic sends it):
    its JSON ``data`` redacted at ``paths`` (written again as one ``data:`` line where a
    value changed), and every line's known secrets replaced."""
    data = _lines_data(lines) if paths else None
    if data is not None:
        redacted = _redact_json(data, paths, _IDLE)
        if redacted != data:
            text = json.dumps(redacted, ensure_ascii=False, separators=(",", ":"))
            kept = [line for line in lines if not line.startswith("data:")]
            lines = [*kept, f"data: {text}"]
    return [replacer.text(line) for line in lines]


def _kept_whole(body: Body) -> bool:
    """Whether redacting ``body`` with nothing to replace gives it back equal (an event
    holding both ``data`` and ``lines`` loses its ``data``)."""
    return not isinstance(body, SseBody) or all(
        event.data is None or event.lines is None for event in body.events
    )


def _redact_url(url: str, params: frozenset[str], replacer: _Replacer) -> str:
    return replacer.text(_stripped_url(url, params))


@functools.lru_cache(maxsize=1024)  # a recording's calls go to a few URLs, again and again
def _stripped_url(url: str, params: frozenset[str]) -> str:
    """``url`` without userinfo, credential-named parameters and ``params``."""
    parts = urlsplit(without_credentials(url))
    if parts.query:
        query = parse_qsl(parts.query, keep_blank_values=True)
        kept = [(name, value) for name, value in query if name not in params]
        if len(kept) != len(query):
            parts = parts._replace(query=urlencode(kept))
    return urlunsplit(parts)


def _redact_headers(
    headers: Mapping[str, str], names: frozenset[str], replacer: _Replacer
) -> dict[str, str]:
    return {
        name: replacer.text(value)
        for name, value in headers.items()
        if name.lower() not in names and not is_secret_name(name)
    }


def redact_exchange(
    exchange: Exchange, rules: RedactionRules, *, known_secrets: Collection[str] = ()
) -> Exchange:
    """A copy of ``exchange`` that is safe to write.

    Drops the credential headers (request and response) and query parameters (the
    defaults, the rules' and any named like a credential), the URL's userinfo, replaces
    the values at ``rules.json_paths`` in JSON bodies and SSE payloads, and replaces
    every occurrence of a known secret (as is or percent-encoded) anywhere (URL,
    header values, any string in any body, SSE raw lines and tails, binary bodies) with
    ``"<redacted>"``.
    """
    replacer = _Replacer(known_secrets) if known_secrets else _IDLE
    if replacer.absent_from(exchange):
        replacer = _IDLE  # nothing to replace: the bodies are not walked
    names = rules.all_headers
    request = _updated(
        exchange.request,
        url=_redact_url(exchange.request.url, rules.all_query_params, replacer),
        headers=_redact_headers(exchange.request.headers, names, replacer),
        body=_redact_body(exchange.request.body, rules, replacer),
    )
    response = _updated(
        exchange.response,
        headers=_redact_headers(exchange.response.headers, names, replacer),
        body=_redact_body(exchange.response.body, rules, replacer),
    )
    client = {key: replacer.text(value) for key, value in exchange.client.items()}
    return exchange.model_copy(update={"request": request, "response": response, "client": client})


_Part = TypeVar("_Part", bound=BaseModel)


def _updated(model: _Part, **fields: Any) -> _Part:
    """``model.model_copy(update=fields)``, or ``model`` itself when no field would change
    (a response whose headers hold no credential: nearly every one). A body is the same
    only as the same object (:func:`_redact_body` gives back the one it had nothing to
    replace in); other values are compared."""
    for name, value in fields.items():
        current = getattr(model, name)
        if current is not value and (isinstance(value, BaseModel) or current != value):
            return model.model_copy(update=fields)
    return model


def redacted_with_text(
    exchange: Exchange, rules: RedactionRules, *, known_secrets: Collection[str] = ()
) -> tuple[Exchange, str]:
    """``redact_exchange(exchange, rules, known_secrets=...)`` and that exchange's journal
    text, ``model_dump_json(exclude_none=True)``, written once.

    The rules' drops are applied first and their result written; when that text holds no
    known secret (the usual case: the request's key sits in a dropped header), replacing
    them would change nothing, so that exchange and text are the answer. Else the
    exchange is redacted in full and written again.

    Raises:
        ValueError: pydantic-core cannot write the exchange (a lone surrogate).
    """
    stripped = redact_exchange(exchange, rules)
    text = stripped.model_dump_json(exclude_none=True)
    replacer = _Replacer(known_secrets)
    if replacer.absent_from_text(stripped, text):
        return stripped, text
    redacted = redact_exchange(exchange, rules, known_secrets=known_secrets)
    return redacted, redacted.model_dump_json(exclude_none=True)


def redact_live_line(
    line: LiveJournalLine, rules: RedactionRules, *, known_secrets: Collection[str] = ()
) -> LiveJournalLine:
    """A copy of a Live journal line that is safe to write: the opening's URL and headers
    redacted as a request's are, and a frame's JSON, text or bytes as a body's."""
    replacer = _Replacer(known_secrets)
    update: dict[str, Any] = {}
    if line.open is not None:
        update["open"] = line.open.model_copy(
            update={
                "url": _redact_url(line.open.url, rules.all_query_params, replacer),
                "headers": _redact_headers(line.open.headers, rules.all_headers, replacer),
            }
        )
    if line.frame is not None:
        frame = line.frame
        update["frame"] = frame.model_copy(
            update={
                "data": _redact_json(frame.data, rules.json_paths, replacer)
                if frame.data is not None
                else None,
                "text": replacer.text(frame.text) if frame.text is not None else None,
                "base64": replacer.binary(frame.base64) if frame.base64 is not None else None,
            }
        )
    if line.close is not None and line.close.reason:
        update["close"] = line.close.model_copy(update={"reason": replacer.text(line.close.reason)})
    return line.model_copy(update=update)


# --- scanning --------------------------------------------------------------------------


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


def _values(value: Any, path: tuple[object, ...]) -> Iterator[tuple[tuple[object, ...], str]]:
    """The string values (not the keys) of a JSON-like value, with their paths."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _values(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _values(item, (*path, index))


def _is_bytes_field(path: tuple[object, ...]) -> bool:
    """Whether the string at ``path`` is base64 bytes (a signature, inline data, a body)."""
    if not path:
        return False
    last = path[-1]
    if last in _BYTES_KEYS:
        return True
    return last == "data" and len(path) > 1 and path[-2] in ("inlineData", "inline_data")


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
    path: tuple[object, ...],
    known: KnownSpellings | None,
    known_bytes: Sequence[bytes],
    known_spellings: Sequence[str],
) -> list[str]:
    """The kinds of credential in one string (one pass of the combined pattern)."""
    if _is_bytes_field(path):
        # Random bytes spell anything: only a whole Google API key counts, and the known
        # credentials are looked for in the decoded bytes.
        kinds = ["Google API key"] if _has_api_key(text) else []
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


def _has_api_key(text: str) -> bool:
    """Whether ``text`` holds a whole Google API key (``_API_KEY.search``), tried only where
    its literal start ``AIza`` occurs."""
    at = text.find("AIza")
    while at >= 0:
        if _API_KEY.match(text, at):
            return True
        at = text.find("AIza", at + 1)
    return False


def _has_known(text: str, known: KnownSpellings, spellings: Sequence[str]) -> bool:
    """Whether ``text`` holds one of the known ``spellings`` (``known`` alternates them)."""
    if (
        len(text) > _LONG
        and not any(spelling in text for spelling in spellings)
        and not percent_decoded_holds(text, spellings)
    ):
        return False
    return known.search(text)


def _stream_bodies(document: Any) -> Iterator[tuple[tuple[object, ...], dict[str, Any]]]:
    """The recorded event streams of a cassette, an exchange or a body, with their paths."""
    if not isinstance(document, dict):
        return
    if document.get("kind") == "sse":
        yield (), document
        return
    exchanges = document.get("exchanges")
    pairs = enumerate(exchanges) if isinstance(exchanges, list) else [(None, document)]
    for index, exchange in pairs:
        response = exchange.get("response") if isinstance(exchange, dict) else None
        body = response.get("body") if isinstance(response, dict) else None
        if isinstance(body, dict) and body.get("kind") == "sse":
            prefix: tuple[object, ...] = ("exchanges", index) if index is not None else ()
            yield (*prefix, "response", "body"), body


def _stream_texts(document: Any) -> Iterator[tuple[tuple[object, ...], str]]:
    """Each string of a recorded event stream joined across its events.

    A credential the upstream split over two events is whole only here. Strings at the
    same place in successive events (``candidates[0].content.parts[0].text``, Anthropic's
    ``delta.text``) are joined in event order, as a client joins them, whether the event
    is stored parsed (``data``) or verbatim (``lines``: an ``event:`` line beside its JSON
    ``data:``); raw event lines are joined too.
    """
    for path, body in _stream_bodies(document):
        events = body.get("events")
        if not isinstance(events, list) or len(events) < 2:
            continue
        joined: dict[tuple[object, ...], list[str]] = {}
        for event in events:
            if not isinstance(event, dict):
                continue
            lines = [line for line in event.get("lines") or () if isinstance(line, str)]
            data = event.get("data")
            if data is None and lines:
                data = _lines_data(lines)
            if data is not None:
                for inner, text in _values(data, ("data",)):
                    joined.setdefault(inner, []).append(text)
            for line in lines:
                joined.setdefault(("lines",), []).append(line.removeprefix("data: "))
        for inner, texts in joined.items():
            if len(texts) > 1:
                yield (*path, "events", WILDCARD, *inner), "".join(texts)


def _lines_data(lines: list[str]) -> Any:
    """The JSON an event's ``data:`` lines carry (joined by newlines, as the event-stream
    format joins them), or None (no data, not JSON, or nested deeper than a walk of it may
    recurse: its lines are still joined as text)."""
    data = [line[5:].removeprefix(" ") for line in lines if line.startswith("data:")]
    if not data:
        return None
    text = "\n".join(data)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return None if nests_too_deep(text, value) else value


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
                for spelling in _encodings(s)
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
    hits: list[SecretHit] = []
    seen: set[tuple[str, str]] = set()
    if isinstance(obj, Exchange):
        # The exchange's JSON text straight from pydantic (the recorder scans each one).
        joined = [joined for _, joined in _exchange_streams(obj)]
        with contextlib.suppress(ValueError):  # a lone surrogate: the walk reads it
            written = obj.model_dump_json() if text is None else text
            if _clear_at_a_glance(written, joined, known, known_bytes):
                return hits
    document = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
    streams = list(_stream_texts(document))
    if not isinstance(obj, Exchange):
        with contextlib.suppress(TypeError, ValueError):
            text = json.dumps(document, ensure_ascii=False)
            if _clear_at_a_glance(text, [joined for _, joined in streams], known, known_bytes):
                return hits
    places = itertools.chain(_strings(document, ()), streams)
    for path, text in places:
        for kind in _kinds(text, path, known_pattern, known_bytes, known):
            # A secret can sit in an object key, so the segments are masked too.
            shown = [mask(part, known) if isinstance(part, str) else part for part in path]
            where = render_json_path(shown) or "(top level)"
            if (where, kind) not in seen:
                seen.add((where, kind))
                hits.append(SecretHit(where=where, kind=kind))
    return hits


_GLANCE_HINTS = tuple(h for h in (*_HINT_LITERALS, "PRIVATE KEY") if h != "://")
"""Every literal :data:`cassettes._secret_shapes._HINT` alternates, spelled out, but
``://``: every URL has one, so the one shape it starts is searched for instead."""


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


_GLANCE_HINT = re.compile(_anchored(_GLANCE_HINTS))
"""Any of :data:`_GLANCE_HINTS`, in one pass, stopping only at their rarest characters
(:func:`_anchored`): about twice as fast on recorded traffic as the same literals
alternated from their first characters."""
_URL_PASSWORD = re.compile(next(p for kind, p, _m in _SHAPES if kind == "URL password"))
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
    text = None
    if read_from is not None and b"\\u" not in read_from and b"\\/" not in read_from:
        with contextlib.suppress(UnicodeDecodeError):
            text = read_from.decode("utf-8")
    if text is None:
        try:
            text = exchange.model_dump_json()
        except ValueError:  # a lone surrogate pydantic-core cannot write: the scan reads it
            return False
    return _clear_at_a_glance(text, [joined for _, joined in streams], (), [])


def _exchange_streams(exchange: Exchange) -> list[tuple[tuple[object, ...], str]]:
    """:func:`_stream_texts` of the exchange's response body, read off its events (no
    JSON copy of the body is made)."""
    body = exchange.response.body
    if not isinstance(body, SseBody):
        return []
    events = [{"data": event.data, "lines": event.lines} for event in body.events]
    return list(_stream_texts({"kind": "sse", "events": events}))


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
    """
    if "AIza" in text and _has_api_key(text):
        return False  # a whole key counts in a bytes value too; a bare "AIza" is a hint
    if any(_JSON_ESCAPED.search(spelling) for spelling in known):
        return False
    if any(spelling in candidate for candidate in (text, *joined) for spelling in known):
        return False
    if known and any(percent_decoded_holds(candidate, known) for candidate in (text, *joined)):
        return False
    # Base64 bytes spell hint literals by chance; only a whole API key counts there.
    blanked = _bytes_values_blanked(text, known_bytes)
    if blanked is None:
        return False
    text = blanked
    if "inlineData" in text or "inline_data" in text:
        text = _INLINE_DATA_VALUE.sub(r'\1""', text)
    for candidate in (text, *joined):
        if _GLANCE_HINT.search(candidate):
            return False
        if _has_url_password(candidate):
            return False
        if _has_secret_param(candidate):
            return False
    return True


_PARAM_LEADS = "?&;"
"""The characters a ``name=value`` parameter of :data:`_SECRET_PARAM` follows: its match
starts at one, and none is a character of its name."""


def _has_secret_param(text: str) -> bool:
    """``_SECRET_PARAM.search(text)``, tried only where one of :data:`_PARAM_LEADS`
    occurs: ``str.find`` skips to them, where the engine would test its leading character
    class at every position of the text (a JSON text's ``=`` is mostly a content type's
    ``charset=`` or a stream's ``?alt=``)."""
    if "=" not in text:
        return False
    for lead in _PARAM_LEADS:
        at = text.find(lead)
        while at >= 0:
            if _SECRET_PARAM.match(text, at):
                return True
            at = text.find(lead, at + 1)
    return False


_BASE64_STRING = re.compile(r'"[A-Za-z0-9+/=_-]*"')


def _bytes_values_blanked(text: str, known_bytes: Sequence[bytes]) -> str | None:  # noqa: C901
    """The JSON ``text`` with each base64 value of a :data:`_BYTES_KEYS` key made ``""``
    (leftmost first, as ``re.sub`` of ``"KEY": ?"[A-Za-z0-9+/=_-]*"`` gives it), or None
    when a bytes field decodes to a known credential: one pass finds the values for both.

    With ``known_bytes``, every value of a bytes key (and of ``data`` when the text has
    inline data) is decoded as the full scan decodes it; a string value that is not plain
    base64 is left to the full scan (None). A key's spelling followed by ``":"`` matches
    every real key (a quote inside a string is escaped), and perhaps the end of some other
    key, which only costs a decode.
    """
    keys = _BYTES_KEYS
    if known_bytes and ("inlineData" in text or "inline_data" in text):
        keys = keys | {"data"}
    found: list[tuple[int, int, int]] = []
    """(where the key starts, where its value starts, where it ends) to blank."""
    for key in keys:
        marker = f'"{key}":'
        at = text.find(marker)
        while at >= 0:
            start = at + len(marker)
            if text.startswith(" ", start):  # json.dumps puts a space there, pydantic not
                start += 1
            value = _BASE64_STRING.match(text, start)
            if value is not None:
                if known_bytes:
                    raw = _decoded(value.group()[1:-1])
                    if raw is not None and any(secret in raw for secret in known_bytes):
                        return None
                if key in _BYTES_KEYS:
                    found.append((at, start, value.end()))
            elif known_bytes and text.startswith('"', start):
                return None
            at = text.find(marker, start)
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


def _has_url_password(text: str) -> bool:
    """``_URL_PASSWORD.search(text)``, tried only where ``://`` occurs (the pattern starts
    with a lookbehind, which Python's engine would try at every position)."""
    at = text.find("://")
    while at >= 0:
        if _URL_PASSWORD.match(text, at):
            return True
        at = text.find("://", at + 1)
    return False


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
