"""Eval cases from a recording's Gemini Live sessions: one case per session.

A Live session (:mod:`cassettes._live`) is read frame by frame into ADK-shaped invocations:

- a user turn starts at the client's ``client_content`` (its user parts), at a
  ``realtime_input`` text, or at the first audio chunk after the model answered. An audio
  turn's ``user_content`` is the server's ``inputTranscription`` text followed by each
  recorded chunk as an ``inline_data`` part (as ADK's ``adk eval`` live driver sends an
  audio turn: only the audio goes to the model, the text is for the scorers);
- the server's ``toolCall`` gives the tool calls with their args, the client's
  ``tool_response`` the tool responses (invocation events, as ADK's converter writes them);
- the model's text (``modelTurn`` parts, joined up to ``turnComplete``), or the
  ``outputTranscription`` of an audio reply when it has no text, is the reply; the last
  reply after the last tool call is the ``final_response``, earlier ones are events.

The event author is the ADK agent named in the session's system instruction (ADK writes
``You are an agent. Your internal name is "NAME".``), else ``default_author``.
:func:`live_run_settings` reads back from the recorded ``setup`` how the session was
opened (modalities, transcriptions), so a replay opens it the same way.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from cassettes import _genai_types as genai_types
from cassettes._conversations import agent_name
from cassettes._evalset import Invocation, InvocationEvent, InvocationEvents
from cassettes._live import LiveRecording, LiveSession

__all__ = [
    "first_live_user_text",
    "live_eval_cases",
    "live_run_settings",
]


def _value(data: dict[str, Any], snake: str, camel: str) -> Any:
    return data.get(snake, data.get(camel))


@dataclass
class _Turn:
    user_parts: list[genai_types.Part] = field(default_factory=list)
    audio: list[genai_types.Part] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)
    steps: list[InvocationEvent | str] = field(default_factory=list)
    """Events and reply texts, in order."""
    text: list[str] = field(default_factory=list)
    spoken: list[str] = field(default_factory=list)
    answered: bool = False
    offset_ms: float = 0.0

    def flush(self) -> None:
        reply = "".join(self.text) or "".join(self.spoken)
        if reply:
            self.steps.append(reply)
        self.text.clear()
        self.spoken.clear()

    def user_content(self) -> genai_types.Content:
        parts = list(self.user_parts)
        if self.audio:
            heard = "".join(self.transcript).strip()
            parts = [genai_types.Part(text=heard)] if heard else []
            parts += self.audio
        return genai_types.Content(role="user", parts=parts)


def _blob_part(blob: Any) -> genai_types.Part | None:
    if not isinstance(blob, dict) or not isinstance(blob.get("data"), str):
        return None
    data = base64.urlsafe_b64decode(blob["data"].translate(str.maketrans("+/", "-_")) + "==")
    mime = _value(blob, "mime_type", "mimeType")
    return genai_types.Part(inline_data=genai_types.Blob(data=data, mime_type=mime))


def _user_parts(turns: Any) -> list[genai_types.Part]:
    parts: list[genai_types.Part] = []
    for turn in turns if isinstance(turns, list) else [turns]:
        if isinstance(turn, dict) and turn.get("role", "user") == "user":
            parts += [genai_types.Part.model_validate(p) for p in turn.get("parts") or []]
    return parts


def _author(session: LiveSession, default_author: str) -> str:
    for frame in session.frames:
        if frame.sender == "client" and isinstance(frame.data, dict) and "setup" in frame.data:
            setup = frame.data["setup"]
            found = agent_name(setup) if isinstance(setup, dict) else None
            return found or default_author
    return default_author


def _session_turns(session: LiveSession, author: str) -> list[_Turn]:
    reader = _TurnReader(author)
    for frame in session.frames:
        data = frame.data if isinstance(frame.data, dict) else {}
        current = reader.turns[-1] if reader.turns else None
        if frame.sender == "client":
            reader.client(data, frame.offset_ms, current)
        elif current is not None:
            reader.server(data, current)
    for turn in reader.turns:
        turn.flush()
    return reader.turns


class _TurnReader:
    """Reads a Live session's frames into turns: the client's start them (text or audio)
    and carry tool responses; the server's answer them (text, speech, tool calls)."""

    def __init__(self, author: str) -> None:
        self.author = author
        self.turns: list[_Turn] = []

    def fresh(self, offset_ms: float) -> _Turn:
        self.turns.append(_Turn(offset_ms=offset_ms))
        return self.turns[-1]

    def step(self, current: _Turn | None, role: str, parts: list[genai_types.Part]) -> None:
        """A tool call or tool responses as a step of the current turn."""
        if parts and current is not None:
            content = genai_types.Content(role=role, parts=parts)
            current.steps.append(InvocationEvent(author=self.author, content=content))

    def client(self, data: dict[str, Any], offset_ms: float, current: _Turn | None) -> None:
        """A client frame: a user turn (content or realtime input), or tool responses."""
        content = _value(data, "client_content", "clientContent")
        realtime = _value(data, "realtime_input", "realtimeInput")
        tool = _value(data, "tool_response", "toolResponse")
        if isinstance(content, dict):
            parts = _user_parts(content.get("turns") or [])
            if parts and all(p.function_response for p in parts):
                self.step(current, "user", parts)
            elif parts:
                self.fresh(offset_ms).user_parts = parts
        elif isinstance(realtime, dict):
            self._realtime(realtime, offset_ms, current)
        elif isinstance(tool, dict) and current is not None:
            responses = _value(tool, "function_responses", "functionResponses") or []
            parts = [
                genai_types.Part(function_response=genai_types.FunctionResponse.model_validate(r))
                for r in responses
            ]
            self.step(current, "user", parts)

    def _realtime(self, realtime: dict[str, Any], offset_ms: float, current: _Turn | None) -> None:
        """Realtime input: typed text starts a turn; audio and video chunks join the turn
        being spoken, or start one."""
        if isinstance(realtime.get("text"), str):
            self.fresh(offset_ms).user_parts = [genai_types.Part(text=realtime["text"])]
        blobs = [realtime[k] for k in ("audio", "video") if isinstance(realtime.get(k), dict)]
        blobs += _value(realtime, "media_chunks", "mediaChunks") or []
        chunks = [part for part in map(_blob_part, blobs) if part is not None]
        if chunks:
            if current is None or current.answered or current.user_parts:
                current = self.fresh(offset_ms)
            current.audio += chunks

    def server(self, data: dict[str, Any], current: _Turn) -> None:
        """A server frame: the user's speech heard, the model's text or speech, a tool call."""
        server = _value(data, "server_content", "serverContent")
        call = _value(data, "tool_call", "toolCall")
        if isinstance(server, dict):
            _server_content(server, current)
        if isinstance(call, dict):
            current.answered = True
            current.flush()
            calls = _value(call, "function_calls", "functionCalls") or []
            parts = [
                genai_types.Part(function_call=genai_types.FunctionCall.model_validate(c))
                for c in calls
            ]
            self.step(current, "model", parts)


def _server_content(server: dict[str, Any], current: _Turn) -> None:
    """What a ``server_content`` frame adds to the current turn."""
    heard = _value(server, "input_transcription", "inputTranscription")
    if isinstance(heard, dict) and isinstance(heard.get("text"), str):
        current.transcript.append(heard["text"])
    model_turn = _value(server, "model_turn", "modelTurn")
    if isinstance(model_turn, dict):
        current.answered = True
        for part in model_turn.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                current.text.append(part["text"])
    said = _value(server, "output_transcription", "outputTranscription")
    if isinstance(said, dict) and isinstance(said.get("text"), str):
        current.answered = True
        current.spoken.append(said["text"])
    if _value(server, "turn_complete", "turnComplete"):
        current.flush()


def _invocation(turn: _Turn, session: LiveSession, index: int, author: str) -> Invocation:
    steps = list(turn.steps)
    final: genai_types.Content | None = None
    last = steps[-1] if steps else None
    if isinstance(last, str):
        steps.pop()
        final = genai_types.Content(role="model", parts=[genai_types.Part(text=last)])
    events = [
        step
        if isinstance(step, InvocationEvent)
        else InvocationEvent(
            author=author,
            content=genai_types.Content(role="model", parts=[genai_types.Part(text=step)]),
        )
        for step in steps
    ]
    return Invocation(
        invocation_id=f"live-{session.id}-{index}",
        user_content=turn.user_content(),
        final_response=final,
        intermediate_data=InvocationEvents(invocation_events=events),
        creation_timestamp=_timestamp(session, turn.offset_ms),
    )


def _timestamp(session: LiveSession, offset_ms: float) -> float:
    from datetime import datetime

    try:
        opened = datetime.fromisoformat(session.opened_at).timestamp()
    except ValueError:
        return 0.0
    return opened + offset_ms / 1000


def live_eval_cases(
    live: LiveRecording | None, *, default_author: str
) -> list[tuple[LiveSession, list[Invocation]]]:
    """Each Live session with a user turn, and its invocations, in opening order."""
    found: list[tuple[LiveSession, list[Invocation]]] = []
    for session in live.sessions if live is not None else []:
        author = _author(session, default_author)
        turns = _session_turns(session, author)
        invocations = [_invocation(t, session, i, author) for i, t in enumerate(turns)]
        if invocations:
            found.append((session, invocations))
    return found


def first_live_user_text(session: LiveSession) -> str:
    """The text of a session's first user turn (its transcription for audio), or ''."""
    turns = _session_turns(session, "model")
    if not turns:
        return ""
    content = turns[0].user_content()
    return " ".join(p.text for p in content.parts or [] if p.text).strip()


def live_run_settings(session: LiveSession) -> dict[str, Any]:
    """What a replay passes to ADK's ``RunConfig`` to open the session as it was recorded:
    ``response_modalities``, ``input_audio_transcription``, ``output_audio_transcription``,
    ``realtime_input_config`` and ``speech_config``, from the recorded ``setup``."""
    setup: dict[str, Any] = {}
    for frame in session.frames:
        if frame.sender == "client" and isinstance(frame.data, dict) and "setup" in frame.data:
            setup = frame.data["setup"] if isinstance(frame.data["setup"], dict) else {}
            break
    generation = _value(setup, "generation_config", "generationConfig") or {}
    settings: dict[str, Any] = {}
    modalities = _value(generation, "response_modalities", "responseModalities")
    if modalities:
        settings["response_modalities"] = [str(m).upper() for m in modalities]
    speech = _value(generation, "speech_config", "speechConfig")
    if speech is not None:
        settings["speech_config"] = speech
    for snake, camel in (
        ("input_audio_transcription", "inputAudioTranscription"),
        ("output_audio_transcription", "outputAudioTranscription"),
        ("realtime_input_config", "realtimeInputConfig"),
    ):
        value = _value(setup, snake, camel)
        if value is not None:
            settings[snake] = value
    return settings
