"""The stand-in's Anthropic messages endpoint (``POST {prefix}/v1/messages``).

What ``LiteLlm("anthropic/…")`` and the anthropic SDK speak, driven by the same responders
as the Gemini endpoints: the request is shown to the responder as a Gemini
``generateContent`` request (``system`` as ``systemInstruction``, ``text`` / ``tool_use`` /
``tool_result`` blocks as text, ``functionCall`` and ``functionResponse`` parts, tools as
``functionDeclarations``), and the reply goes back as a ``message`` object or, with
``"stream": true``, as Anthropic's event stream (``event: NAME`` + ``data: {json}``:
``message_start``, ``content_block_start`` / ``_delta`` / ``_stop``, ``message_delta``,
``message_stop``). Ids ``msg_…`` and ``toolu_…`` are derived from the request.
"""

from __future__ import annotations

import json
from typing import Any

from rec.standin.openai_wire import ResponseIds, chunk_parts, word_count

__all__ = [
    "MESSAGES_SUFFIX",
    "anthropic_error",
    "gemini_body",
    "is_message_call",
    "message_document",
    "message_events",
]

MESSAGES_SUFFIX = "/v1/messages"


def is_message_call(method: str, path: str) -> bool:
    """Whether a request is an Anthropic messages call."""
    return method == "POST" and path.endswith(MESSAGES_SUFFIX)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _result(content: Any) -> dict[str, Any]:
    text = (
        content
        if isinstance(content, str)
        else "".join(str(b.get("text", "")) for b in _blocks(content))
    )
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text
    return value if isinstance(value, dict) else {"result": value}


def gemini_body(body: Any) -> dict[str, Any]:
    """A messages request body as the Gemini request a responder reads."""
    body = body if isinstance(body, dict) else {}
    names: dict[str, str] = {}
    contents: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        parts: list[dict[str, Any]] = []
        for block in _blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text":
                parts.append({"text": str(block.get("text", ""))})
            elif kind == "tool_use":
                names[str(block.get("id"))] = str(block.get("name", ""))
                parts.append(
                    {
                        "functionCall": {
                            "name": block.get("name", ""),
                            "args": block.get("input") or {},
                        }
                    }
                )
            elif kind == "tool_result":
                name = names.get(str(block.get("tool_use_id")), "")
                response = _result(block.get("content"))
                parts.append({"functionResponse": {"name": name, "response": response}})
        role = "model" if message.get("role") == "assistant" else "user"
        contents.append({"role": role, "parts": parts})
    gemini: dict[str, Any] = {"contents": contents}
    system = body.get("system")
    text = (
        system
        if isinstance(system, str)
        else "".join(str(b.get("text", "")) for b in _blocks(system))
    )
    if text:
        gemini["systemInstruction"] = {"parts": [{"text": text}]}
    declarations = [
        {
            "name": tool.get("name", ""),
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {},
        }
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
    ]
    if declarations:
        gemini["tools"] = [{"functionDeclarations": declarations}]
    return gemini


def _ids(raw_body: bytes) -> ResponseIds:
    return ResponseIds(raw_body, response_prefix="msg_", call_prefix="toolu_")


def _content(parts: list[dict[str, Any]], ids: ResponseIds) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    calls = 0
    for part in parts:
        if isinstance(part.get("text"), str) and part["text"]:
            if blocks and blocks[-1]["type"] == "text":
                blocks[-1]["text"] += part["text"]
            else:
                blocks.append({"type": "text", "text": part["text"]})
        elif "functionCall" in part:
            call = part["functionCall"]
            blocks.append(
                {
                    "type": "tool_use",
                    "id": ids.call(calls),
                    "name": call.get("name", ""),
                    "input": call.get("args") or {},
                }
            )
            calls += 1
    return blocks


def _usage(body: Any, parts: list[dict[str, Any]]) -> dict[str, int]:
    return {
        "input_tokens": word_count((body or {}).get("messages")),
        "output_tokens": word_count(parts),
    }


def message_document(body: Any, raw_body: bytes, chunks: list[Any]) -> dict[str, Any]:
    """The ``message`` answering ``body`` with a reply's Gemini chunks."""
    ids = _ids(raw_body)
    parts = chunk_parts(chunks)
    content = _content(parts, ids)
    return {
        "id": ids.response,
        "type": "message",
        "role": "assistant",
        "model": (body or {}).get("model", "standin"),
        "content": content,
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
        "stop_sequence": None,
        "usage": _usage(body, parts),
    }


def message_events(body: Any, raw_body: bytes, chunks: list[Any]) -> list[bytes]:
    """The event stream answering ``body``: text as ``text_delta`` pieces (one per reply
    chunk), each tool call as a ``tool_use`` block with its input in two JSON pieces."""
    ids = _ids(raw_body)
    start = {
        "id": ids.response,
        "type": "message",
        "role": "assistant",
        "model": (body or {}).get("model", "standin"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": word_count((body or {}).get("messages")), "output_tokens": 0},
    }
    stream = _EventStream(ids)
    stream.add("message_start", {"message": start})
    every: list[dict[str, Any]] = []
    for chunk in chunks:
        for part in chunk_parts([chunk]):
            every.append(part)
            if isinstance(part.get("text"), str) and part["text"]:
                stream.text(part["text"])
            elif "functionCall" in part:
                stream.tool_use(part["functionCall"])
    stream.close_text()
    finish = {"stop_reason": "tool_use" if stream.calls else "end_turn", "stop_sequence": None}
    usage = {"output_tokens": word_count(every)}
    stream.add("message_delta", {"delta": finish, "usage": usage})
    stream.add("message_stop", {})
    return stream.events


class _EventStream:
    """The events of one streamed message, its content blocks opened and closed in turn."""

    def __init__(self, ids: ResponseIds) -> None:
        self.ids = ids
        self.events: list[bytes] = []
        self.index = 0
        self.calls = 0
        self.open_text = False

    def add(self, name: str, document: dict[str, Any]) -> None:
        data = json.dumps({"type": name, **document}, separators=(",", ":"))
        self.events.append(f"event: {name}\ndata: {data}\n\n".encode())

    def text(self, text: str) -> None:
        """A piece of text: a delta of the open text block (opened first if need be)."""
        if not self.open_text:
            text_block = {"type": "text", "text": ""}
            self.add("content_block_start", {"index": self.index, "content_block": text_block})
            self.open_text = True
        delta = {"type": "text_delta", "text": text}
        self.add("content_block_delta", {"index": self.index, "delta": delta})

    def close_text(self) -> None:
        """Close the open text block, if any."""
        if self.open_text:
            self.add("content_block_stop", {"index": self.index})
            self.index, self.open_text = self.index + 1, False

    def tool_use(self, call: dict[str, Any]) -> None:
        """A tool call: its own block, the input in two JSON pieces."""
        self.close_text()
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": self.ids.call(self.calls),
            "name": call.get("name", ""),
            "input": {},
        }
        self.add("content_block_start", {"index": self.index, "content_block": block})
        arguments = json.dumps(call.get("args") or {})
        half = len(arguments) // 2
        for piece in (arguments[:half], arguments[half:]):
            delta = {"type": "input_json_delta", "partial_json": piece}
            self.add("content_block_delta", {"index": self.index, "delta": delta})
        self.add("content_block_stop", {"index": self.index})
        self.index, self.calls = self.index + 1, self.calls + 1


def anthropic_error(code: int, message: str) -> dict[str, Any]:
    """Anthropic's error envelope."""
    kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}.get(
        code, "invalid_request_error" if code < 500 else "api_error"
    )
    return {"type": "error", "error": {"type": kind, "message": message}}
