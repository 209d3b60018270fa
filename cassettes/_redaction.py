"""Keep credentials out of cassettes, logs and error messages: the one policy.

What rec does with a secret depends only on where the text is going:

1. **Redact** what will be stored: :func:`redact_exchange` drops credential headers and
   query parameters, blanks the JSON paths the user declared, and replaces every
   occurrence of a value that was sent as a credential in this recording
   (:func:`credentials_in`) wherever it appears.
2. **Refuse** what still looks like one:
   :func:`~cassettes._secret_scan.ensure_no_secrets` scans what is about to be written
   (:func:`~cassettes._secret_scan.scan_for_secrets`) and raises
   :class:`~cassettes._errors.SecretFound`, naming the place but never the value.
3. **Mask** what is shown: :func:`~cassettes._secret_shapes.mask` cleans any text that
   reaches a log line, a report or an error message.

All three work from one table (:mod:`cassettes._secret_shapes`) over one walk
(:mod:`cassettes._secret_walk`).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import json
import re
from collections.abc import Collection, Mapping
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, field_validator

from cassettes._cassette import BinaryBody, Body, Exchange, JsonBody, SseBody, SseEvent, TextBody
from cassettes._json_path import checked_json_paths, parse_json_path, replace_at
from cassettes._live import LiveJournalLine
from cassettes._secret_scan import (  # noqa: F401 (the glance's parts, as its tests reach them)
    _GLANCE_HINT,
    SecretHit,
    _anchor,
    _anchored,
    _bytes_values_blanked,
    _decoded,
    ensure_no_secrets,
    exchange_clear_at_a_glance,
    scan_for_secrets,
    text_clear_at_a_glance,
)
from cassettes._secret_shapes import BYTES_KEYS as _BYTES_KEYS  # noqa: F401 (as above)
from cassettes._secret_shapes import (
    CREDENTIALS_HEADER,
    JSON_ESCAPED,
    MIN_SECRET_LENGTH,
    KnownSpellings,
    credentials_from_header,
    is_secret_name,
    remember_credentials,
    split_url,
    url_credentials,
)
from cassettes._secret_shapes import TEXT_HINTS as _GLANCE_HINTS  # noqa: F401 (as above)
from cassettes._secret_shapes import URL_PASSWORD as _URL_PASSWORD  # noqa: F401 (as above)
from cassettes._secret_walk import lines_data, map_strings

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
    "stored_headers",
    "stored_url",
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
        return checked_json_paths(value)

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
    ``access_token``), cookie values, a password in the URL, and the credentials a process
    rec instruments tells in :data:`~cassettes._secret_shapes.CREDENTIALS_HEADER`. Values
    shorter than 8 characters are left out: replacing them everywhere would mangle
    ordinary text.
    """
    found: set[str] = set()
    for name, value in headers.items():
        lowered = name.lower()
        if lowered == CREDENTIALS_HEADER:
            found |= credentials_from_header(value)
        elif lowered == "cookie":
            for pair in value.split(";"):
                found.add(pair.partition("=")[2].strip())
        elif lowered in ("authorization", "proxy-authorization"):
            scheme, _, credential = value.strip().partition(" ")
            found.add(credential.strip() if credential else scheme)
            if scheme.lower() == "basic" and credential:
                found |= _basic_credentials(credential.strip())
        elif is_secret_name(lowered) or lowered in DEFAULT_REDACTED_HEADERS:
            found.add(value.strip())
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
        self._spelled_in_json = not any(JSON_ESCAPED.search(v) for v in variants)
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
        return map_strings(value, lambda _path, text, _key: self.text(text), None)

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
def _replacer(secrets: frozenset[str]) -> _Replacer:
    """The replacer of ``secrets``, built once per set (the recorder redacts every exchange
    with the same few)."""
    return _Replacer(secrets) if secrets else _IDLE


def _replacer_of(secrets: Collection[str]) -> _Replacer:
    return _replacer(secrets if isinstance(secrets, frozenset) else frozenset(secrets))


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
    data = lines_data(lines) if paths else None
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
    """``url`` without userinfo, credential-named parameters and ``params``."""
    return replacer.text(split_url(url, drop=params).stored)


def _redact_headers(
    headers: Mapping[str, str], names: frozenset[str], replacer: _Replacer
) -> dict[str, str]:
    return {
        name: replacer.text(value)
        for name, value in headers.items()
        if name.lower() not in names and not is_secret_name(name)
    }


def stored_headers(headers: Mapping[str, str], rules: RedactionRules) -> dict[str, str]:
    """``headers`` without those :func:`redact_exchange` drops (the credential headers, the
    rules' and any named like a credential); values are kept as they are."""
    return _redact_headers(headers, rules.all_headers, _IDLE)


def stored_url(url: str, rules: RedactionRules) -> str:
    """``url`` as :func:`redact_exchange` keeps it before replacing known secrets: no
    userinfo, no credential-named parameter nor one of the rules'."""
    return _redact_url(url, rules.all_query_params, _IDLE)


def redact_exchange(
    exchange: Exchange, rules: RedactionRules, *, known_secrets: Collection[str] = ()
) -> Exchange:
    """``exchange`` made safe to write: a copy, or ``exchange`` itself when nothing in it
    needs removing.

    Drops the credential headers (request and response) and query parameters (the
    defaults, the rules' and any named like a credential), the URL's userinfo, replaces
    the values at ``rules.json_paths`` in JSON bodies and SSE payloads, and replaces
    every occurrence of a known secret (as is or percent-encoded) anywhere (URL,
    header values, any string in any body, SSE raw lines and tails, binary bodies) with
    ``"<redacted>"``.
    """
    replacer = _replacer_of(known_secrets) if known_secrets else _IDLE
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
    return _updated(exchange, request=request, response=response, client=client)


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
    replacer = _replacer_of(known_secrets)
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
