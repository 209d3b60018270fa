"""A2A calls in A2A terms: JSON-RPC told apart by method names, matched without run ids,
a miss as a change of the message."""

from __future__ import annotations

import json

import pytest

from cassettes._a2a import a2a_canonical, is_a2a
from cassettes._cassette import JsonBody, RecordedRequest
from cassettes._divergence import a2a_differences
from cassettes._json_rpc import json_rpc_kind
from cassettes._matching import MatchIndex
from tests.factories import a2a_call, a2a_exchange

METHODS = [
    "message/send",
    "message/stream",
    "tasks/get",
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
]


def _rpc(*methods: str) -> bytes:
    batch = [{"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(methods)]
    return json.dumps(batch[0] if len(batch) == 1 else batch).encode()


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        pytest.param(_rpc("tools/call"), "mcp", id="mcp"),
        pytest.param(_rpc("initialize", "notifications/initialized"), "mcp", id="mcp-batch"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "result": {}}', "mcp", id="mcp-answer"),
        pytest.param(_rpc("message/send"), "a2a", id="a2a-0.3"),
        pytest.param(_rpc("SendStreamingMessage"), "a2a", id="a2a-1.x"),
        pytest.param(_rpc("tasks/get"), "a2a", id="tasks-get-without-mcp-headers"),
        pytest.param(_rpc("eth_call"), "other", id="other"),
        pytest.param(_rpc("message/send", "tools/call"), "other", id="mixed"),
        pytest.param(b'{"jsonrpc": "1.0", "method": "tools/call"}', None, id="not-2.0"),
        pytest.param(b"{}", None, id="plain-json"),
        pytest.param(b"", None, id="empty"),
    ],
)
def test_json_rpc_kind_is_read_from_the_method_names(body: bytes, kind: str | None) -> None:
    assert json_rpc_kind(body) == kind


def _request(body: dict[str, object], url: str = "http://127.0.0.1:9/") -> RecordedRequest:
    return RecordedRequest(method="POST", url=url, body=JsonBody(value=body))


@pytest.mark.parametrize("method", METHODS)
def test_a_call_matches_its_recording_whatever_the_run_ids(method: str) -> None:
    index = MatchIndex([a2a_exchange(a2a_call(method, run="recorded"))])
    assert is_a2a(a2a_call(method))
    assert index.lookup(_request(a2a_call(method, run="replayed"))) is not None


@pytest.mark.parametrize("path", ["/v1/message:send", "/message:stream"])
def test_the_http_json_binding_matches_whatever_the_run_ids(path: str) -> None:
    url = "http://127.0.0.1:9" + path
    recorded = a2a_exchange(a2a_call("SendMessage", run="recorded", rest=True), url=url)
    index = MatchIndex([recorded])
    assert index.lookup(_request(a2a_call("SendMessage", run="replayed", rest=True), url))


@pytest.mark.parametrize("method", ["message/send", "SendStreamingMessage"])
def test_another_message_misses_and_reads_as_a_change_of_its_parts(method: str) -> None:
    recorded = a2a_call(method, "When does the zoo open?", run="recorded")
    index = MatchIndex([a2a_exchange(recorded)])
    sent = a2a_call(method, run="replayed")
    assert index.lookup(_request(sent)) is None
    assert a2a_differences(recorded, sent) == [
        'message.parts[0].text changed: "When does the zoo open?" -> "When does the museum open?"'
    ]


def test_another_method_is_named() -> None:
    lines = a2a_differences(a2a_call("message/send"), a2a_call("message/stream"))
    assert lines == ["method changed: message/send -> message/stream"]


def test_the_canonical_call_keeps_what_the_caller_said() -> None:
    canonical = a2a_canonical(a2a_call("SendMessage", run="any"))
    assert canonical == {
        "jsonrpc": "2.0",
        "method": "SendMessage",
        "params": {
            "message": {"role": "ROLE_USER", "parts": [{"text": "When does the museum open?"}]},
            "configuration": {"blocking": True},
        },
    }


def test_a_resuming_function_response_matches_whatever_the_adk_call_id() -> None:
    def resume(call_id: str) -> dict[str, object]:
        body = a2a_call("SendStreamingMessage", run=call_id)
        data = {"id": call_id, "name": "request_ticket", "response": {"approved": True}}
        body["params"]["message"]["parts"] = [{"data": data}]  # type: ignore[index]
        return body

    index = MatchIndex([a2a_exchange(resume("adk-1111"))])
    assert index.lookup(_request(resume("adk-2222"))) is not None
