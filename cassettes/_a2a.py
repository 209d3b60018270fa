"""A2A calls in A2A terms: what decides a match, and how a miss reads.

An agent delegating to a remote agent over A2A (ADK's ``RemoteA2aAgent``) posts JSON-RPC
2.0 to the remote: ``message/send`` / ``message/stream`` and ``tasks/get`` (a2a-sdk 0.3),
``SendMessage`` / ``SendStreamingMessage`` and ``GetTask`` (a2a-sdk 1.x). Each call is a
tool exchange of the cassette like any tool's HTTP call; matching it must ignore what
changes every run — the JSON-RPC id, the message id, the task and context ids (new on
each run, or handed out by the remote), the ADK call id a resuming function response
names — and keep what the caller said: the method, the
message's role and parts, the configuration. A miss reads as a change of the message
(``message.parts[0].text changed: "…" -> "…"``), not of a JSON-RPC envelope.
"""

from __future__ import annotations

from typing import Any

from cassettes._json_rpc import json_rpc_kind_of

__all__ = [
    "A2A_REST_STREAMS",
    "a2a_calls",
    "a2a_canonical",
    "a2a_rest_canonical",
    "is_a2a",
    "is_a2a_rest_message",
]

_REST_MESSAGES = ("/message:send", "/message:stream")
"""The HTTP+JSON binding's message endpoints (a2a-sdk 1.x ``RestTransport``)."""

A2A_REST_STREAMS = ("/message:stream", ":subscribe")
"""How the HTTP+JSON binding's event-stream endpoints end (``/tasks/{id}:subscribe``)."""

_CALL_IDS = ("id", "taskId", "task_id", "contextId", "context_id", "name")
"""Ids in a call's ``params``: the task a ``tasks/get`` asks for (``id``; ``name`` as
``tasks/{id}`` in some 1.x drafts), the task and context a message continues."""
_MESSAGE_IDS = (
    "messageId",
    "message_id",
    "taskId",
    "task_id",
    "contextId",
    "context_id",
    "referenceTaskIds",
    "reference_task_ids",
)


def is_a2a(value: object) -> bool:
    """Whether a parsed request body is an A2A JSON-RPC call (or a batch of them)."""
    return json_rpc_kind_of(value) == "a2a"


def is_a2a_rest_message(path: str) -> bool:
    """Whether ``path`` is the HTTP+JSON binding's ``message:send`` or ``message:stream``."""
    return path.endswith(_REST_MESSAGES)


def _part(part: Any) -> Any:
    """A part without the ADK call id its data may carry (``adk-<uuid>``, new every run:
    a function response resuming a paused task names the remote's call by it)."""
    data = part.get("data") if isinstance(part, dict) else None
    if isinstance(data, dict) and str(data.get("id", "")).startswith("adk-"):
        return {**part, "data": {k: v for k, v in data.items() if k != "id"}}
    return part


def _without_ids(params: Any) -> Any:
    if isinstance(params, dict):
        params = {k: v for k, v in params.items() if k not in _CALL_IDS}
        sent = params.get("message")
        if isinstance(sent, dict):
            sent = {k: v for k, v in sent.items() if k not in _MESSAGE_IDS}
            if isinstance(sent.get("parts"), list):
                sent["parts"] = [_part(part) for part in sent["parts"]]
            params["message"] = sent
    return params


def _call(message: dict[str, Any]) -> dict[str, Any]:
    params = _without_ids(message.get("params"))
    return {"jsonrpc": message.get("jsonrpc"), "method": message.get("method"), "params": params}


def a2a_rest_canonical(value: Any) -> Any:
    """A ``message:send`` / ``message:stream`` body (HTTP+JSON) without its run ids."""
    return _without_ids(value)


def a2a_canonical(value: Any) -> Any:
    """An A2A call's body without the ids that change every run (see the module docstring)."""
    if isinstance(value, list):
        return [_call(m) for m in value]
    return _call(value)


def a2a_calls(value: Any) -> tuple[Any, Any]:
    """An A2A body's method and ``params`` without ids (lists for a batch), for a diff."""
    call = a2a_canonical(value)
    if isinstance(call, list):
        return [c.get("method") for c in call], [c.get("params") for c in call]
    return call.get("method"), call.get("params")
