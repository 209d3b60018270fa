"""Find the recorded exchange for a replayed request: hash index, FIFO queues.

Requests and recordings are keyed by :func:`~cassettes._request_key.match_key` (method,
normalised path, credential-free query and canonical body: see ``cassettes._request_key``).
:class:`MatchIndex` keys each recorded request at most once; a lookup costs one key of
the incoming request, whatever the size of the cassette (mitmproxy's server playback
works the same way). Identical requests get their recorded responses in recording order,
and the last one repeats. Concurrent conversations that open alike may each get the
other's first answer; a later turn then follows the branch its own turns took (see
:meth:`MatchIndex._sibling_branch`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from cassettes._bucket_keys import (
    BucketKey,
    Route,
    bucket_key,
    has_turns,
    narrow,
    raw_json_request,
    route_of,
    with_first_user,
)
from cassettes._cassette import (
    Exchange,
    JsonBody,
    LazyExchanges,
    RecordedRequest,
    request_bucket,
)
from cassettes._first_user import first_user_digest, first_user_key, first_user_text
from cassettes._gc_pause import gc_paused
from cassettes._json_path import WILDCARD
from cassettes._nearest import READ, Likeliest, turns_in
from cassettes._request_key import (
    BodyParts,
    CanonicalRequest,
    MatchRules,
    WireRequest,
    body_parts_of,
    canonical_request,
    ignore_rules,
    json_spelling,
    keyed,
    match_key,
    request_key,
    spelled_key,
)
from cassettes._wire_digest import NO_DIGEST, wire_digest

__all__ = [
    "CanonicalRequest",
    "MatchIndex",
    "MatchRules",
    "WireRequest",
    "canonical_request",
    "ignore_rules",
    "request_key",
]


def _route(request: RecordedRequest) -> Route:
    """Method, normalised path and canonical query."""
    return route_of(request.method, request.url)


def _touches_contents(rules: MatchRules) -> bool:
    return any(segments[0] in ("contents", WILDCARD) for segments in rules.parsed_paths())


def _bucket_key(request: RecordedRequest, *, use_turns: bool) -> BucketKey:
    """The request's bucket (see ``cassettes._bucket_keys``)."""
    return request_bucket(request, use_turns=use_turns)


_MODEL_TURN = {"role": "model", "parts": "(any recorded answer)"}


def _has_model_turn(request: RecordedRequest) -> bool:
    return any(
        isinstance(turn, dict) and turn.get("role") == "model"
        for turn in _turns(_json_dict(request))[:-1]
    )


def _branch_key(method: str, url: str, body: dict[str, Any], rules: MatchRules) -> str:
    """The key of a request with a JSON ``body``, every earlier model turn of its history
    left out."""
    contents = _turns(body)
    history = [
        _MODEL_TURN if isinstance(turn, dict) and turn.get("role") == "model" else turn
        for turn in contents[:-1]
    ]
    branch = {**body, "contents": [*history, *contents[-1:]]}
    return "branch:" + match_key(method, url, ("json", branch), rules)


def _json_dict(request: RecordedRequest) -> dict[str, Any]:
    body = _json_body(request)
    return body if isinstance(body, dict) else {}


def _json_body(request: RecordedRequest) -> Any:
    body = request.body
    return body.value if isinstance(body, JsonBody) else None


def _turns(body: dict[str, Any]) -> list[Any]:
    contents = body.get("contents")
    return contents if isinstance(contents, list) else []


def _history(body: dict[str, Any]) -> list[Any]:
    """The conversation a request carries: Gemini ``contents``, or OpenAI and Anthropic
    ``messages`` (for choosing the nearest recording)."""
    turns = body.get("contents", body.get("messages"))
    return turns if isinstance(turns, list) else []


def _opens_with_user(turns: list[Any]) -> bool:
    """Whether a conversation's first turn is the user's (not a system message)."""
    return bool(turns) and isinstance(turns[0], dict) and turns[0].get("role", "user") == "user"


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
        self._likely: Likeliest | None = None
        """A lazily loaded cassette's recordings grouped to explain a miss (built at the
        first)."""
        self._partial: dict[tuple[str, ...], tuple[MatchRules, set[str]]] = {}
        """Per set of parts some recordings lack (``Exchange.not_compared``): the rules
        that leave those parts out too, and the keys of those recordings' queues."""
        self._first_user = self._first_users(lazy)
        """A recording's first user turn's digest by position, narrowing its bucket (None:
        buckets are not narrowed; see :meth:`_first_users`)."""
        self._split: set[BucketKey] = set()
        """The buckets whose recordings are filed by first user turn too (each on first use)."""
        self._wires: dict[bytes, list[int]] | None = None
        """A lazily loaded cassette's recordings by wire digest (``cassettes._wire_digest``),
        built at the first request matched from the wire (see :meth:`_by_wire`)."""
        self._wired: dict[BucketKey, str] = {}
        """Per bucket a request was looked for by its bytes in, the name of the queue holding
        all its recordings ('' where they are not all alike: see :meth:`_wired_queue`)."""
        self._aliases: dict[str, str] = {}
        """The key of the recordings of a bucket played from the wire, and its queue's name."""
        self._aliased: set[str] = set()
        partial = self._partial_positions()
        self._partials = frozenset(partial)
        self._file_all(lazy, partial)

    def _file_all(self, lazy: LazyExchanges | None, partial: dict[int, tuple[str, ...]]) -> None:
        """File every recording in its bucket, a ``partial`` one in its own queue."""
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
                if lazy is None and self._first_user is not None and has_turns(bucket):
                    bucket = with_first_user(bucket, self._first_user(position))
                self._members.setdefault(bucket, []).append(position)
                self._by_route.setdefault(bucket[:2], []).append(position)

    def _first_users(self, lazy: LazyExchanges | None) -> Callable[[int], str | None] | None:
        """The digest of each recording's first user turn (``cassettes._first_user``), where
        every one is known and turns are compared; else None.

        Agents' conversations that reach the same turn with the same tool result share a
        bucket (its number of turns and last turn); their first user turns (each eval
        case's own) tell them apart. Two requests with one key have one first user turn
        (no canonical form changes a turn's text, and rules that leave out part of the
        contents turn buckets by turns off), so a request's recordings are all in its
        narrowed bucket. Recordings in memory are filed by it as the index is built (with
        their bucket, from their model); a lazily loaded cassette's digests come from its
        side index, and a bucket of several of its recordings is narrowed when a request
        first lands in it (:meth:`_bucket_of`), so building the index reads none."""
        if not self._use_turns:
            return None
        if lazy is not None:
            return lazy.first_user if lazy.first_users_known() else None
        exchanges = self._exchanges
        return lambda position: first_user_key(_json_body(exchanges[position].request))

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

    def _resolve_until(
        self, bucket: tuple[object, ...], key: str, spelled: bytes | None = None
    ) -> None:
        """Queue the bucket's next recordings, in recording order, until one keyed ``key``
        is queued or the bucket is done; each is keyed once, when first needed. Call under
        the lock.

        ``spelled`` is the requested JSON body's :func:`json_spelling`: a recording whose
        body spells the same has ``key`` too (the route is the bucket's), and one that
        spells otherwise is keyed from its spelling (each body spelled once).

        A queue's positions are those of the bucket's resolved prefix, in order, so the
        n-th identical request still gets the n-th recording of its key: an unplayed one
        already queued comes before any recording not yet resolved."""
        positions = self._members.get(bucket)
        if positions is None:
            return
        name = self._wired.get(bucket)
        if name and name not in self._aliased:
            # Played from the wire: its recordings, all alike, are in that queue already.
            method, url, parts = self._recorded_parts(positions[0])
            self._aliases[match_key(method, url, parts, self.rules)] = name
            self._aliased.add(name)
        done = self._resolved.get(bucket, 0)
        while done < len(positions):
            position = positions[done]
            done += 1
            method, url, parts = self._recorded_parts(position)
            if spelled is not None and parts[0] == "json":
                route = route_of(method, url)
                own = json_spelling(route[1], parts[1], self.rules)
                found = key if own == spelled else spelled_key(route, own)
            else:
                found = match_key(method, url, parts, self.rules)
            self._queues.setdefault(found, []).append(position)
            if found == key:
                break
        self._resolved[bucket] = done

    def _recorded_parts(self, position: int) -> tuple[str, str, BodyParts]:
        """The method, URL and body parts of the recording at ``position``; a lazily loaded
        one's JSON request is read from the file's lines (its body parsed, no model built)."""
        if isinstance(self._exchanges, LazyExchanges):
            read = raw_json_request(*self._exchanges.mapped(position))
            if read is not None:
                method, url, value = read
                return method, url, ("json", value)
        request = self._exchanges[position].request
        return request.method, request.url, body_parts_of(request.body)

    def __len__(self) -> int:
        return len(self._exchanges)

    def lookup(self, request: RecordedRequest) -> Exchange | None:
        """The recorded exchange that answers ``request``, or None on a miss.

        The n-th identical request gets the n-th recorded response; once a queue is
        exhausted its last response repeats.
        """
        parts = body_parts_of(request.body)
        return self._lookup(request.method, request.url, parts, lambda: request)

    def lookup_wire(self, request: WireRequest) -> Exchange | None:
        """:meth:`lookup` of a request read from the wire (no model built for a hit): one
        whose bytes are a recording's as google-genai sends it is found by their digest,
        its body not parsed (:meth:`_by_wire`); any other by its parsed body."""
        found = self._by_wire(request)
        if found is not None:
            return found
        return self._lookup(request.method, request.url, request.body, request.recorded)

    def _lookup(
        self,
        method: str,
        url: str,
        parts: BodyParts,
        recorded: Callable[[], RecordedRequest],
    ) -> Exchange | None:
        key, spelled = keyed(method, url, parts, self.rules)
        bucket: BucketKey | None = None
        with self._lock:
            key = self._aliases.get(key, key)
            queue = self._queues.get(key)
            if queue is None or self._cursor.get(key, 0) >= len(queue):
                bucket = self._bucket_of(method, url, parts)
                self._resolve_until(bucket, key, spelled)
                key = self._aliases.get(key, key)
                queue = self._queues.get(key)
            if queue is None and self._partial:
                key = self._partial_key(recorded())
                queue = self._queues.get(key) if key else None
            if queue is None:
                bucket = bucket or self._bucket_of(method, url, parts)
                return self._sibling_branch(recorded(), bucket)
            return self._take(key, queue)

    def _take(self, key: str, queue: list[int]) -> Exchange:
        """The next recording of the queue named ``key`` (its last once all are played).
        Call under the lock."""
        cursor = self._cursor.get(key, 0)
        if cursor < len(queue):
            self._cursor[key] = cursor + 1
            position = queue[cursor]
        else:
            position = queue[-1]
        self._used.add(position)
        return self._exchanges[position]

    def _by_wire(self, request: WireRequest) -> Exchange | None:
        """The recording :meth:`_lookup` answers ``request`` with, found by the digest of its
        bytes where it decides without parsing them; None where it does not (the caller
        matches the parsed body).

        A lazily loaded cassette's side index keeps each JSON request's digest as
        google-genai sends it (``cassettes._wire_digest``; none where its index does not
        check out, so a file edited by hand is matched by its parsed bodies). A request
        with that digest on the recording's route holds the recording's body, so it has
        the recording's key and lands in its bucket, which holds every recording of that
        key (``cassettes._bucket_keys``). Where every recording of that bucket has the same
        digest, they are that key's whole queue, in recording order: the request takes
        its next one, as :meth:`_lookup` would (the queue shared with it:
        :meth:`_resolve_until`)."""
        exchanges, content = self._exchanges, request.content
        if not isinstance(exchanges, LazyExchanges) or content[:1] not in (b"{", b"["):
            return None  # only a JSON object or array has a digest
        with self._lock:
            table = self._wire_table(exchanges)
        if not table:
            return None
        digest = wire_digest(content)
        route = route_of(request.method, request.url)
        with self._lock:
            for position in table.get(digest, ()):
                bucket = exchanges.bucket(position)
                if bucket is None or bucket[:3] != route:
                    continue
                first = functools.partial(self._first_of, position)
                bucket = self._narrowed(narrow(bucket, use_turns=self._use_turns), first)
                name = self._wired_queue(exchanges, bucket, digest)
                return self._take(name, self._queues[name]) if name else None
        return None

    def _first_of(self, position: int) -> str | None:
        """The digest of the first user turn of the recording at ``position`` (None: buckets
        are not narrowed)."""
        first_user = self._first_user
        return None if first_user is None else first_user(position)

    def _wire_table(self, exchanges: LazyExchanges) -> dict[bytes, list[int]]:
        """The recordings by wire digest (built at the first call). Call under the lock."""
        if self._wires is None:
            self._wires = {}
            for position, digest in enumerate(exchanges.wires()):
                if digest is not None and digest != NO_DIGEST and position not in self._partials:
                    self._wires.setdefault(digest, []).append(position)
        return self._wires

    def _wired_queue(self, exchanges: LazyExchanges, bucket: BucketKey, digest: bytes) -> str:
        """The name of the queue holding every recording of ``bucket`` when each has
        ``digest``, and no request has been matched into the bucket by its parsed body
        (its queues are filed by key then: :meth:`_resolve_until`); else ''. Call under
        the lock."""
        name = self._wired.get(bucket)
        if name is None:
            members = self._members.get(bucket, [])
            alike = bool(members) and all(exchanges.wire(p) == digest for p in members)
            name = f"wire:{members[0]}" if alike and not self._resolved.get(bucket) else ""
            if name:
                self._queues[name] = list(members)
                self._resolved[bucket] = len(members)
            self._wired[bucket] = name
        return name

    def _bucket_of(self, method: str, url: str, parts: BodyParts) -> BucketKey:
        """The request's bucket (see :meth:`_narrowed`). Call under the lock."""
        kind, payload = parts
        value = payload if kind == "json" else None
        bucket = bucket_key(method, url, kind, value, use_turns=self._use_turns)
        return self._narrowed(bucket, lambda: first_user_key(value))

    def _narrowed(self, bucket: BucketKey, first: Callable[[], str | None]) -> BucketKey:
        """``bucket``, or where it holds several recordings with turns counted and their first
        user turns are known, the part of it with the first user turn whose digest is
        ``first()`` (the bucket is split on first use). Call under the lock."""
        first_user = self._first_user
        if first_user is None or not has_turns(bucket):
            return bucket
        if isinstance(self._exchanges, LazyExchanges):
            members = self._members.get(bucket)
            if members is None or len(members) < 2:
                return bucket
            if bucket not in self._split:
                self._split.add(bucket)
                for position in members:
                    narrowed = with_first_user(bucket, first_user(position))
                    self._members.setdefault(narrowed, []).append(position)
        return with_first_user(bucket, first())

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
        members = self._same_first_user(self._members.get(bucket, []), request)
        if not members:
            return None
        wanted = _branch_key(request.method, request.url, _json_dict(request), self.rules)
        matches = [p for p in members if self._branch_of(p) == wanted]
        if not matches:
            return None
        cursor = self._cursor.get(wanted, 0)
        fresh = [p for p in matches if p not in self._used]
        position = fresh[0] if fresh else matches[min(cursor, len(matches) - 1)]
        self._cursor[wanted] = cursor + 1
        self._used.add(position)
        return self._exchanges[position]

    def _same_first_user(self, members: list[int], request: RecordedRequest) -> list[int]:
        """Of a lazily loaded cassette's ``members``, those whose first user turn may be
        ``request``'s, by the side index's digests (no exchange read): a branch of the same
        conversation has the same user turns."""
        exchanges = self._exchanges
        text = first_user_text(_json_dict(request))
        if not isinstance(exchanges, LazyExchanges) or text is None:
            return members
        digest = first_user_digest(text)
        return [p for p in members if exchanges.first_user(p) in (digest, None)]

    def _branch_of(self, position: int) -> str:
        key = self._branches.get(position)
        if key is None:
            method, url, (kind, value) = self._recorded_parts(position)
            body = value if kind == "json" and isinstance(value, dict) else {}
            key = self._branches[position] = _branch_key(method, url, body, self.rules)
        return key

    def nearest(self, request: RecordedRequest) -> Exchange | None:
        """The recording most like ``request``, to explain a miss (call only on a miss).

        Prefers the same method and path; then the longest common prefix of
        ``contents`` turns, the same ``tools``, ``systemInstruction`` and
        ``generationConfig``, the closest number of turns; then recordings not yet played,
        then the earliest. Scored on the stored JSON with plain ``==`` (C speed, nothing
        serialised). Of a lazily loaded cassette only the likeliest few recordings are read
        (``cassettes._nearest``), their bodies parsed without building models, and only
        the nearest is parsed into one.
        """
        if not self._exchanges:
            return None
        method, path, query = _route(request)
        close: Sequence[int] = self._on_route(method, path)
        wider: Sequence[int] = ()
        with self._lock:
            used = set(self._used)
            if isinstance(self._exchanges, LazyExchanges):
                close, wider = self._likeliest(self._exchanges, request, close)
        wanted = _json_dict(request)
        wanted_turns = _history(wanted)
        wanted_sections = [wanted.get(name) for name in _SECTIONS]

        def score(position: int) -> tuple[int, ...]:
            recorded_method, url, (kind, value) = self._recorded_parts(position)
            recorded_method, recorded_path, recorded_query = route_of(recorded_method, url)
            recorded = value if kind == "json" and isinstance(value, dict) else {}
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

        scored = functools.cache(score)
        best = max(close, key=scored, default=None)
        # Outside the request's conversation no recording shares its opening turn: one
        # within it that does is nearer than any other, and no other needs reading.
        if best is None or scored(best)[:3] < (1, 1, 1) or not _opens_with_user(wanted_turns):
            best = max([*close, *wider], key=scored)
        return self._exchanges[best]

    def _on_route(self, method: str, path: str) -> Sequence[int]:
        """The recordings on the route (method and path), else on the path, else all."""
        candidates = self._by_route.get((method, path))
        if candidates:
            return candidates
        same_path = [p for (_, other), ps in self._by_route.items() if other == path for p in ps]
        return same_path or range(len(self._exchanges))

    def _likeliest(
        self, exchanges: LazyExchanges, request: RecordedRequest, route: Sequence[int]
    ) -> tuple[Sequence[int], Sequence[int]]:
        """The recordings of a lazily loaded cassette worth reading to explain a miss of
        ``request`` (``cassettes._nearest``); of ``route``, the candidates when the request's
        route has no recording, the first few. Call under the lock.

        Returns:
            The recordings of the request's conversation (by its first user turn), and
            those to read besides when none of them shares its opening turn.
        """
        if self._likely is None:
            self._likely = Likeliest(exchanges)
        bucket = request_bucket(request, use_turns=True)
        method, path = bucket[0], bucket[1]
        if (method, path) not in self._by_route:
            return route[:READ], ()
        count, _ = turns_in(bucket)
        text = first_user_text(_json_dict(request))
        first = None if text is None else first_user_digest(text)
        same = self._members.get(narrow(bucket, use_turns=self._use_turns), [])
        on_route = self._by_route[(method, path)]
        return self._likely.candidates((str(method), str(path)), first, count, same, on_route)

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
