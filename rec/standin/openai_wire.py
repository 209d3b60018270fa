"""The stand-in's OpenAI chat completions endpoint (``POST {prefix}/chat/completions``).

An OpenAI-compatible server (what ``LiteLlm("openai/…")``, the openai SDK, vLLM and
Ollama's OpenAI endpoint speak) driven by the same responders as the Gemini endpoints: the
request is shown to the responder as a Gemini ``generateContent`` request (messages as
``contents``, the system message as ``systemInstruction``, tools as
``functionDeclarations``, tool results as ``functionResponse`` parts), and its
:class:`~rec.standin.replies.Reply` is sent back in OpenAI's terms: a ``chat.completion``
object, or with ``"stream": true`` ``chat.completion.chunk`` events
(``data: {json}\\n\\n``) ending with ``data: [DONE]``. Tool calls get ids ``call_…`` and
responses ``chatcmpl-…``, derived from the request so that a run is repeatable.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = [
    "COMPLETIONS_SUFFIX",
    "ResponseIds",
    "chunk_parts",
    "completion_chunks",
    "completion_document",
    "error_document",
    "gemini_body",
    "is_chat_completion",
    "word_count",
]

COMPLETIONS_SUFFIX = "/chat/completions"
_CREATED = 1_767_225_600
"""A fixed ``created`` time (2026-01-01): the stand-in's answers do not depend on the clock."""


def is_chat_completion(method: str, path: str) -> bool:
    """Whether a request is an OpenAI chat completions call."""
    return method == "POST" and path.endswith(COMPLETIONS_SUFFIX)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def gemini_body(body: Any) -> dict[str, Any]:
    """A chat completions request body as the Gemini request a responder reads."""
    body = body if isinstance(body, dict) else {}
    contents: list[dict[str, Any]] = []
    system: list[str] = []
    names: dict[str, str] = {}
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(_text_of(message.get("content")))
        elif role == "assistant":
            contents.append({"role": "model", "parts": _assistant_parts(message, names)})
        elif role == "tool":
            _add_tool_response(contents, message, names)
        else:
            contents.append({"role": "user", "parts": [{"text": _text_of(message.get("content"))}]})
    gemini: dict[str, Any] = {"contents": contents}
    if system:
        gemini["systemInstruction"] = {"parts": [{"text": "\n".join(system)}]}
    declarations = [
        {
            key: value
            for key, value in (tool.get("function") or {}).items()
            if key in ("name", "description", "parameters")
        }
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
    ]
    if declarations:
        gemini["tools"] = [{"functionDeclarations": declarations}]
    return gemini


def _assistant_parts(message: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    """An assistant message's text and tool calls as Gemini parts (each call's name kept in
    ``names`` by its id, for the tool message that answers it)."""
    parts: list[dict[str, Any]] = []
    text = _text_of(message.get("content"))
    if text:
        parts.append({"text": text})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        names[str(call.get("id"))] = str(function.get("name", ""))
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            args = {}
        parts.append({"functionCall": {"name": function.get("name", ""), "args": args}})
    return parts


def _add_tool_response(
    contents: list[dict[str, Any]], message: dict[str, Any], names: dict[str, str]
) -> None:
    """A tool message as a ``functionResponse`` part, joined to the user turn holding the
    other responses of its batch."""
    raw = _text_of(message.get("content"))
    try:
        response = json.loads(raw)
    except ValueError:
        response = raw
    if not isinstance(response, dict):
        response = {"result": response}
    name = names.get(str(message.get("tool_call_id")), "")
    part = {"functionResponse": {"name": name, "response": response}}
    last = contents[-1] if contents else None
    if (
        last is not None
        and last["role"] == "user"
        and "functionResponse" in (last["parts"][0] if last["parts"] else {})
    ):
        last["parts"].append(part)
    else:
        contents.append({"role": "user", "parts": [part]})


def chunk_parts(chunks: list[Any]) -> list[dict[str, Any]]:
    """Every part of a reply's Gemini chunks (first candidate), in order."""
    parts: list[dict[str, Any]] = []
    for chunk in chunks:
        if not isinstance(chunk, dict):
            continue
        for candidate in (chunk.get("candidates") or [])[:1]:
            parts.extend((candidate.get("content") or {}).get("parts") or [])
    return parts


def word_count(value: Any) -> int:
    """Deterministic token count: words in every string of a JSON document."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, dict):
        return sum(word_count(v) for v in value.values())
    if isinstance(value, list):
        return sum(word_count(v) for v in value)
    return 0


class ResponseIds:
    """A response's ids, derived from the request bytes so that a run is repeatable:
    ``response`` (``{response_prefix}`` and 24 hex digits) and one id per tool call."""

    def __init__(self, raw_body: bytes, *, response_prefix: str, call_prefix: str) -> None:
        digest = hashlib.sha256(raw_body).hexdigest()
        self.response = f"{response_prefix}{digest[:24]}"
        self._call = f"{call_prefix}{digest[24:40]}"

    def call(self, index: int) -> str:
        """The id of the response's ``index``-th tool call (0-based)."""
        return f"{self._call}{index}"


def _ids(raw_body: bytes) -> ResponseIds:
    return ResponseIds(raw_body, response_prefix="chatcmpl-", call_prefix="call_")


def _tool_calls(parts: list[dict[str, Any]], ids: ResponseIds) -> list[dict[str, Any]]:
    return [
        {
            "id": ids.call(index),
            "type": "function",
            "function": {
                "name": part["functionCall"].get("name", ""),
                "arguments": json.dumps(part["functionCall"].get("args") or {}),
            },
        }
        for index, part in enumerate(p for p in parts if "functionCall" in p)
    ]


def _usage(body: Any, parts: list[dict[str, Any]]) -> dict[str, int]:
    prompt, produced = word_count((body or {}).get("messages")), word_count(parts)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": produced,
        "total_tokens": prompt + produced,
    }


def completion_document(body: Any, raw_body: bytes, chunks: list[Any]) -> dict[str, Any]:
    """The ``chat.completion`` answering ``body`` with a reply's Gemini chunks."""
    ids = _ids(raw_body)
    parts = chunk_parts(chunks)
    text = "".join(p["text"] for p in parts if isinstance(p.get("text"), str))
    calls = _tool_calls(parts, ids)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": ids.response,
        "object": "chat.completion",
        "created": _CREATED,
        "model": (body or {}).get("model", "standin"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": _usage(body, parts),
    }


def completion_chunks(body: Any, raw_body: bytes, chunks: list[Any]) -> list[bytes]:
    """The stream answering ``body``: one ``chat.completion.chunk`` event per reply chunk
    (tool calls as ``delta.tool_calls`` pieces), the finish, usage when asked, ``[DONE]``."""
    ids = _ids(raw_body)
    model = (body or {}).get("model", "standin")

    def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        document = {
            "id": ids.response,
            "object": "chat.completion.chunk",
            "created": _CREATED,
            "model": model,
            "choices": choices,
            **extra,
        }
        return b"data: " + json.dumps(document, separators=(",", ":")).encode() + b"\n\n"

    def delta(content: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
        return [{"index": 0, "delta": content, "finish_reason": finish}]

    events = [event(delta({"role": "assistant", "content": ""}))]
    calls = 0
    every: list[dict[str, Any]] = []
    for chunk in chunks:
        parts = chunk_parts([chunk])
        every.extend(parts)
        for part in parts:
            if isinstance(part.get("text"), str) and part["text"]:
                events.append(event(delta({"content": part["text"]})))
            elif "functionCall" in part:
                call = part["functionCall"]
                arguments = json.dumps(call.get("args") or {})
                head = {
                    "index": calls,
                    "id": ids.call(calls),
                    "type": "function",
                    "function": {"name": call.get("name", ""), "arguments": ""},
                }
                events.append(event(delta({"tool_calls": [head]})))
                half = len(arguments) // 2
                for piece in (arguments[:half], arguments[half:]):
                    rest = {"index": calls, "function": {"arguments": piece}}
                    events.append(event(delta({"tool_calls": [rest]})))
                calls += 1
    events.append(event(delta({}, "tool_calls" if calls else "stop")))
    if ((body or {}).get("stream_options") or {}).get("include_usage"):
        events.append(event([], usage=_usage(body, every)))
    events.append(b"data: [DONE]\n\n")
    return events


def error_document(code: int, message: str) -> dict[str, Any]:
    """OpenAI's error envelope."""
    kind = "invalid_request_error" if code < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": str(code)}}
