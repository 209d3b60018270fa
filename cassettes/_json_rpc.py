"""Which protocol a JSON-RPC 2.0 body speaks: MCP, A2A, or another.

MCP and A2A both post JSON-RPC 2.0 over HTTP, and so do plenty of other services, so the
``jsonrpc`` field alone says nothing about who is talking. The method names do: MCP's
(``initialize``, ``tools/call``, ``notifications/…``) and A2A's (a2a-sdk 0.3's
``message/send``, ``message/stream``, ``tasks/get``; a2a-sdk 1.x's ``SendMessage``,
``SendStreamingMessage``, ``GetTask``) are fixed by their specifications. ``tasks/get``
and ``tasks/cancel`` are both MCP's (its task utility) and A2A's: only an MCP session's
headers make them MCP, and the caller checks those first.

A body of responses only (no ``method``: a client answering its server's request) is
MCP's: an A2A client never answers its server.
"""

from __future__ import annotations

import json
from typing import Literal

__all__ = [
    "A2A_STREAMING_METHODS",
    "JsonRpcKind",
    "json_rpc_kind",
    "json_rpc_kind_of",
    "json_rpc_methods",
]

JsonRpcKind = Literal["mcp", "a2a", "other"]
"""Which protocol a JSON-RPC body speaks (see the module docstring)."""

_MCP_METHODS = frozenset(
    {
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "logging/setLevel",
        "completion/complete",
        "sampling/createMessage",
        "roots/list",
        "elicitation/create",
        "tasks/result",
        "tasks/list",
    }
)
"""MCP's request methods (its notifications all start ``notifications/``)."""

_A2A_METHODS = frozenset(
    {
        # a2a-sdk 0.3 (A2A 0.3 JSON-RPC binding)
        "message/send",
        "message/stream",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
        "agent/getAuthenticatedExtendedCard",
        # a2a-sdk 1.x (A2A 1.0)
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
    }
)
"""A2A's JSON-RPC methods, both wire generations."""

A2A_STREAMING_METHODS = frozenset(
    {"message/stream", "tasks/resubscribe", "SendStreamingMessage", "SubscribeToTask"}
)
"""The A2A methods answered with an event stream that the server ends (at a final or
input-required task state)."""


def _parsed(content: bytes) -> object:
    if content.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        return json.loads(content)
    except ValueError:
        return None


def _batch(value: object) -> list[dict[str, object]] | None:
    """The JSON-RPC 2.0 messages in ``value`` (one or a batch), or None if it is not."""
    batch = value if isinstance(value, list) else [value]
    if not batch or not all(
        isinstance(m, dict)
        and m.get("jsonrpc") == "2.0"
        and any(key in m for key in ("method", "result", "error"))
        for m in batch
    ):
        return None
    return batch  # type: ignore[return-value]


def _methods_of(value: object) -> list[str] | None:
    batch = _batch(value)
    if batch is None:
        return None
    return [m["method"] for m in batch if isinstance(m.get("method"), str)]  # type: ignore[misc]


def json_rpc_methods(content: bytes) -> list[str] | None:
    """The methods a JSON-RPC 2.0 body calls (none for responses), or None if not JSON-RPC."""
    return _methods_of(_parsed(content))


def _is_mcp_method(method: str) -> bool:
    return method in _MCP_METHODS or method.startswith("notifications/")


def json_rpc_kind(content: bytes) -> JsonRpcKind | None:
    """Which protocol the JSON-RPC 2.0 body ``content`` speaks; None if it is not JSON-RPC."""
    return json_rpc_kind_of(_parsed(content))


def json_rpc_kind_of(value: object) -> JsonRpcKind | None:
    """Which protocol a parsed JSON-RPC 2.0 body speaks; None if it is not JSON-RPC.

    Every method of the body must belong to the protocol; a body mixing protocols, or
    calling a method neither defines, is ``other``.
    """
    methods = _methods_of(value)
    if methods is None:
        return None
    if not methods:
        return "mcp"  # responses only: a client answering its server (see the docstring)
    if all(m in _A2A_METHODS for m in methods):
        return "a2a"
    if all(_is_mcp_method(m) for m in methods):
        return "mcp"
    return "other"
