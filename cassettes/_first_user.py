"""A model request's first user turn, as text: what ties a recorded request to its eval case.

An eval case's first user turn is the first user turn of every model request of its
conversation (the root agent's calls and its sub-agents', which carry the same history).
Replay finds a case's recorded requests by it (``replayer._streaming_mode``), and the side
index keeps its digest per exchange (``cassettes._side_index``) so that they are found
without reading the others.
"""

from __future__ import annotations

import hashlib
from typing import Any

__all__ = ["first_user_digest", "first_user_key", "first_user_text", "turn_text"]


def turn_text(content: Any) -> str:
    """The text parts of a Gemini content (``{"role": ..., "parts": [...]}``), one a line."""
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if not isinstance(parts, list):
        return ""
    return "\n".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def _message_text(content: Any) -> str:
    """The text of an OpenAI or Anthropic message's ``content`` (a string or blocks)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    )


def first_user_text(body: Any) -> str | None:
    """The text of the first user turn of a JSON request body (Gemini ``contents``, or
    OpenAI and Anthropic ``messages``); None when it has none."""
    if not isinstance(body, dict):
        return None
    contents, messages = body.get("contents"), body.get("messages")
    for content in contents if isinstance(contents, list) else ():
        if isinstance(content, dict) and content.get("role", "user") == "user":
            return turn_text(content)
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict) and message.get("role") == "user":
            return _message_text(message.get("content"))
    return None


def first_user_digest(text: str) -> str:
    """A short digest of a first user turn's text (the side index keeps it)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def first_user_key(body: Any) -> str:
    """The digest of a JSON request body's first user turn ('' for none): what the side
    index keeps per exchange, and what matching narrows a bucket by."""
    text = first_user_text(body)
    return "" if text is None else first_user_digest(text)
