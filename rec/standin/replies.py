"""What the stand-in Gemini API answers: requests, replies, responders (DESIGN.md §2).

:class:`StandinRequest` is what a responder sees; :class:`Reply` describes the answer
(unary JSON, SSE chunks, errors, a mid-stream error event, gzip, a cut stream, delays,
raw framing); :class:`ScriptedResponder` serves canned replies. The sans-IO helpers at
the end turn a Reply into the documents the server sends. Re-exported by
``standin``; nothing here imports rec's other packages.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "FAKE_API_KEY",
    "GENERATE_RPCS",
    "Reply",
    "Responder",
    "ScriptedResponder",
    "StandinRequest",
    "builtin_reply",
    "error_envelope",
    "finish_chunks",
    "merge_chunks",
    "parse_model_path",
    "split_text",
]

FAKE_API_KEY = "AIzaFAKE-rec-test-key-00000000000000000"
"""A fake key with the real shape (``AIza`` + 35 characters); never a real one."""

GENERATE_RPCS = ("generateContent", "streamGenerateContent")
"""The two RPCs a model answers (the others have built-in answers)."""

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
MODEL_PATH = re.compile(
    r"^(?P<prefix>.*?)/(?P<version>v\d[^/]*)/"
    r"(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/)?"
    r"(?:publishers/google/)?models/(?P<model>[^/:]+):(?P<rpc>\w+)$"
)


def error_envelope(code: int, message: str, status: str | None = None) -> dict[str, Any]:
    """The Google error envelope ``{"error": {"code", "message", "status"}}``."""
    return {
        "error": {
            "code": code,
            "message": message,
            "status": status or _STATUS_NAMES.get(code, "UNKNOWN"),
        }
    }


def split_text(text: str, pieces: int) -> list[str]:
    """Split text at word boundaries into at most ``pieces`` parts that join back to it."""
    words = re.findall(r"\S+\s*|\s+", text)
    pieces = max(1, min(pieces, len(words)))
    size, extra = divmod(len(words), pieces)
    out, start = [], 0
    for i in range(pieces):
        end = start + size + (1 if i < extra else 0)
        out.append("".join(words[start:end]))
        start = end
    return out or [text]


@dataclass(frozen=True)
class StandinRequest:
    """One request the stand-in received (also what a responder is given)."""

    method: str
    """HTTP method."""
    path: str
    """The URL path (without the query)."""
    query: dict[str, str]
    """Query parameters (last value wins)."""
    headers: dict[str, str]
    """Lower-cased header names."""
    raw_body: bytes
    """The request body as received (after chunked decoding)."""
    body: Any
    """The body parsed as JSON, or None."""
    index: int
    """Arrival position on this server (0-based)."""
    header_names: tuple[str, ...] = ()
    """Header names as sent, in order (tells HTTP clients apart: httpx vs aiohttp)."""
    version: str | None = None
    """API version segment (``v1beta``, ``v1``, ``v1beta1``), None for other paths."""
    model: str | None = None
    """Model name from the path."""
    rpc: str | None = None
    """``generateContent``, ``streamGenerateContent``, ``countTokens``, ..."""
    project: str | None = None
    """Vertex project, None for Gemini API paths."""
    location: str | None = None
    """Vertex location."""

    @property
    def api_key(self) -> str | None:
        """The key sent as ``x-goog-api-key`` (or ``?key=``)."""
        return self.headers.get("x-goog-api-key") or self.query.get("key")

    @property
    def http_client(self) -> Literal["httpx", "aiohttp"]:
        """Which client sent it: httpx sends ``Connection: keep-alive`` first, aiohttp none."""
        return "httpx" if "Connection" in self.header_names else "aiohttp"

    @property
    def stream(self) -> bool:
        """True for ``streamGenerateContent``."""
        return self.rpc == "streamGenerateContent"

    @property
    def vertex(self) -> bool:
        """True for a Vertex path (``/projects/.../publishers/google/models/...``)."""
        return self.project is not None or "/publishers/google/" in self.path

    @property
    def accepts_gzip(self) -> bool:
        """True when the client sent ``Accept-Encoding`` including gzip."""
        return "gzip" in self.headers.get("accept-encoding", "").lower()

    @property
    def contents(self) -> list[dict[str, Any]]:
        """``contents`` of a generate/countTokens body ([] otherwise)."""
        body = self.body if isinstance(self.body, dict) else {}
        return list(body.get("contents") or [])

    @property
    def system_instruction(self) -> str:
        """The text of ``systemInstruction`` ('' when absent)."""
        body = self.body if isinstance(self.body, dict) else {}
        si = body.get("systemInstruction") or body.get("system_instruction") or {}
        if isinstance(si, str):
            return si
        return "".join(p.get("text", "") for p in si.get("parts") or [] if isinstance(p, dict))


@dataclass(frozen=True)
class Reply:
    """What the stand-in sends back for one request.

    ``chunks`` are JSON documents: for a unary call they are merged into one response
    (text parts concatenated), for ``streamGenerateContent`` each is one SSE event
    ``data: <json>\\r\\n\\r\\n``. Generate responses that lack ``modelVersion``,
    ``responseId`` or ``usageMetadata`` get deterministic ones unless ``exact``.
    """

    chunks: tuple[Any, ...] = ()
    """Response JSON documents (GenerateContentResponse for generate calls)."""
    status: int = 200
    """HTTP status of a non-error reply."""
    error: dict[str, Any] | None = None
    """An error envelope; sent with HTTP ``error.code`` unless ``error_after`` is set."""
    error_after: int | None = None
    """Stream only: send this many chunks with status 200, then the error as an event."""
    cut_after: int | None = None
    """Stream only: send this many events, then close the connection mid-body."""
    delay_s: float = 0.0
    """Seconds between stream events."""
    first_delay_s: float = 0.0
    """Seconds before the response starts (status line, headers and first event)."""
    gzip: Literal["auto", "always", "never"] = "auto"
    """auto: gzip unary bodies when the client accepts gzip; always: also streams."""
    headers: tuple[tuple[str, str], ...] = ()
    """Extra response headers."""
    raw_events: tuple[bytes, ...] | None = None
    """Stream only: exact bytes of each event, for framing tests (replaces chunks)."""
    exact: bool = False
    """Send chunks as given (no filled-in modelVersion/responseId/usageMetadata)."""
    body: bytes | None = None
    """Unary only: the exact body bytes (replaces chunks; no gzip unless ``headers`` say
    so): broken encodings, huge or deeply nested documents, ``NaN``, anything."""
    cut_at: int | None = None
    """Close the connection after this many bytes of the body (unary: ``Content-Length``
    still announces all of it; stream: counted over the event bytes)."""
    hang: bool = False
    """Never answer: read the request, then keep the connection open and silent."""

    def replace(self, **changes: Any) -> Reply:
        """A copy with some fields changed (``reply.replace(delay_s=0.3)``)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def json(cls, document: Any, *, status: int = 200, **options: Any) -> Reply:
        """A unary JSON reply (any endpoint)."""
        return cls(chunks=(document,), status=status, **options)

    @classmethod
    def parts(cls, *parts: dict[str, Any], finish_reason: str = "STOP", **options: Any) -> Reply:
        """One model turn made of raw part dicts, in a single chunk."""
        chunk = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": list(parts)},
                    "finishReason": finish_reason,
                    "index": 0,
                }
            ]
        }
        return cls(chunks=(chunk,), **options)

    @classmethod
    def text(
        cls, text: str, *, chunks: int = 1, finish_reason: str = "STOP", **options: Any
    ) -> Reply:
        """A text answer split into ``chunks`` stream events (merged again for unary)."""
        pieces = split_text(text, chunks)
        out = []
        for i, piece in enumerate(pieces):
            candidate: dict[str, Any] = {
                "content": {"role": "model", "parts": [{"text": piece}]},
                "index": 0,
            }
            if i == len(pieces) - 1:
                candidate["finishReason"] = finish_reason
            out.append({"candidates": [candidate]})
        return cls(chunks=tuple(out), **options)

    @classmethod
    def calls(cls, *calls: tuple[str, dict[str, Any]], **options: Any) -> Reply:
        """Function calls (parallel when several): ``Reply.calls(("f", {"x": 1}))``."""
        parts = [{"functionCall": {"name": name, "args": args}} for name, args in calls]
        return cls.parts(*parts, **options)

    @classmethod
    def fail(
        cls,
        code: int,
        message: str | None = None,
        *,
        status: str | None = None,
        after: Iterable[Any] | None = None,
        **options: Any,
    ) -> Reply:
        """An error with the Google envelope and HTTP ``code``.

        With ``after`` (a list of chunks), a stream sends those chunks first and then the
        error as a ``data: {"error": ...}`` event with HTTP 200, as the real API does once
        a stream has started.
        """
        envelope = error_envelope(code, message or f"standin error {code}", status)
        if after is None:
            return cls(error=envelope, **options)
        chunks = tuple(after)
        return cls(chunks=chunks, error=envelope, error_after=len(chunks), **options)

    @classmethod
    def raw(
        cls,
        body: bytes,
        *,
        status: int = 200,
        content_type: str = "application/json; charset=UTF-8",
        **options: Any,
    ) -> Reply:
        """A unary reply whose body bytes are sent exactly as given (fault tests)."""
        headers = (("Content-Type", content_type), *options.pop("headers", ()))
        return cls(body=body, status=status, headers=headers, gzip="never", **options)

    @classmethod
    def stream_events(cls, events: Iterable[bytes], **options: Any) -> Reply:
        """A stream whose event bytes are sent exactly as given (framing tests)."""
        return cls(raw_events=tuple(events), **options)


Responder = Callable[[StandinRequest], "Reply | None"]
"""A responder decides the reply; None asks for the built-in one."""


class ScriptedResponder:
    """Canned replies, served in order, optionally only for a given model or RPC.

    Each entry is used once (unless it is the last one and ``repeat_last``). When nothing
    matches, ``fallback`` (another responder) answers, else the built-in answer.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        fallback: Responder | None = None,
        repeat_last: bool = False,
    ) -> None:
        self._entries: list[tuple[str | None, str | None, Reply]] = [
            (None, None, r) for r in replies
        ]
        self._lock = threading.Lock()
        self.fallback = fallback
        self.repeat_last = repeat_last
        self.served = 0

    def add(self, reply: Reply, *, model: str | None = None, rpc: str | None = None) -> None:
        """Queue a reply, for one model (None: any) and RPC (None: the generate RPCs)."""
        with self._lock:
            self._entries.append((model, rpc, reply))

    @property
    def pending(self) -> int:
        """Replies not served yet."""
        return len(self._entries)

    def __call__(self, request: StandinRequest) -> Reply | None:
        with self._lock:
            for i, (model, rpc, reply) in enumerate(self._entries):
                if model is not None and model != request.model:
                    continue
                if (rpc is None and request.rpc not in GENERATE_RPCS) or (
                    rpc is not None and rpc != request.rpc
                ):
                    continue
                if not (self.repeat_last and len(self._entries) == 1):
                    del self._entries[i]
                self.served += 1
                return reply
        return self.fallback(request) if self.fallback else None


# ---------------------------------------------------------------------------------------
# Turning a Reply into bytes


def _words(value: Any) -> int:
    """Deterministic token count: words in every string of a JSON document."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, dict):
        return sum(_words(v) for k, v in value.items() if k not in ("thoughtSignature", "role"))
    if isinstance(value, list):
        return sum(_words(v) for v in value)
    return 0


def finish_chunks(request: StandinRequest, chunks: list[Any]) -> list[Any]:
    """Fill modelVersion/responseId/usageMetadata on generate responses."""
    prompt = _words(request.body)
    response_id = hashlib.sha256(request.raw_body).hexdigest()[:22]
    produced = 0
    out = []
    for chunk in chunks:
        if not (isinstance(chunk, dict) and "candidates" in chunk):
            out.append(chunk)
            continue
        chunk = dict(chunk)
        produced += _words(chunk["candidates"])
        chunk.setdefault(
            "usageMetadata",
            {
                "promptTokenCount": prompt,
                "candidatesTokenCount": produced,
                "totalTokenCount": prompt + produced,
            },
        )
        chunk.setdefault("modelVersion", request.model or "standin")
        chunk.setdefault("responseId", response_id)
        out.append(chunk)
    return out


def merge_chunks(chunks: list[Any]) -> Any:
    """Merge stream chunks into one unary response (text parts concatenated)."""
    if len(chunks) == 1 or not all(isinstance(c, dict) and "candidates" in c for c in chunks):
        return chunks[0] if chunks else {}
    parts: list[dict[str, Any]] = []
    for chunk in chunks:
        for candidate in chunk["candidates"][:1]:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if parts and set(part) == {"text"} and set(parts[-1]) == {"text"}:
                    parts[-1] = {"text": parts[-1]["text"] + part["text"]}
                else:
                    parts.append(dict(part))
    merged = dict(chunks[-1])
    candidate = dict(chunks[-1]["candidates"][0])
    candidate["content"] = {"role": "model", "parts": parts}
    merged["candidates"] = [candidate]
    for key in ("modelVersion", "responseId"):
        if key in chunks[0]:
            merged[key] = chunks[0][key]
    return merged


def builtin_reply(request: StandinRequest) -> Reply:
    """Answers for requests no responder handled."""
    body = request.body if isinstance(request.body, dict) else {}
    if request.rpc == "countTokens":
        return Reply.json({"totalTokens": _words(body.get("contents"))})
    if request.rpc == "batchEmbedContents":
        embeddings = []
        for item in body.get("requests") or []:
            digest = hashlib.sha256(json.dumps(item, sort_keys=True).encode()).digest()
            embeddings.append({"values": [round(b / 255, 6) for b in digest[:8]]})
        return Reply.json({"embeddings": embeddings})
    if request.rpc in GENERATE_RPCS:
        return Reply.fail(
            400,
            f"standin: no reply scripted for request #{request.index} "
            f"({request.model}:{request.rpc}); give the responder one",
            status="FAILED_PRECONDITION",
        )
    return Reply.fail(404, f"standin: no route for {request.method} {request.path}")


def parse_model_path(path: str) -> dict[str, str | None]:
    """version/model/rpc/project/location of a model API path ({} for other paths)."""
    match = MODEL_PATH.match(path)
    if not match:
        return {}
    return {k: match.group(k) for k in ("version", "model", "rpc", "project", "location")}
