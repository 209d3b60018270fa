"""The cassette: rec's recording of HTTP exchanges, and the pure decisions made over it.

The cassette format and its bodies (JSON, text, base64, SSE events), SSE framing,
request canonicalisation and matching, miss explanations, secret redaction, atomic file
writes and the exceptions every rec package raises. Nothing here opens a socket or runs
an event loop; everything is a sync function over typed values, so it can be tested
without a port.
"""

from __future__ import annotations

from ._json_file import parse_json, read_file
from .atomic_write import (
    FILE_MODE_VARIABLE,
    ensure_writable,
    file_mode,
    fsync_folder,
    locked,
    private_folder,
    write_atomic,
)
from .bodies import (
    IncrementalDecoder,
    body_from_bytes,
    body_to_bytes,
    decode_content,
    json_of,
    raw_body,
    stored_body,
)
from .cassette import (
    FORMAT_VERSION,
    BinaryBody,
    Body,
    Cassette,
    Exchange,
    JsonBody,
    RecordedRequest,
    RecordedResponse,
    SseBody,
    SseEvent,
    TextBody,
    dump_cassette,
    load_cassette,
    parse_cassette,
    pydantic_error_location,
    save_cassette,
)
from .divergence import MISS_HTTP_STATUS, explain_miss, miss_error_body
from .errors import (
    InputError,
    RecError,
    ReplayMiss,
    RunError,
    SecretFound,
    UpstreamError,
    did_you_mean,
)
from .matching import CanonicalRequest, MatchIndex, MatchRules, canonical_request, request_key
from .redaction import (
    DEFAULT_REDACTED_HEADERS,
    DEFAULT_REDACTED_QUERY_PARAMS,
    REDACTED,
    RedactionRules,
    SecretHit,
    credentials_in,
    ensure_no_secrets,
    mask,
    redact_exchange,
    scan_for_secrets,
)
from .sse import SseSplitter, event_from_raw, frame_event, frame_tail
from .timing import now_iso
from .user_agent import client_versions

__all__ = [
    "BinaryBody",
    "Body",
    "CanonicalRequest",
    "Cassette",
    "DEFAULT_REDACTED_HEADERS",
    "DEFAULT_REDACTED_QUERY_PARAMS",
    "Exchange",
    "FILE_MODE_VARIABLE",
    "FORMAT_VERSION",
    "IncrementalDecoder",
    "InputError",
    "JsonBody",
    "MISS_HTTP_STATUS",
    "MatchIndex",
    "MatchRules",
    "REDACTED",
    "RecError",
    "RecordedRequest",
    "RecordedResponse",
    "RedactionRules",
    "ReplayMiss",
    "RunError",
    "SecretFound",
    "SecretHit",
    "SseBody",
    "SseEvent",
    "SseSplitter",
    "TextBody",
    "UpstreamError",
    "body_from_bytes",
    "body_to_bytes",
    "canonical_request",
    "client_versions",
    "credentials_in",
    "decode_content",
    "did_you_mean",
    "dump_cassette",
    "ensure_no_secrets",
    "ensure_writable",
    "event_from_raw",
    "explain_miss",
    "file_mode",
    "frame_event",
    "frame_tail",
    "fsync_folder",
    "json_of",
    "load_cassette",
    "locked",
    "mask",
    "miss_error_body",
    "now_iso",
    "parse_cassette",
    "parse_json",
    "private_folder",
    "pydantic_error_location",
    "raw_body",
    "read_file",
    "redact_exchange",
    "request_key",
    "save_cassette",
    "scan_for_secrets",
    "stored_body",
    "write_atomic",
]
