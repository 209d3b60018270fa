"""The key that decides which recording answers a request, and the rules that loosen it.

A request's key is its method, its path with the API version segment normalised (a
``v1beta`` recording replays for a ``v1`` client; an OpenAI or Anthropic call keys on its
provider endpoint, whatever its base URL: ``cassettes._providers``), its query without
``key`` or any other credential-named parameter (never stored), and its JSON body in
canonical form: keys sorted, bytes fields (``thoughtSignature``, inline data) spelled one
way because the SDK echoes them in URL-safe base64 while the API sends standard base64,
provider-issued ids by their order (OpenAI, Anthropic), an A2A call's run ids (JSON-RPC,
message, task and context ids: ``cassettes._a2a``) left out, and the paths the user chose
to ignore removed. Headers never count: their order and set differ per HTTP client.

:func:`match_key` is the key :class:`cassettes.MatchIndex` hashes requests and recordings
by: the digest of the canonical body's bytes (``cassettes._canonical_json``), read and
spelled at C speed, with no model built. :func:`canonical_request` gives the same key's
parts as text and values, to explain a miss.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from cassettes._a2a import a2a_canonical, a2a_rest_canonical, is_a2a, is_a2a_rest_message
from cassettes._bodies import body_from_parts, body_parts
from cassettes._bucket_keys import (
    Route,
    canonical_bytes,
    compact_json,
    normalise_bytes,
    normalise_bytes_utf8,
    route_of,
)
from cassettes._canonical_json import canonical_json
from cassettes._cassette import (
    BinaryBody,
    Body,
    JsonBody,
    RecordedRequest,
    SseBody,
    TextBody,
)
from cassettes._errors import InputError
from cassettes._json_path import Segment, delete_at, parse_json_path
from cassettes._providers import canonical_ids, mounted

__all__ = [
    "BodyParts",
    "CanonicalRequest",
    "MatchRules",
    "WireRequest",
    "body_parts_of",
    "canonical_request",
    "ignore_rules",
    "json_spelling",
    "keyed",
    "match_key",
    "parsed_paths",
    "request_key",
    "spelled_key",
]


class MatchRules(BaseModel):
    """How strictly a replayed request must equal a recorded one.

    Example::

        MatchRules(ignore_paths=("systemInstruction", "generationConfig.temperature"))
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    ignore_paths: tuple[str, ...] = ()
    """Dotted JSON paths in the request body left out of the comparison, e.g.
    ``systemInstruction`` or ``contents[*].parts[*].thoughtSignature``."""
    live_audio: Literal["hash", "turns"] = "hash"
    """How a Live session's audio and video chunks match: by the sha256 of their bytes, or
    by turn boundaries only (any number of chunks, whatever their bytes: ``--live-audio``)."""

    @field_validator("ignore_paths")
    @classmethod
    def _valid_paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for path in value:
            parse_json_path(path)
        return value

    def parsed_paths(self) -> tuple[tuple[Segment, ...], ...]:
        """The ignore paths as segments."""
        return parsed_paths(self.ignore_paths)


def ignore_rules(paths: Sequence[str], *, source: str) -> MatchRules:
    """The match rules for ignore paths given by a flag or setting (``source``, named in
    the error): ``rec replay --ignore``, pytest's ``--rec-ignore``, ``REC_IGNORE``.

    Raises:
        InputError: a path is malformed.
    """
    for path in paths:
        try:
            parse_json_path(path)
        except InputError as exc:
            raise InputError(exc.problem, path=source, fix=exc.fix) from None
    return MatchRules(ignore_paths=tuple(paths))


_PARSED_CACHE: dict[tuple[str, ...], tuple[tuple[Segment, ...], ...]] = {}


def parsed_paths(paths: tuple[str, ...]) -> tuple[tuple[Segment, ...], ...]:
    """Ignore paths as segments (cached: a replay's rules are parsed once)."""
    cached = _PARSED_CACHE.get(paths)
    if cached is None:
        cached = tuple(parse_json_path(p) for p in paths)
        _PARSED_CACHE[paths] = cached
    return cached


@dataclass(frozen=True)
class CanonicalRequest:
    """The parts of a request that decide which recording answers it.

    Equality and hashing use ``body_text`` (the canonical serialisation), never the
    nested ``body`` value, so instances work as dictionary keys.
    """

    method: str
    """Upper-case HTTP method."""
    path: str
    """URL path with the version segment replaced by ``{v}`` (any base-URL prefix kept)."""
    query: tuple[tuple[str, str], ...]
    """Sorted query parameters, credential-named ones (``key``, ``apikey``) removed."""
    body_kind: str
    """``json``, ``text``, ``base64`` or ``none``."""
    body_text: str
    """The canonical serialisation of the body (sorted keys, compact, bytes normalised,
    ignored paths removed)."""

    @functools.cached_property
    def body(self) -> Any:
        """The canonical body as a value (parsed from :attr:`body_text` when first used)."""
        if self.body_kind == "json":
            return json.loads(self.body_text)
        return self.body_text if self.body_kind != "none" else None


BodyParts = tuple[str | None, Any]
"""A body's kind (``json``, ``text``, ``base64``, ``sse``; None: no body) and its payload
(the JSON value, the text, the base64 text, the :class:`SseBody`)."""


def body_parts_of(body: Body | None) -> BodyParts:
    """The kind and payload of a stored body (what :class:`WireRequest` reads off the wire)."""
    if body is None:
        return None, None
    if isinstance(body, JsonBody):
        return "json", body.value
    if isinstance(body, TextBody):
        return "text", body.text
    if isinstance(body, BinaryBody):
        return "base64", body.base64
    if isinstance(body, SseBody):
        return "sse", body
    raise AssertionError(f"unknown body kind {body!r}")  # pragma: no cover - exhaustive


def canonical_request(
    request: RecordedRequest, rules: MatchRules | None = None
) -> CanonicalRequest:
    """The canonical form of ``request`` under ``rules`` (see the module docstring)."""
    return _canonical(request.method, request.url, body_parts_of(request.body), rules)


def _canonical(
    method: str, url: str, parts: BodyParts, rules: MatchRules | None
) -> CanonicalRequest:
    method, path, query = route_of(method, url)
    kind, payload = parts
    text: str
    if kind is None:
        kind, text = "none", ""
    elif kind == "json":
        value = _canonical_value(path, payload, rules)
        text = normalise_bytes(compact_json(value))
    elif kind == "text":
        text = payload
    elif kind == "base64":
        text = canonical_bytes(payload)
    else:
        text = compact_json(
            payload.model_dump(mode="json", exclude={"events": {"__all__": {"offset_ms"}}})
        )
    return CanonicalRequest(method=method, path=path, query=query, body_kind=kind, body_text=text)


@functools.lru_cache(maxsize=1024)
def _endpoint(path: str) -> str:
    """What a normalised path calls, as far as its body's canonical form depends on it:
    ``provider`` (OpenAI, Anthropic), ``a2a-rest`` (A2A's HTTP+JSON message call) or ''."""
    if mounted(path) is not None:
        return "provider"
    return "a2a-rest" if is_a2a_rest_message(path) else ""


def _canonical_value(path: str, value: Any, rules: MatchRules | None) -> Any:
    """A JSON body as it is compared: issued ids by order, run ids and ignored paths left
    out (see the module docstring); spelled canonically by the caller."""
    endpoint = _endpoint(path)
    if endpoint == "provider":  # an OpenAI or Anthropic call: issued ids by order
        value = canonical_ids(value)
    elif not (isinstance(value, dict) and "jsonrpc" not in value) and is_a2a(value):
        # a call to a remote agent (JSON-RPC: an object holds ``jsonrpc``): no run's ids
        value = a2a_canonical(value)
    elif endpoint == "a2a-rest":  # the same over A2A's HTTP+JSON binding
        value = a2a_rest_canonical(value)
    for segments in parsed_paths(rules.ignore_paths) if rules is not None else ():
        value = delete_at(value, segments)
    return value


class WireRequest:
    """A request as it came off the wire, with no model built: matching hashes its bytes
    (``cassettes._wire_digest``) and reads its body parsed (:attr:`body`, parsed when first
    read, once); :meth:`recorded` builds the :class:`RecordedRequest` only where a miss is
    explained."""

    __slots__ = ("_body", "_recorded", "content", "headers", "method", "url")

    def __init__(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.content = body
        """The body's bytes, as received."""
        self._body: BodyParts | None = None
        self._recorded: RecordedRequest | None = None

    @property
    def body(self) -> BodyParts:
        """The body's kind and payload (:func:`body_parts`), parsed when first read."""
        if self._body is None:
            self._body = body_parts(self.content, self.headers.get("content-type")) or (
                None,
                None,
            )
        return self._body

    @property
    def parsed(self) -> bool:
        """Whether the body has been parsed (a request matched by its bytes is not)."""
        return self._body is not None

    def recorded(self) -> RecordedRequest:
        """The request as a model (built unvalidated: its body was parsed from the wire)."""
        if self._recorded is None:
            kind, payload = self.body
            self._recorded = RecordedRequest.model_construct(
                method=self.method,
                url=self.url,
                headers=dict(self.headers),
                body=body_from_parts(None if kind is None else (kind, payload)),
            )
        return self._recorded


def request_key(canonical: CanonicalRequest) -> str:
    """A stable hex digest of the canonical request (sha256)."""
    head = compact_json(
        [canonical.method, canonical.path, list(canonical.query), canonical.body_kind]
    )
    digest = hashlib.sha256(head.encode("utf-8"))
    digest.update(b"\n")
    digest.update(canonical.body_text.encode("utf-8"))
    return digest.hexdigest()


@functools.lru_cache(maxsize=1024)
def _head(route: Route, kind: str) -> bytes:
    """What the key's digest starts with: the route and the body's kind (as
    :func:`request_key` spells them)."""
    method, path, query = route
    return compact_json([method, path, list(query), kind]).encode("utf-8") + b"\n"


def match_key(method: str, url: str, parts: BodyParts, rules: MatchRules | None) -> str:
    """The key a request is matched by: two requests have the same key exactly when their
    :func:`canonical_request` forms are equal (so exactly when :func:`request_key` gives
    them the same digest). A JSON body is spelled as bytes (``cassettes._canonical_json``),
    with no text or model built; the key is a hex digest (sha256), kept in memory only.
    """
    return keyed(method, url, parts, rules)[0]


def keyed(
    method: str, url: str, parts: BodyParts, rules: MatchRules | None
) -> tuple[str, bytes | None]:
    """:func:`match_key`, and for a JSON body its :func:`json_spelling` (None for another
    body): a recording on the same route spelled alike has the same key."""
    kind, payload = parts
    if kind == "json":
        route = route_of(method, url)
        spelled = json_spelling(route[1], payload, rules)
        return spelled_key(route, spelled), spelled
    canonical = _canonical(method, url, parts, rules)
    digest = hashlib.sha256(_head(route_of(method, url), canonical.body_kind))
    digest.update(canonical.body_text.encode("utf-8"))
    return digest.hexdigest(), None


def json_spelling(path: str, value: Any, rules: MatchRules | None) -> bytes:
    """The canonical bytes of a JSON body sent to the normalised ``path``, its bytes fields
    as they are: one spelling per canonical value (``cassettes._canonical_json``), so two
    bodies spelled alike on one route have the same key, whatever their bytes fields."""
    return canonical_json(_canonical_value(path, value, rules))


def spelled_key(route: Route, spelled: bytes) -> str:
    """:func:`match_key` of a JSON body on ``route`` from its :func:`json_spelling`."""
    digest = hashlib.sha256(_head(route, "json"))
    digest.update(normalise_bytes_utf8(spelled))
    return digest.hexdigest()
