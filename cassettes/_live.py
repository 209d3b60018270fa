"""Gemini Live sessions in a recording: the ``live`` section of a cassette, and its journal lines.

A Live session is one WebSocket (``BidiGenerateContent``) that carries a whole real-time
conversation: the client's ``setup``, its turns (``client_content``), audio and video
(``realtime_input``, base64 inside the JSON) and tool answers (``tool_response``); the
server's ``setupComplete``, ``serverContent`` (model turn parts, ``generationComplete``,
``turnComplete``, ``interrupted``, transcriptions), ``toolCall``, ``usageMetadata`` and so
on. rec records it as the ordered log of frames in both directions, each with its offset
from the opening of the socket::

    "live": {
      "format_version": 1,
      "sessions": [
        {
          "id": 0,
          "opened_at": "2026-11-29T12:00:00.000000+00:00",
          "url": "wss://generativelanguage.googleapis.com/ws/google.ai...BidiGenerateContent",
          "headers": {"user-agent": "google-genai-sdk/2.34.0 gl-python/3.11.7"},
          "frames": [
            {"sender": "client", "offset_ms": 0.4, "data": {"setup": {"model": "models/m"}}},
            {"sender": "server", "offset_ms": 31.0, "data": {"setupComplete": {}}, "binary": true},
            {"sender": "client", "offset_ms": 32.2, "data": {"client_content": {...}}}
          ],
          "close_code": 1000
        }
      ]
    }

A frame holding JSON is stored parsed in ``data`` (``binary: true`` when it came as a
binary WebSocket frame, as the Gemini API sends its messages); any other frame is stored
as ``text``, or as ``base64`` for binary. Audio and video stay base64 inside the JSON, as
on the wire, up to 64 KiB a blob: a larger blob is kept in a file beside the cassette and
referred to from the frame's ``media`` list when the cassette is written, and read back when
it is loaded (``cassettes._live_media``). The URL and headers are stored redacted (the
``key`` parameter and credential headers never land), and every frame is redacted and
scanned like an exchange's body.

While recording, the proxy appends one :class:`LiveJournalLine` per event (the socket
opened, a frame, the socket closed) to ``.rec/<name>.live.jsonl`` through the journal, so
a crash keeps every frame journaled; finalising folds the lines into the section
(``recorder``'s composition of a finished recording). A session whose close was never
journaled is kept with ``complete: false``.
"""

from __future__ import annotations

import hashlib
import json
from base64 import b64encode
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cassettes._validation import Base64Text, Milliseconds

__all__ = [
    "LIVE_FORMAT_VERSION",
    "LIVE_PATH_MARKER",
    "LiveClose",
    "LiveFrame",
    "LiveJournalLine",
    "LiveMedia",
    "LiveOpen",
    "LiveRecording",
    "LiveSession",
    "audio_digest",
    "frame_from_message",
    "frame_kind",
    "is_live_path",
    "turn_of",
]

LIVE_FORMAT_VERSION: Literal[1] = 1
"""Version of the ``live`` section this rec writes and reads."""

LIVE_PATH_MARKER = "BidiGenerateContent"
"""Every Live endpoint's path ends in it: the Gemini API's
``/ws/google.ai.generativelanguage.{version}.GenerativeService.BidiGenerateContent``
(and ``BidiGenerateContentConstrained`` for ephemeral tokens) and Vertex AI's
``/ws/google.cloud.aiplatform.{version}.LlmBidiService/BidiGenerateContent``."""


def is_live_path(path_qs: str) -> bool:
    """Whether a request path is a Live (BidiGenerateContent) WebSocket endpoint."""
    path = path_qs.split("?", 1)[0]
    return (
        path.startswith("/ws/") and LIVE_PATH_MARKER in path.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
    )


class _Model(BaseModel):
    # Built on first use: a command that reads no such section (``rec show`` of a
    # recording without one) builds none of these validators.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class LiveMedia(_Model):
    """Where a large base64 string of a frame's ``data`` is kept: a file beside the cassette.

    The string at ``at`` in the stored frame is a placeholder naming the file; loading the
    cassette puts the base64 back, spelled as recorded (``alphabet``, ``padded``), after
    checking the file's sha256 (``cassettes._live_media``).
    """

    at: list[str | int]
    """JSON path of the string inside the frame's ``data`` (keys and list indexes)."""
    file: str = Field(pattern=r"^[^/\\]+\.media/sha256-[0-9a-f]{64}\.[a-z0-9]+$")
    """The file, relative to the cassette's folder: ``NAME.media/sha256-<hex>.<ext>``."""
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """sha256 of the decoded bytes (the file's content)."""
    size: int = Field(ge=0)
    """Bytes in the file."""
    alphabet: Literal["standard", "urlsafe"] = "standard"
    padded: bool = True


class LiveFrame(_Model):
    """One WebSocket message, as it crossed the proxy."""

    sender: Literal["client", "server"]
    offset_ms: Milliseconds
    """Milliseconds from the opening of the socket to this frame."""
    data: Any = None
    """The parsed JSON of a frame that held JSON."""
    text: str | None = None
    """A text frame that was not JSON, verbatim."""
    base64: Base64Text | None = None
    """A binary frame that was not UTF-8 JSON, standard base64."""
    binary: Literal[True] | None = None
    """Set when a JSON frame came as a binary WebSocket message (replay sends it so again)."""
    media: list[LiveMedia] | None = None
    """Large inline media of ``data`` kept in files beside the cassette (only in the file:
    a loaded cassette has them back in ``data``)."""


def frame_from_message(
    sender: Literal["client", "server"], offset_ms: float, payload: str | bytes
) -> LiveFrame:
    """The stored form of one message: parsed JSON when it holds JSON."""
    binary = isinstance(payload, bytes)
    text: str | None
    if binary:
        try:
            text = payload.decode("utf-8")  # type: ignore[union-attr]
        except UnicodeDecodeError:
            text = None
    else:
        text = payload  # type: ignore[assignment]
    if text is not None:
        data = _plain_json(text)
        if data is not None:
            return LiveFrame(
                sender=sender, offset_ms=offset_ms, data=data, binary=True if binary else None
            )
        if not binary:
            return LiveFrame(sender=sender, offset_ms=offset_ms, text=text)
    encoded = b64encode(payload if isinstance(payload, bytes) else payload.encode())
    return LiveFrame(sender=sender, offset_ms=offset_ms, base64=encoded.decode("ascii"))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _plain_json(text: str) -> Any:
    """``text`` parsed, when it is JSON a parser reads back as it was: None for anything
    else (not JSON, nested deeper than a parser goes, ``NaN`` or ``Infinity``)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None


class LiveOpen(_Model):
    """The opening of a session (its upstream URL and request headers, redacted)."""

    opened_at: str
    url: str
    headers: dict[str, str] = Field(default_factory=dict)


class LiveClose(_Model):
    """How a session ended."""

    code: int | None = None
    """The WebSocket close code the upstream (or the client) sent; None when none was."""
    reason: str | None = None


class LiveSession(_Model):
    """One Live WebSocket, frame by frame."""

    id: int
    """Position of the session in opening order within the recording."""
    opened_at: str
    url: str
    """The upstream URL (the ``key`` query parameter removed)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Lower-cased request header names, credentials removed."""
    frames: list[LiveFrame] = Field(default_factory=list)
    close_code: int | None = None
    close_reason: str | None = None
    complete: bool = True
    """False when the recorder died before the session closed (its frames are kept)."""


class LiveRecording(_Model):
    """The ``live`` section: every Live session of the recording, in opening order."""

    format_version: Literal[1] = LIVE_FORMAT_VERSION
    sessions: list[LiveSession] = Field(default_factory=list)


class LiveJournalLine(_Model):
    """One line of the Live journal: a session opened, one of its frames, or its close."""

    session: int
    open: LiveOpen | None = None
    frame: LiveFrame | None = None
    close: LiveClose | None = None


def _message(data: Any) -> tuple[str, Any]:
    """The message's one top-level field and its value (``("client_content", {...})``)."""
    if isinstance(data, dict) and len(data) == 1:
        ((name, value),) = data.items()
        return name, value
    return "", data


_CAMEL = {
    "client_content": "clientContent",
    "realtime_input": "realtimeInput",
    "tool_response": "toolResponse",
}


def frame_kind(frame: LiveFrame) -> str:
    """The message type of a frame in camelCase (``clientContent``, ``realtimeInput``,
    ``serverContent``, ``toolCall``...; ``text``/``binary`` for frames that are not JSON).

    A server message may carry several fields (``serverContent`` with ``usageMetadata``):
    its kind is the first one.
    """
    if frame.data is None:
        return "binary" if frame.base64 is not None else "text"
    if isinstance(frame.data, dict) and frame.data:
        name = next(iter(frame.data))
        return _CAMEL.get(name, str(name))
    return "json"


def _audio_blobs(value: Any) -> list[Any]:
    """The media blobs of a ``realtime_input`` message (``audio``, ``video``,
    ``media_chunks``/``mediaChunks``)."""
    blobs: list[Any] = []
    if not isinstance(value, dict):
        return blobs
    for key in ("audio", "video"):
        if isinstance(value.get(key), dict):
            blobs.append(value[key])
    for key in ("media_chunks", "mediaChunks"):
        if isinstance(value.get(key), list):
            blobs.extend(value[key])
    return blobs


def audio_digest(frame: LiveFrame) -> str | None:
    """sha256 of the media bytes a ``realtime_input`` frame streams (None for any other).

    The base64 is hashed in one spelling (URL-safe, padded), so a chunk re-encoded in the
    other alphabet still matches.
    """
    name, value = _message(frame.data)
    if _CAMEL.get(name, name) != "realtimeInput":
        return None
    blobs = _audio_blobs(value)
    if not blobs:
        return None
    digest = hashlib.sha256()
    for blob in blobs:
        data = blob.get("data", "") if isinstance(blob, dict) else ""
        text = str(data).translate(str.maketrans("+/", "-_")).rstrip("=")
        digest.update(json.dumps([blob.get("mime_type") or blob.get("mimeType"), text]).encode())
    return digest.hexdigest()


def turn_of(frames: Sequence[LiveFrame], index: int) -> int:
    """The turn a frame belongs to (1-based): turns end at the server's ``turnComplete``."""
    turn = 1
    for frame in frames[:index]:
        if frame.sender != "server" or not isinstance(frame.data, dict):
            continue
        content = frame.data.get("serverContent")
        if isinstance(content, dict) and content.get("turnComplete"):
            turn += 1
    return turn
