"""Large inline media of Live sessions, kept beside the cassette in content-addressed files.

A Live session streams audio and video as base64 inside its JSON frames: the client's
``realtime_input`` blobs (``audio``, ``video``, ``media_chunks``) and the model's
``inlineData`` parts. A blob of at least :data:`MEDIA_THRESHOLD` decoded bytes is not
written into the cassette: its bytes go to ``NAME.media/sha256-<hex>.<ext>`` in the
cassette's folder (the extension from its MIME type), and the frame keeps a placeholder
string where the base64 was and a :class:`~cassettes._live.LiveMedia` reference in its
``media`` list::

    {"sender": "server", "offset_ms": 120.5, "binary": true,
     "data": {"serverContent": {"modelTurn": {"parts": [{"inlineData": {
         "mimeType": "audio/pcm;rate=24000",
         "data": "<rec media: 96000 bytes in talk.media/sha256-3f1c….pcm>"}}]}}},
     "media": [{"at": ["serverContent", "modelTurn", "parts", 0, "inlineData", "data"],
                "file": "talk.media/sha256-3f1c….pcm", "sha256": "3f1c…", "size": 96000,
                "alphabet": "standard", "padded": true}]}

:func:`store_media_apart` makes that form when a cassette is saved (the files are written
before the cassette, each atomically, so a cassette never names a file that is not there);
:func:`restore_media` undoes it when a cassette is loaded, so everything that reads a
cassette (replay, ``rec serve``, merging, redaction) sees the frames as they crossed the
wire, base64 spelled as recorded (alphabet and padding). A file that is missing or whose
sha256 differs is an :class:`~cassettes._errors.InputError` naming the cassette and the
frame; ``rec check`` reports each one (:func:`media_problems`). Being content-addressed,
the same bytes are one file however often they were sent, and a file is never rewritten.
"""

from __future__ import annotations

import binascii
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from cassettes._errors import InputError
from cassettes._file_names import recording_name
from cassettes._live import LiveFrame, LiveMedia, LiveRecording, LiveSession

__all__ = [
    "MEDIA_THRESHOLD",
    "media_folder",
    "media_problems",
    "restore_media",
    "store_media_apart",
    "write_media",
]

MEDIA_THRESHOLD = 64 * 1024
"""Decoded bytes from which a Live blob is kept in a side file (smaller ones stay inline)."""

_MIN_TEXT = MEDIA_THRESHOLD * 4 // 3
"""Base64 characters of :data:`MEDIA_THRESHOLD` bytes: shorter strings are not decoded."""

_MIME_KEYS = ("mimeType", "mime_type")
_EXTENSIONS = {
    "audio/pcm": "pcm",
    "audio/l16": "pcm",
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/mpeg": "mp3",
    "audio/ogg": "ogg",
    "audio/webm": "webm",
    "audio/flac": "flac",
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/webp": "webp",
    "video/mp4": "mp4",
    "video/webm": "webm",
    "application/pdf": "pdf",
}
_FIX_MISSING = (
    "Restore the {folder} folder beside the cassette (it belongs to the recording: commit "
    "it with the cassette), or re-record with `rec start`"
)


def media_folder(cassette: str | Path) -> str:
    """The name of a cassette's media folder: ``NAME.media`` for ``NAME.cassette.json``."""
    return f"{recording_name(cassette)}.media"


def _extension(mime: object) -> str:
    base = str(mime or "").split(";", 1)[0].strip().lower()
    return _EXTENSIONS.get(base, "bin")


def _blobs(value: Any, at: list[str | int]) -> Iterator[tuple[list[str | int], str, object]]:
    """(path, base64 text, MIME type) of every large ``data`` string beside a MIME type."""
    if isinstance(value, dict):
        data = value.get("data")
        mime = next((value[key] for key in _MIME_KEYS if key in value), None)
        if isinstance(data, str) and len(data) >= _MIN_TEXT and mime is not None:
            yield [*at, "data"], data, mime
        for key, item in value.items():
            if isinstance(item, dict | list):
                yield from _blobs(item, [*at, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                yield from _blobs(item, [*at, index])


def _spelling(text: str) -> tuple[bytes, Literal["standard", "urlsafe"], bool] | None:
    """The bytes of base64 ``text`` and how it is spelled, when re-encoding them gives
    ``text`` back exactly (None otherwise: the string stays inline)."""
    urlsafe = "-" in text or "_" in text
    if urlsafe and ("+" in text or "/" in text):
        return None
    padded = text.endswith("=")
    try:
        raw = binascii.a2b_base64(
            text.translate(str.maketrans("-_", "+/")) + ("" if padded else "=="), strict_mode=False
        )
    except (binascii.Error, ValueError):
        return None
    alphabet: Literal["standard", "urlsafe"] = "urlsafe" if urlsafe else "standard"
    if _encode(raw, alphabet, padded) != text:
        return None
    return raw, alphabet, padded


def _encode(raw: bytes, alphabet: Literal["standard", "urlsafe"], padded: bool) -> str:
    text = binascii.b2a_base64(raw, newline=False).decode("ascii")
    if alphabet == "urlsafe":
        text = text.translate(str.maketrans("+/", "-_"))
    return text if padded else text.rstrip("=")


def _replaced(value: Any, at: list[str | int], new: object) -> Any:
    """``value`` with the item at path ``at`` replaced (containers on the path are copied)."""
    if not at:
        return new
    head, rest = at[0], at[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replaced(copy[head], rest, new)  # type: ignore[index]
    return copy


def _item(value: Any, at: list[str | int]) -> Any:
    for step in at:
        if isinstance(value, dict) and isinstance(step, str):
            value = value.get(step)
        elif isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
            value = value[step]
        else:
            return None
    return value


def _frame_apart(frame: LiveFrame, folder: str, files: dict[str, bytes]) -> LiveFrame:
    data, refs = frame.data, list(frame.media or [])
    for at, text, mime in list(_blobs(frame.data, [])):
        spelled = _spelling(text)
        if spelled is None or len(spelled[0]) < MEDIA_THRESHOLD:
            continue
        raw, alphabet, padded = spelled
        digest = hashlib.sha256(raw).hexdigest()
        name = f"{folder}/sha256-{digest}.{_extension(mime)}"
        files.setdefault(name, raw)
        refs.append(
            LiveMedia(
                at=at, file=name, sha256=digest, size=len(raw), alphabet=alphabet, padded=padded
            )
        )
        data = _replaced(data, at, f"<rec media: {len(raw)} bytes in {name}>")
    if not refs:
        return frame
    return frame.model_copy(update={"data": data, "media": refs})


def store_media_apart(
    live: LiveRecording, cassette: str | Path
) -> tuple[LiveRecording, dict[str, bytes]]:
    """The section with every large blob replaced by a reference, and the files to write
    (name relative to the cassette's folder -> bytes)."""
    folder = media_folder(cassette)
    files: dict[str, bytes] = {}
    sessions = []
    for session in live.sessions:
        frames = [_frame_apart(frame, folder, files) for frame in session.frames]
        changed = any(new is not old for new, old in zip(frames, session.frames, strict=True))
        sessions.append(session.model_copy(update={"frames": frames}) if changed else session)
    if not files:
        return live, files
    return live.model_copy(update={"sessions": sessions}), files


def write_media(cassette: str | Path, files: dict[str, bytes]) -> None:
    """Write the side files beside ``cassette`` (each atomically; one already there with the
    right bytes is left alone).

    Raises:
        OSError: a file could not be written.
    """
    from cassettes._atomic_write import write_atomic  # reading needs no writer
    from cassettes._folders import private_folder

    base = Path(cassette).parent
    for name, raw in files.items():
        target = base / name
        if target.is_file() and target.stat().st_size == len(raw):
            if hashlib.sha256(target.read_bytes()).digest() == hashlib.sha256(raw).digest():
                continue
        private_folder(target.parent)
        write_atomic(target, raw)


def _media_bytes(
    ref: LiveMedia, cassette: Path, where: str
) -> tuple[bytes | None, InputError | None]:
    """The bytes of a side file, or the error saying why they cannot be used."""
    target = cassette.parent / ref.file
    fix = _FIX_MISSING.format(folder=ref.file.split("/", 1)[0])
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        problem = f"the Live media file {ref.file} is missing"
        return None, InputError(problem, path=cassette, where=where, fix=fix)
    except OSError as exc:
        problem = f"cannot read the Live media file {ref.file} ({exc.strerror or exc})"
        return None, InputError(problem, path=cassette, where=where, fix=fix)
    if hashlib.sha256(raw).hexdigest() != ref.sha256:
        problem = (
            f"the Live media file {ref.file} does not hold the recorded bytes (its sha256 "
            f"differs: the file was changed or truncated)"
        )
        return None, InputError(problem, path=cassette, where=where, fix=fix)
    return raw, None


def _frame_restored(
    frame: LiveFrame, cassette: Path, where: str, errors: list[InputError]
) -> LiveFrame:
    data = frame.data
    for number, ref in enumerate(frame.media or []):
        at = f"{where}.media[{number}]"
        if not isinstance(_item(data, ref.at), str):
            fix = "Restore the cassette from version control, or re-record with `rec start`"
            problem = "the media reference points at no placeholder string in the frame's data"
            errors.append(InputError(problem, path=cassette, where=at, fix=fix))
            continue
        raw, error = _media_bytes(ref, cassette, at)
        if error is not None:
            errors.append(error)
            continue
        assert raw is not None
        data = _replaced(data, ref.at, _encode(raw, ref.alphabet, ref.padded))
    return frame.model_copy(update={"data": data, "media": None})


def _restored(
    live: LiveRecording, cassette: Path, *, first_only: bool
) -> tuple[LiveRecording, list[InputError]]:
    errors: list[InputError] = []
    sessions: list[LiveSession] = []
    for number, session in enumerate(live.sessions):
        frames = list(session.frames)
        for index, frame in enumerate(frames):
            if frame.media:
                where = f"live.sessions[{number}].frames[{index}]"
                frames[index] = _frame_restored(frame, cassette, where, errors)
                if errors and first_only:
                    return live, errors
        sessions.append(session.model_copy(update={"frames": frames}))
    return live.model_copy(update={"sessions": sessions}), errors


def restore_media(live: LiveRecording, cassette: str | Path) -> LiveRecording:
    """The section with every referenced blob read back into its frame (a section without
    references is returned as is).

    Raises:
        InputError: a side file is missing, unreadable or not the recorded bytes.
    """
    if not any(frame.media for session in live.sessions for frame in session.frames):
        return live
    restored, errors = _restored(live, Path(cassette), first_only=True)
    if errors:
        raise errors[0]
    return restored


def media_problems(live: LiveRecording, cassette: str | Path) -> list[InputError]:
    """Every side file of the section that is missing, unreadable or not the recorded bytes."""
    return _restored(live, Path(cassette), first_only=False)[1]
