"""Find the recorded exchange for a replayed request: canonical key, hash index, FIFO queues.

A request's key is its method, its path with the API version segment normalised (a
``v1beta`` recording replays for a ``v1`` client; an OpenAI or Anthropic call keys on its
provider endpoint, whatever its base URL: ``cassettes._providers``), its query without
``key`` or any other credential-named parameter (never stored), and its JSON body in
canonical form: keys sorted, bytes fields (``thoughtSignature``, inline data) spelled one
way because the SDK echoes them in URL-safe base64 while the API sends standard base64,
provider-issued ids by their order (OpenAI, Anthropic), an A2A call's run ids (JSON-RPC,
message, task and context ids: ``cassettes._a2a``) left out, and the paths the user chose
to ignore removed. Headers never count: their order and set differ per HTTP client.

:class:`MatchIndex` hashes each recorded request at most once; a lookup costs one hash of
the incoming request, whatever the size of the cassette (mitmproxy's server playback
works the same way). Identical requests get their recorded responses in recording order,
and the last one repeats. Concurrent conversations that open alike may each get the
other's first answer; a later turn then follows the branch its own turns took (see
:meth:`MatchIndex._sibling_branch`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from cassettes._a2a import a2a_canonical, a2a_rest_canonical, is_a2a, is_a2a_rest_message
from cassettes._bodies import body_from_parts, body_parts
from cassettes._bucket_keys import (
    BucketKey,
    Route,
    bucket_key,
    canonical_bytes,
    compact_json,
    narrow,
    normalise_bytes,
    route_of,
)
from cassettes._cassette import (
    BinaryBody,
    Body,
    Exchange,
    JsonBody,
    LazyExchanges,
    RecordedRequest,
    SseBody,
    TextBody,
    request_bucket,
)
from cassettes._errors import InputError
from cassettes._gc_pause import gc_paused
from cassettes._json_path import WILDCARD, Segment, delete_at, parse_json_path
from cassettes._providers import canonical_ids, mounted

__all__ = [
    "CanonicalRequest",
    "MatchIndex",
    "MatchRules",
    "WireRequest",
    "canonical_request",
    "ignore_rules",
    "request_key",
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
        return _parsed(self.ignore_paths)


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


def _parsed(paths: tuple[str, ...]) -> tuple[tuple[Segment, ...], ...]:
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


def _route(request: RecordedRequest) -> Route:
    """Method, normalised path and canonical query."""
    return route_of(request.method, request.url)


BodyParts = tuple[str | None, Any]
"""A body's kind (``json``, ``text``, ``base64``, ``sse``; None: no body) and its payload
(the JSON value, the text, the base64 text, the :class:`SseBody`)."""


def _body_parts(body: Body | None) -> BodyParts:
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
    return _canonical(request.method, request.url, _body_parts(request.body), rules)


def _canonical(
    method: str, url: str, parts: BodyParts, rules: MatchRules | None
) -> CanonicalRequest:
    method, path, query = route_of(method, url)
    kind, payload = parts
    text: str
    if kind is None:
        kind, text = "none", ""
    elif kind == "json":
        value = payload
        if mounted(path) is not None:  # an OpenAI or Anthropic call: issued ids by order
            value = canonical_ids(value)
        elif is_a2a(value):  # a call to a remote agent: no run's ids
            value = a2a_canonical(value)
        elif is_a2a_rest_message(path):  # the same over A2A's HTTP+JSON binding
            value = a2a_rest_canonical(value)
        for segments in _parsed(rules.ignore_paths) if rules is not None else ():
            value = delete_at(value, segments)
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


class WireRequest:
    """A request as it came off the wire, its body parsed once (:func:`body_parts`) and no
    model built: matching reads the parts; :meth:`recorded` builds the
    :class:`RecordedRequest` only where a miss is explained."""

    __slots__ = ("_recorded", "body", "headers", "method", "url")

    def __init__(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.body: BodyParts = body_parts(body, headers.get("content-type")) or (None, None)
        self._recorded: RecordedRequest | None = None

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


def _touches_contents(rules: MatchRules) -> bool:
    return any(segments[0] in ("contents", WILDCARD) for segments in _parsed(rules.ignore_paths))


def _bucket_key(request: RecordedRequest, *, use_turns: bool) -> BucketKey:
    """The request's bucket (see ``cassettes._bucket_keys``)."""
    return request_bucket(request, use_turns=use_turns)


_MODEL_TURN = {"role": "model", "parts": "(any recorded answer)"}


def _has_model_turn(request: RecordedRequest) -> bool:
    return any(
        isinstance(turn, dict) and turn.get("role") == "model"
        for turn in _turns(_json_dict(request))[:-1]
    )


def _branch_key(request: RecordedRequest, rules: MatchRules) -> str:
    """The request's key with every earlier model turn of its history left out."""
    body = _json_dict(request)
    contents = _turns(body)
    history = [
        _MODEL_TURN if isinstance(turn, dict) and turn.get("role") == "model" else turn
        for turn in contents[:-1]
    ]
    branch = request.model_copy(
        update={"body": JsonBody(value={**body, "contents": [*history, *contents[-1:]]})}
    )
    return "branch:" + request_key(canonical_request(branch, rules))


def _json_dict(request: RecordedRequest) -> dict[str, Any]:
    body = request.body
    return body.value if isinstance(body, JsonBody) and isinstance(body.value, dict) else {}


def _turns(body: dict[str, Any]) -> list[Any]:
    contents = body.get("contents")
    return contents if isinstance(contents, list) else []


def _history(body: dict[str, Any]) -> list[Any]:
    """The conversation a request carries: Gemini ``contents``, or OpenAI and Anthropic
    ``messages`` (for choosing the nearest recording)."""
    turns = body.get("contents", body.get("messages"))
    return turns if isinstance(turns, list) else []


def _common_prefix(a: list[Any], b: list[Any]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        count += 1
    return count


class MatchIndex:
    """Recorded exchanges by canonical request key, each key a FIFO queue.

    Built in O(n) without serialising any conversation history: exchanges are first
    grouped by a cheap bucket key (route, number of turns, last turn), and a bucket's
    recordings are parsed and given their full canonical keys one by one, in recording
    order, only as far as a request landing in it needs. Every
    exchange is canonicalised at most once, so :meth:`lookup` costs O(size of the
    request) amortised, independent of the number of recordings. Safe to share between
    threads (the proxy's loop thread and a test reading :meth:`unused`).

    Example::

        index = MatchIndex(load_cassette(path).exchanges, MatchRules())
        exchange = index.lookup(request)
        if exchange is None:
            raise explain_miss(request, index.nearest(request), rules=..., cassette_path=path)
    """

    def __init__(self, exchanges: Sequence[Exchange], rules: MatchRules | None = None) -> None:
        self.rules = rules or MatchRules()
        lazy = exchanges if isinstance(exchanges, LazyExchanges) else None
        self._exchanges: Sequence[Exchange] = lazy if lazy is not None else list(exchanges)
        self._use_turns = not _touches_contents(self.rules)
        self._members: dict[tuple[object, ...], list[int]] = {}
        """Every bucket's positions."""
        self._resolved: dict[tuple[object, ...], int] = {}
        """Per bucket, how many of its exchanges are in their queues, in recording order
        (see :meth:`_resolve_until`)."""
        self._branches: dict[int, str] = {}
        """Branch keys computed so far, by position (see :func:`_branch_key`)."""
        self._queues: dict[str, list[int]] = {}
        self._cursor: dict[str, int] = {}
        self._by_route: dict[tuple[object, ...], list[int]] = {}
        self._used: set[int] = set()
        self._lock = threading.Lock()
        self._partial: dict[tuple[str, ...], tuple[MatchRules, set[str]]] = {}
        """Per set of parts some recordings lack (``Exchange.not_compared``): the rules
        that leave those parts out too, and the keys of those recordings' queues."""
        partial = self._partial_positions()
        with gc_paused():
            for position in range(len(self._exchanges)):
                if position in partial:
                    self._file_partial(position, partial[position])
                    continue
                bucket = lazy.bucket(position) if lazy is not None else None
                if bucket is not None:  # read from the file's lines: no body parsed
                    bucket = narrow(bucket, use_turns=self._use_turns)
                else:
                    exchange = self._exchanges[position]
                    bucket = _bucket_key(exchange.request, use_turns=self._use_turns)
                self._members.setdefault(bucket, []).append(position)
                self._by_route.setdefault(bucket[:2], []).append(position)

    def _partial_positions(self) -> dict[int, tuple[str, ...]]:
        """The positions of the recordings that hold only part of their request (rebuilt
        from a trace), with the parts they lack; of a lazy cassette only a file imported
        from a trace is searched for the field, and no other exchange is parsed."""
        exchanges = self._exchanges
        if isinstance(exchanges, LazyExchanges):
            candidates: Sequence[int] = exchanges.partial_indexes()
        else:
            candidates = range(len(exchanges))
        found: dict[int, tuple[str, ...]] = {}
        for position in candidates:
            gaps = exchanges[position].not_compared
            if gaps:
                found[position] = tuple(gaps)
        return found

    def _file_partial(self, position: int, gaps: tuple[str, ...]) -> None:
        """Queue a partial recording under its key with the parts it lacks left out."""
        exchange = self._exchanges[position]
        if gaps not in self._partial:
            paths = tuple(dict.fromkeys((*self.rules.ignore_paths, *gaps)))
            rules = self.rules.model_copy(update={"ignore_paths": paths})
            self._partial[gaps] = (rules, set())
        rules, keys = self._partial[gaps]
        key = "partial:" + request_key(canonical_request(exchange.request, rules))
        keys.add(key)
        self._queues.setdefault(key, []).append(position)
        method, path, _ = _route(exchange.request)
        self._by_route.setdefault((method, path), []).append(position)

    def _resolve_until(self, bucket: tuple[object, ...], key: str) -> None:
        """Queue the bucket's next recordings, in recording order, until one keyed ``key``
        is queued or the bucket is done; each is parsed and canonicalised once, when
        first needed. Call under the lock.

        A queue's positions are those of the bucket's resolved prefix, in order, so the
        n-th identical request still gets the n-th recording of its key: an unplayed one
        already queued comes before any recording not yet resolved."""
        positions = self._members.get(bucket)
        if positions is None:
            return
        done = self._resolved.get(bucket, 0)
        while done < len(positions):
            position = positions[done]
            done += 1
            canonical = canonical_request(self._exchanges[position].request, self.rules)
            found = request_key(canonical)
            self._queues.setdefault(found, []).append(position)
            if found == key:
                break
        self._resolved[bucket] = done

    def __len__(self) -> int:
        return len(self._exchanges)

    def lookup(self, request: RecordedRequest) -> Exchange | None:
        """The recorded exchange that answers ``request``, or None on a miss.

        The n-th identical request gets the n-th recorded response; once a queue is
        exhausted its last response repeats.
        """
        return self._lookup(request.method, request.url, _body_parts(request.body), lambda: request)

    def lookup_wire(self, request: WireRequest) -> Exchange | None:
        """:meth:`lookup` of a request read from the wire (no model built for a hit)."""
        return self._lookup(request.method, request.url, request.body, request.recorded)

    def _lookup(
        self,
        method: str,
        url: str,
        parts: BodyParts,
        recorded: Callable[[], RecordedRequest],
    ) -> Exchange | None:
        kind, payload = parts
        value = payload if kind == "json" else None
        bucket = bucket_key(method, url, kind, value, use_turns=self._use_turns)
        key = request_key(_canonical(method, url, parts, self.rules))
        with self._lock:
            queue = self._queues.get(key)
            if queue is None or self._cursor.get(key, 0) >= len(queue):
                self._resolve_until(bucket, key)
                queue = self._queues.get(key)
            if queue is None and self._partial:
                key = self._partial_key(recorded())
                queue = self._queues.get(key) if key else None
            if queue is None:
                return self._sibling_branch(recorded(), bucket)
            cursor = self._cursor.get(key, 0)
            if cursor < len(queue):
                self._cursor[key] = cursor + 1
                position = queue[cursor]
            else:
                position = queue[-1]
            self._used.add(position)
            return self._exchanges[position]

    def _partial_key(self, request: RecordedRequest) -> str:
        """The key of a partial recording (see :meth:`_file_partial`) that ``request``
        matches once the parts that recording lacks are left out, or ''."""
        for rules, keys in self._partial.values():
            key = "partial:" + request_key(canonical_request(request, rules))
            if key in keys:
                return key
        return ""

    def _sibling_branch(
        self, request: RecordedRequest, bucket: tuple[object, ...]
    ) -> Exchange | None:
        """The recording of this conversation's branch when an earlier answer came from a
        sibling. Call under the lock, after an exact miss.

        Two conversations that open with the same request share its FIFO queue, so under
        concurrency each may get the other's first answer; its next request then carries
        that answer in its history and matches nothing exactly. Every model turn in a
        replayed history came from the cassette, so the request is matched again with its
        model turns left out: the user's turns, tool results and configuration still
        decide, and the conversation goes on along the branch its own turns took. Among
        several such recordings the unplayed ones go first, in recording order.
        """
        if not self._use_turns or not _has_model_turn(request):
            return None
        members = self._members.get(bucket)
        if not members:
            return None
        wanted = _branch_key(request, self.rules)
        matches = [p for p in members if self._branch_of(p) == wanted]
        if not matches:
            return None
        cursor = self._cursor.get(wanted, 0)
        fresh = [p for p in matches if p not in self._used]
        position = fresh[0] if fresh else matches[min(cursor, len(matches) - 1)]
        self._cursor[wanted] = cursor + 1
        self._used.add(position)
        return self._exchanges[position]

    def _branch_of(self, position: int) -> str:
        key = self._branches.get(position)
        if key is None:
            key = self._branches[position] = _branch_key(
                self._exchanges[position].request, self.rules
            )
        return key

    def nearest(self, request: RecordedRequest) -> Exchange | None:
        """The recording most like ``request``, to explain a miss (call only on a miss).

        Prefers the same method and path; then the longest common prefix of
        ``contents`` turns, the same ``tools``, ``systemInstruction`` and
        ``generationConfig``, the closest number of turns; then recordings not yet played,
        then the earliest. Cost is linear in the cassette (a plain comparison per
        recording), which is fine on a miss.
        """
        if not self._exchanges:
            return None
        method, path, query = _route(request)
        candidates = self._by_route.get((method, path))
        if not candidates:
            same_path = [
                p for (_, other), ps in self._by_route.items() if other == path for p in ps
            ]
            candidates = same_path or list(range(len(self._exchanges)))
        with self._lock:
            used = set(self._used)
        wanted = _json_dict(request)
        wanted_turns = _history(wanted)
        wanted_sections = [wanted.get(name) for name in _SECTIONS]

        # Scored on the stored JSON with plain ``==`` (C speed, nothing serialised), so a
        # miss in a 10,000-exchange cassette is explained in milliseconds.
        def score(position: int) -> tuple[int, ...]:
            recorded_request = self._exchanges[position].request
            recorded_method, recorded_path, recorded_query = _route(recorded_request)
            recorded = _json_dict(recorded_request)
            turns = _history(recorded)
            return (
                int(recorded_method == method and recorded_path == path),
                int(recorded_query == query),
                _common_prefix(turns, wanted_turns),
                sum(
                    int(recorded.get(name) == section)
                    for name, section in zip(_SECTIONS, wanted_sections, strict=True)
                ),
                -abs(len(turns) - len(wanted_turns)),
                int(position not in used),
                -position,
            )

        best = max(sorted(candidates), key=score)
        return self._exchanges[best]

    @property
    def used(self) -> frozenset[int]:
        """Positions (in the sequence given) of the exchanges replayed so far."""
        with self._lock:
            return frozenset(self._used)

    def unused(self) -> list[Exchange]:
        """Recorded exchanges that no request has replayed, in recording order."""
        with self._lock:
            used = set(self._used)
        return [exchange for p, exchange in enumerate(self._exchanges) if p not in used]


_SECTIONS = ("tools", "systemInstruction", "generationConfig", "toolConfig", "model", "system")
