"""OpenAI and Anthropic model exchanges seen as Gemini ones, for conversation extraction.

Extraction (``cassettes._conversations``, ``cassettes._extraction``) reads model traffic in
Gemini's terms: a request's ``contents`` and ``systemInstruction``, a response's
``candidates[0].content`` parts, ``usageMetadata`` and ``modelVersion``. A program without
an ADK Runner that talks to an OpenAI-compatible server or to Anthropic (directly, or
through LiteLLM) is read the same way once each body is translated:

- OpenAI chat completions: ``system``/``developer`` messages are the system instruction,
  ``user`` messages user turns, ``assistant`` messages model turns (``tool_calls`` as
  ``functionCall`` parts with their arguments decoded), ``tool`` messages
  ``functionResponse`` parts named after the call they answer; a ``chat.completion`` or a
  stream of ``chat.completion.chunk`` events (``delta`` text and ``tool_calls`` pieces
  joined) is the model's answer.
- Anthropic messages: ``system`` is the system instruction; ``text``, ``tool_use`` and
  ``tool_result`` blocks become text, ``functionCall`` and ``functionResponse`` parts; a
  message or its event stream (``content_block_start``/``_delta``) is the answer.

Pure functions over the stored bodies; what is not a provider call is None.
"""

from __future__ import annotations

import functools
import json
from typing import Any
from urllib.parse import urlsplit

from cassettes._cassette import Exchange, JsonBody, SseBody
from cassettes._providers import ANTHROPIC, OPENAI, provider_route

__all__ = ["gemini_request", "gemini_response"]


def _provider(exchange: Exchange) -> str | None:
    return _provider_of(exchange.request.url)


@functools.lru_cache(maxsize=512)
def _provider_of(url: str) -> str | None:
    """Remembered per URL: a recording repeats a few, and each exchange is asked once or more."""
    route = provider_route(urlsplit(url).path)
    if route == OPENAI.mount + "/chat/completions":
        return OPENAI.name
    if route == ANTHROPIC.mount + "/v1/messages":
        return ANTHROPIC.name
    return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type", "text") == "text"
        )
    return ""


def _decoded(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _response_value(raw: Any) -> dict[str, Any]:
    text = _text(raw) if not isinstance(raw, (dict, int, float, bool)) else raw
    if isinstance(text, str):
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
    else:
        value = text
    return value if isinstance(value, dict) else {"result": value}


def _add(contents: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    if not parts:
        return
    if contents and contents[-1]["role"] == role and role == "user":
        previous = contents[-1]["parts"]
        if all("functionResponse" in p for p in (*previous, *parts)):
            previous.extend(parts)  # the results of one batch of calls
            return
    contents.append({"role": role, "parts": parts})


def _openai_request(body: dict[str, Any]) -> dict[str, Any]:
    contents: list[dict[str, Any]] = []
    system: list[str] = []
    names: dict[str, str] = {}
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(_text(message.get("content")))
        elif role == "assistant":
            parts: list[dict[str, Any]] = []
            if _text(message.get("content")):
                parts.append({"text": _text(message.get("content"))})
            for call in message.get("tool_calls") or []:
                function = (call or {}).get("function") or {}
                name = str(function.get("name", ""))
                names[str(call.get("id"))] = name
                parts.append(
                    {"functionCall": {"name": name, "args": _decoded(function.get("arguments"))}}
                )
            _add(contents, "model", parts)
        elif role == "tool":
            name = names.get(str(message.get("tool_call_id")), str(message.get("name", "")))
            response = _response_value(message.get("content"))
            _add(contents, "user", [{"functionResponse": {"name": name, "response": response}}])
        else:
            _add(contents, "user", [{"text": _text(message.get("content"))}])
    return _with_system(contents, system)


def _anthropic_request(body: dict[str, Any]) -> dict[str, Any]:
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = "model" if message.get("role") == "assistant" else "user"
        blocks = message.get("content")
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        parts: list[dict[str, Any]] = []
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                parts.append({"text": block["text"]})
            elif kind == "tool_use":
                names[str(block.get("id"))] = str(block.get("name", ""))
                call = {"name": block.get("name", ""), "args": _decoded(block.get("input"))}
                parts.append({"functionCall": call})
            elif kind == "tool_result":
                name = names.get(str(block.get("tool_use_id")), "")
                response = _response_value(block.get("content"))
                parts.append({"functionResponse": {"name": name, "response": response}})
        _add(contents, role, parts)
    system = body.get("system")
    return _with_system(contents, [_text(system)] if system else [])


def _with_system(contents: list[dict[str, Any]], system: list[str]) -> dict[str, Any]:
    request: dict[str, Any] = {"contents": contents}
    if any(system):
        request["systemInstruction"] = {"parts": [{"text": "\n".join(s for s in system if s)}]}
    return request


def gemini_request(exchange: Exchange) -> dict[str, Any] | None:
    """The request body of an OpenAI or Anthropic model call in Gemini's terms, else None."""
    provider = _provider(exchange)
    body = exchange.request.body
    if provider is None or not isinstance(body, JsonBody) or not isinstance(body.value, dict):
        return None
    if provider == OPENAI.name:
        return _openai_request(body.value)
    return _anthropic_request(body.value)


def _chunk(parts: list[dict[str, Any]], usage: dict[str, int], model: Any) -> dict[str, Any]:
    chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": parts}}]}
    if usage:
        chunk["usageMetadata"] = usage
    if isinstance(model, str):
        chunk["modelVersion"] = model
    return chunk


def _usage(prompt: Any, produced: Any) -> dict[str, int]:
    if not isinstance(prompt, int) or not isinstance(produced, int):
        return {}
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": produced,
        "totalTokenCount": prompt + produced,
    }


def _events(body: SseBody) -> list[dict[str, Any]]:
    """The JSON payloads of a stream's events (``data:`` lines; ``[DONE]`` and ``event:``
    names left out)."""
    found: list[dict[str, Any]] = []
    for event in body.events:
        if isinstance(event.data, dict):
            found.append(event.data)
            continue
        for line in event.lines or []:
            if line.startswith("data:"):
                try:
                    value = json.loads(line[5:].strip())
                except ValueError:
                    continue
                if isinstance(value, dict):
                    found.append(value)
    return found


def _openai_response(body: Any) -> dict[str, Any] | None:
    if isinstance(body, JsonBody) and isinstance(body.value, dict):
        document = body.value
        choices = document.get("choices") or [{}]
        message = choices[0].get("message") or {}
        text = _text(message.get("content"))
        calls = message.get("tool_calls") or []
        usage = document.get("usage") or {}
        model = document.get("model")
    elif isinstance(body, SseBody):
        pieces: list[str] = []
        by_index: dict[int, dict[str, Any]] = {}
        usage, model = {}, None
        for event in _events(body):
            model = event.get("model", model)
            usage = event.get("usage") or usage
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                if isinstance(delta.get("content"), str):
                    pieces.append(delta["content"])
                for piece in delta.get("tool_calls") or []:
                    call = by_index.setdefault(
                        int(piece.get("index", 0)), {"function": {"name": "", "arguments": ""}}
                    )
                    function = piece.get("function") or {}
                    call["function"]["name"] += function.get("name") or ""
                    call["function"]["arguments"] += function.get("arguments") or ""
        text, calls = "".join(pieces), [by_index[i] for i in sorted(by_index)]
    else:
        return None
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    for call in calls:
        function = (call or {}).get("function") or {}
        name = str(function.get("name", ""))
        parts.append({"functionCall": {"name": name, "args": _decoded(function.get("arguments"))}})
    produced = usage.get("completion_tokens")
    return _chunk(parts, _usage(usage.get("prompt_tokens"), produced), model)


def _anthropic_response(body: Any) -> dict[str, Any] | None:
    if isinstance(body, JsonBody) and isinstance(body.value, dict):
        document = body.value
        blocks = document.get("content") or []
        usage = document.get("usage") or {}
        model = document.get("model")
    elif isinstance(body, SseBody):
        blocks, usage, model = _anthropic_stream(body)
    else:
        return None
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            parts.append({"text": block["text"]})
        elif block.get("type") == "tool_use":
            call = {"name": block.get("name", ""), "args": _decoded(block.get("input"))}
            parts.append({"functionCall": call})
    return _chunk(parts, _usage(usage.get("input_tokens"), usage.get("output_tokens")), model)


def _anthropic_stream(body: SseBody) -> tuple[list[dict[str, Any]], dict[str, Any], Any]:
    """An Anthropic event stream's content blocks (deltas joined), usage and model."""
    blocks: list[dict[str, Any]] = []
    usage: dict[str, Any] = {}
    model = None
    json_pieces: dict[int, str] = {}
    for event in _events(body):
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            model = message.get("model")
            usage = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            blocks.append(dict(event.get("content_block") or {}))
        elif kind == "content_block_delta" and blocks:
            _add_delta(blocks, json_pieces, event.get("delta") or {})
        elif kind == "message_delta":
            usage.update(event.get("usage") or {})
    for index, text in json_pieces.items():
        blocks[index]["input"] = _decoded(text)
    return blocks, usage, model


def _add_delta(
    blocks: list[dict[str, Any]], json_pieces: dict[int, str], delta: dict[str, Any]
) -> None:
    """Join a ``content_block_delta`` to the last block: its text, or a piece of its input."""
    if delta.get("type") == "text_delta":
        blocks[-1]["text"] = blocks[-1].get("text", "") + str(delta.get("text", ""))
    elif delta.get("type") == "input_json_delta":
        index = len(blocks) - 1
        json_pieces[index] = json_pieces.get(index, "") + str(delta.get("partial_json", ""))


def gemini_response(exchange: Exchange) -> dict[str, Any] | None:
    """The answer of an OpenAI or Anthropic model call as one Gemini response chunk, else None."""
    provider = _provider(exchange)
    if provider == OPENAI.name:
        return _openai_response(exchange.response.body)
    if provider == ANTHROPIC.name:
        return _anthropic_response(exchange.response.body)
    return None
