"""Server-sent events: split a byte stream into events, and frame events back into bytes.

Sans-IO: the recorder feeds chunks as they arrive (:class:`SseSplitter`) and the replayer
turns stored events back into the exact bytes a client expects (:func:`frame_event`).
Gemini's stream is ``data: <one-line JSON>\\r\\n\\r\\n`` per event; google-genai's parser
rejects anything else, so framing must round-trip exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from cassettes._cassette import SseEvent
from cassettes._exact_json import exact_json

__all__ = ["SseSplitter", "event_from_raw", "frame_event", "frame_tail"]

LineEnding = Literal["\r\n", "\n"]


@dataclass
class SseSplitter:
    """Incrementally split a ``text/event-stream`` body into raw events.

    Each event is returned as the text between event separators (without the
    separator). Bytes after the last separator stay buffered; :attr:`pending` gives
    them for a stream that was cut.
    """

    line_ending: LineEnding | None = None
    lossy: bool = False
    """True once an event was not valid UTF-8 (its text, stored, would not be its bytes)."""
    _buffer: bytes = field(default=b"", repr=False)

    def feed(self, chunk: bytes) -> list[str]:
        """Add a chunk; return the events it completed."""
        self._buffer += chunk
        if self.line_ending is None:
            if b"\r\n" in self._buffer:
                self.line_ending = "\r\n"
            elif b"\n" in self._buffer:
                self.line_ending = "\n"
            else:
                return []
        separator = (self.line_ending * 2).encode()
        events: list[str] = []
        while True:
            index = self._buffer.find(separator)
            if index < 0:
                break
            events.append(self._text(self._buffer[:index]))
            self._buffer = self._buffer[index + len(separator) :]
        return events

    def _text(self, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self.lossy = True
            return data.decode("utf-8", errors="replace")

    def tail(self) -> str | None:
        """The bytes after the last complete event as text (None when there are none)."""
        return self._text(self._buffer) if self._buffer else None

    @property
    def pending(self) -> bytes:
        """Bytes received after the last complete event."""
        return self._buffer


def event_from_raw(raw: str, *, offset_ms: float, line_ending: LineEnding) -> SseEvent:
    """Store one raw event: parsed when it is a single JSON ``data:`` line, else verbatim."""
    if raw.startswith("data: ") and line_ending not in raw and "\n" not in raw:
        parsed, data = exact_json(raw[len("data: ") :])
        if parsed and data is not None and _compact(data) is not None:
            return SseEvent(offset_ms=round(offset_ms, 3), data=data)
    return SseEvent(offset_ms=round(offset_ms, 3), lines=raw.split(line_ending))


def _compact(data: object) -> str | None:
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


def frame_event(event: SseEvent, line_ending: LineEnding = "\r\n") -> bytes:
    """The bytes of one event as the client must receive them, separator included."""
    if event.lines is not None:
        text = line_ending.join(event.lines)
    else:
        text = "data: " + json.dumps(event.data, ensure_ascii=False, separators=(",", ":"))
    return (text + line_ending * 2).encode("utf-8")


def frame_tail(tail: str | None) -> bytes:
    """The trailing partial bytes of a cut stream."""
    return tail.encode("utf-8") if tail else b""
