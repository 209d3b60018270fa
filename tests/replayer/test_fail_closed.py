"""Replay fails closed for every kind of traffic rec sees: served from the recording, or
refused naming the request and why; the upstream's port never sees a connection.

Each request goes to a ``CountingToolApi`` (a real server on 127.0.0.1 that counts the
connections it accepts) through the client library a tool would use, while rec serves the
process's tool traffic as ``rec replay`` does. Recording the same requests shows what
rec records and what it warns about.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
import requests
from google import genai

from recorder._capture_files import read_tool_traffic
from recorder._tool_traffic import capturing_tool_traffic, is_mcp_transport
from replayer._tool_replay import ToolTrafficReplay
from tests.agents.tool_api import RATES, CountingToolApi
from tests.factories import a2a_call, a2a_exchange


@pytest.fixture(scope="module")
def api() -> Iterator[CountingToolApi]:
    server = CountingToolApi()
    yield server
    server.close()


def _rpc(method: str, **params: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).encode()


OTHER_RPC = _rpc("eth_blockNumber")
A2A_SEND = _rpc("message/send", message={"role": "user", "parts": [{"kind": "text", "text": "hi"}]})
A2A_STREAM = _rpc("SendStreamingMessage", message={"role": "ROLE_USER", "parts": [{"text": "hi"}]})
MCP_LIST = _rpc("tools/list")
JSON = {"content-type": "application/json"}
SSE = {"accept": "text/event-stream"}
WEBSOCKET = {
    "upgrade": "websocket",
    "connection": "Upgrade",
    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    "sec-websocket-version": "13",
}


def _httpx(method: str, url: str, body: bytes, headers: dict[str, str]) -> object:
    return httpx.request(method, url, content=body, headers=headers).content


def _requests(method: str, url: str, body: bytes, headers: dict[str, str]) -> object:
    return requests.request(method, url, data=body, headers=headers, timeout=30).content


def _aiohttp(method: str, url: str, body: bytes, headers: dict[str, str]) -> object:
    async def call() -> bytes:
        async with aiohttp.ClientSession() as session:
            async with session.request(method, url, data=body, headers=headers) as response:
                return await response.read()

    return asyncio.run(call())


def _aiohttp_websocket(method: str, url: str, body: bytes, headers: dict[str, str]) -> object:
    async def call() -> None:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(url):
                pass

    return asyncio.run(call())


def _urllib(method: str, url: str, body: bytes, headers: dict[str, str]) -> object:
    request = urllib.request.Request(url, data=body or None, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


def _genai(method: str, url: str, body: bytes, headers: dict[str, str]) -> object:
    """A model call that does not go through rec's proxy (its base URL is elsewhere)."""
    from google import genai

    client = genai.Client(api_key="fake-key", http_options={"base_url": url})
    return client.models.generate_content(model="gemini-2.0-flash", contents="hi")


def _genai_async(method: str, url: str, body: bytes, headers: dict[str, str]) -> object:
    from google import genai

    client = genai.Client(api_key="fake-key", http_options={"base_url": url})
    return asyncio.run(client.aio.models.generate_content(model="gemini-2.0-flash", contents="hi"))


Call = Callable[[str, str, bytes, dict[str, str]], object]
CLIENTS: dict[str, Call] = {
    "httpx": _httpx,
    "requests": _requests,
    "aiohttp": _aiohttp,
    "urllib": _urllib,
}

KINDS: list[Any] = [
    *(
        pytest.param(kind, client, method, path, body, headers, id=f"{kind}-{client}")
        for client in CLIENTS
        for kind, method, path, body, headers in (
            ("http", "GET", "/rates?to=USD", b"", {}),
            ("json-rpc", "POST", "/rpc", OTHER_RPC, JSON),
            ("a2a-send", "POST", "/a2a", A2A_SEND, JSON),
            ("a2a-stream", "POST", "/a2a", A2A_STREAM, {**JSON, **SSE}),
            ("mcp", "POST", "/mcp", MCP_LIST, JSON),
            ("mcp-session", "POST", "/mcp", MCP_LIST, {**JSON, "mcp-session-id": "s1"}),
            ("event-stream", "GET", "/events", b"", SSE),
        )
    ),
    pytest.param("websocket", "httpx", "GET", "/ws", b"", WEBSOCKET, id="websocket-httpx"),
    pytest.param("websocket", "aiohttp-ws", "GET", "/ws", b"", {}, id="websocket-aiohttp"),
    pytest.param("model", "genai", "POST", "", b"", {}, id="model-genai-sync"),
    pytest.param("model", "genai-async", "POST", "", b"", {}, id="model-genai-async"),
]
CLIENTS.update({"aiohttp-ws": _aiohttp_websocket, "genai": _genai, "genai-async": _genai_async})
_CLIENT_ERRORS = (
    httpx.ConnectError,
    requests.ConnectionError,
    aiohttp.ClientConnectionError,
    urllib.error.URLError,
)


@pytest.mark.parametrize(("kind", "client", "method", "path", "body", "headers"), KINDS)
def test_unrecorded_traffic_is_refused_and_the_upstream_sees_no_connection(
    api: CountingToolApi,
    kind: str,
    client: str,
    method: str,
    path: str,
    body: bytes,
    headers: dict[str, str],
) -> None:
    api.connections = 0
    with (
        ToolTrafficReplay(
            [], own=["http://127.0.0.1:1"], label="rates.cassette.json"
        ).serving() as served,
        pytest.raises(_CLIENT_ERRORS) as caught,
    ):
        CLIENTS[client](method, api.url + path, body, headers)
    assert api.connections == 0
    assert served.misses, "refused without saying why"
    message = served.misses[-1]
    assert "replay never sends it" in message
    assert str(caught.value).count("rec:") >= 1
    why = {"mcp": "MCP traffic", "mcp-session": "MCP traffic", "websocket": "the WebSocket"}
    why.update(
        {
            "event-stream": "the event stream",
            "a2a-send": "the A2A call",
            "a2a-stream": "the A2A call",
        }
    )
    assert message.startswith(f"rec: {why.get(kind, 'the tool call')} ")


def test_mcp_transport_reaches_the_server_only_with_live_tools(api: CountingToolApi) -> None:
    api.connections = 0
    with ToolTrafficReplay([], own=["http://127.0.0.1:1"], live_mcp=True).serving():
        httpx.post(api.url + "/mcp", content=MCP_LIST, headers=JSON)
    assert api.connections == 1


@pytest.mark.parametrize(
    ("body", "mcp"),
    [
        pytest.param(MCP_LIST, True, id="mcp-method"),
        pytest.param(_rpc("notifications/initialized"), True, id="mcp-notification"),
        pytest.param(A2A_SEND, False, id="a2a-0.3"),
        pytest.param(A2A_STREAM, False, id="a2a-1.x"),
        pytest.param(_rpc("tasks/get", id="t1"), False, id="a2a-tasks-get"),
        pytest.param(OTHER_RPC, False, id="other-json-rpc"),
    ],
)
def test_json_rpc_is_mcp_by_its_method_names(body: bytes, mcp: bool) -> None:
    request = httpx.Request("POST", "http://127.0.0.1:5/rpc", content=body)
    assert is_mcp_transport(request) is mcp


def test_mcp_tasks_get_in_an_mcp_session_stays_mcp() -> None:
    request = httpx.Request(
        "POST", "http://127.0.0.1:5/mcp", content=_rpc("tasks/get"), headers={"mcp-session-id": "s"}
    )
    assert is_mcp_transport(request)


@pytest.mark.parametrize("client", ["httpx", "requests", "aiohttp", "urllib"])
def test_json_rpc_that_is_not_mcp_is_recorded_and_served(
    api: CountingToolApi, tmp_path: Path, client: str
) -> None:
    path = tmp_path / "calls.tools.jsonl"
    with capturing_tool_traffic(path, own=[]):
        sent = CLIENTS[client]("POST", api.url + "/rpc", OTHER_RPC, JSON)
    recorded = read_tool_traffic(path)
    assert [e.request.url for e in recorded] == [api.url + "/rpc"]
    api.connections = 0
    with ToolTrafficReplay(recorded, own=["http://127.0.0.1:1"]).serving() as served:
        again = CLIENTS[client]("POST", api.url + "/rpc", OTHER_RPC, JSON)
    assert (again, served.served, api.connections) == (sent, 1, 0)


@pytest.mark.parametrize(
    ("call", "path", "body", "headers", "warning"),
    [
        pytest.param("httpx", "/mcp", MCP_LIST, JSON, "MCP traffic", id="mcp"),
        pytest.param("httpx", "/events-x", b"", SSE, "event stream", id="event-stream"),
        pytest.param("aiohttp-ws", "/ws", b"", {}, "WebSocket", id="websocket-aiohttp"),
    ],
)
def test_what_recording_leaves_out_is_named_in_a_warning(
    api: CountingToolApi,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    call: str,
    path: str,
    body: bytes,
    headers: dict[str, str],
    warning: str,
) -> None:
    tools = tmp_path / "calls.tools.jsonl"
    with (
        caplog.at_level(logging.WARNING),
        capturing_tool_traffic(tools, own=[]),
        pytest.raises(aiohttp.ClientError) if call == "aiohttp-ws" else contextlib.nullcontext(),
    ):
        CLIENTS[call]("GET" if not body else "POST", api.url + path, body, headers)
    assert read_tool_traffic(tools) == []
    said = [r.getMessage() for r in caplog.records if warning in r.getMessage()]
    assert said and "replay" in said[0] and "refuse" in said[0]


def test_an_a2a_call_is_served_whatever_its_run_ids(api: CountingToolApi) -> None:
    recorded = a2a_exchange(a2a_call("message/send", run="recorded"), url=api.url + "/")
    api.connections = 0
    with ToolTrafficReplay([recorded], own=["http://127.0.0.1:1"]).serving() as served:
        reply = httpx.post(api.url + "/", json=a2a_call("message/send", run="replayed"))
    assert reply.json()["result"]["parts"][0]["text"] == "Nine to five"
    assert (served.served, api.connections) == (1, 0)


def test_a_changed_a2a_message_is_refused_with_what_changed(api: CountingToolApi) -> None:
    recorded = a2a_exchange(a2a_call("SendMessage", "When does the zoo open?"), url=api.url)
    api.connections = 0
    with (
        ToolTrafficReplay(
            [recorded], own=["http://127.0.0.1:1"], label="museum.cassette.json"
        ).serving(),
        pytest.raises(httpx.ConnectError) as caught,
    ):
        httpx.post(api.url, json=a2a_call("SendMessage"))
    assert str(caught.value) == (
        f"rec: the A2A call SendMessage to {api.url} was not recorded in museum.cassette.json: "
        'the nearest recorded call differs: message.parts[0].text changed: "When does the zoo '
        'open?" -> "When does the museum open?"; replay never sends it. Re-record the agent '
        "with the remote agent running if what it sends changed on purpose"
    )
    assert api.connections == 0


def test_rec_replay_serves_the_tools_calls_in_its_block_and_refuses_the_rest(
    api: CountingToolApi,
    standin: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from google import genai

    import rec
    from rec.standin.replies import FAKE_API_KEY

    def run(rpc: bytes) -> object:
        client = genai.Client()  # kept while it is used: it closes its connections when freed
        client.models.generate_content(model="gemini-2.0-flash", contents="Hi")
        return httpx.post(api.url + "/rpc", content=rpc, headers=JSON).json()

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with rec.record(tmp_path, name="calls", upstream=standin.url):
        recorded = run(OTHER_RPC)
    monkeypatch.delenv("GOOGLE_API_KEY")
    api.connections = 0
    with rec.replay(tmp_path / "calls.cassette.json") as replayed:
        assert run(OTHER_RPC) == recorded
        with pytest.raises(httpx.ConnectError, match="was not recorded in .*calls.cassette.json"):
            run(_rpc("eth_gasPrice"))
    assert not replayed.misses
    assert api.connections == 0


def test_the_pytest_fixtures_model_source_records_and_serves_the_tools_calls(
    api: CountingToolApi,
    standin: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ``rec`` fixture's road: ``--rec-mode record`` records the test's tool calls
    beside its model calls, and replay serves them (and refuses the rest)."""
    from cassettes._record_mode import RecordMode
    from rec.standin.replies import FAKE_API_KEY
    from replayer._model_backend import model_backend

    cassette = tmp_path / "fixture.cassette.json"

    def run(rpc: bytes) -> object:
        client = genai.Client()  # kept while it is used: it closes its connections when freed
        client.models.generate_content(model="gemini-2.0-flash", contents="Hi")
        return httpx.post(api.url + "/rpc", content=rpc, headers=JSON).json()

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with model_backend(RecordMode.RECORD, [cassette], upstream=standin.url):
        recorded = run(A2A_SEND)
    monkeypatch.delenv("GOOGLE_API_KEY")
    api.connections = 0
    with model_backend(RecordMode.REPLAY, [cassette]):
        assert run(A2A_SEND) == recorded
        with pytest.raises(httpx.ConnectError, match="the A2A call message/send"):
            run(_rpc("message/send", message={"role": "user", "parts": [{"text": "bye"}]}))
    assert api.connections == 0


def test_the_pytest_fixtures_model_source_in_auto_mode_serves_held_tool_calls_and_records_the_rest(
    api: CountingToolApi,
    standin: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--rec-mode auto``: a tool call the recording holds is answered from it (the API
    sees no connection), a new one is sent and recorded once, and replay serves both."""
    from cassettes._cassette import load_cassette
    from cassettes._record_mode import RecordMode
    from rec.standin.replies import FAKE_API_KEY
    from replayer._model_backend import model_backend

    cassette = tmp_path / "fixture.cassette.json"

    def run(*currencies: str) -> list[object]:
        client = genai.Client()  # kept while it is used: it closes its connections when freed
        client.models.generate_content(model="gemini-2.0-flash", contents="Hi")
        return [httpx.get(f"{api.url}/rates", params={"to": to}).json() for to in currencies]

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with model_backend(RecordMode.RECORD, [cassette], upstream=standin.url):
        [eur] = run("EUR")
    api.connections = 0
    with model_backend(RecordMode.AUTO, [cassette], upstream=standin.url):
        assert run("EUR", "GBP") == [eur, {"to": "GBP", "rate": RATES["GBP"]}]
    assert api.connections == 1  # GBP only
    tools = [e.request.url for e in load_cassette(cassette).exchanges if e.origin == "tool"]
    assert [url.rsplit("=", 1)[-1] for url in tools] == ["EUR", "GBP"]
    monkeypatch.delenv("GOOGLE_API_KEY")
    api.connections = 0
    with model_backend(RecordMode.REPLAY, [cassette]):
        assert run("EUR", "GBP")[1] == {"to": "GBP", "rate": RATES["GBP"]}
    assert api.connections == 0
