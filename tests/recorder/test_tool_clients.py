"""Tools' calls through requests, aiohttp and urllib: recorded while recording, served in
replay with the tool's API never contacted.

Each client runs the same calls against a real API on loopback that counts connections:
recorded through ``recorder.capturing_tool_traffic``, then served by
the replayer's tool traffic replay with the API still up, so a replay that reached it
would be seen.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
import requests

from recorder._capture_files import read_tool_traffic
from recorder._tool_traffic import capturing_tool_traffic
from recorder._traffic import is_tool_request
from recorder._traffic._tool_requests import is_mcp_transport
from replayer._tool_replay import ToolTrafficReplay
from tests.agents.tool_api import CountingToolApi

FAKE_TOKEN = "fake-bearer-token-0123456789abcdef"

Calls = Callable[[str], list[Any]]


@pytest.fixture
def api() -> Iterator[CountingToolApi]:
    server = CountingToolApi()
    yield server
    server.close()


def _requests_calls(base: str) -> list[Any]:
    with requests.Session() as session:
        return [
            session.get(f"{base}/rates", params={"to": "USD"}).json(),
            session.post(f"{base}/orders", json={"item": "widget", "count": 3}).json(),
            session.get(f"{base}/redirect").json(),
            session.get(f"{base}/gzip", headers={"Authorization": f"Bearer {FAKE_TOKEN}"}).json(),
            session.get(f"{base}/missing").status_code,
        ]


def _aiohttp_calls(base: str) -> list[Any]:
    async def calls() -> list[Any]:
        async with aiohttp.ClientSession() as session:
            out: list[Any] = []
            async with session.get(f"{base}/rates", params={"to": "USD"}) as response:
                out.append(await response.json())
            payload = {"item": "widget", "count": 3}
            async with session.post(f"{base}/orders", json=payload) as response:
                out.append(await response.json())
            async with session.get(f"{base}/redirect") as response:
                out.append(await response.json())
            headers = {"Authorization": f"Bearer {FAKE_TOKEN}"}
            async with session.get(f"{base}/gzip", headers=headers) as response:
                out.append(await response.json())
            async with session.get(f"{base}/missing") as response:
                out.append(response.status)
            return out

    return asyncio.run(calls())


def _urllib_calls(base: str) -> list[Any]:
    def read(request: str | urllib.request.Request) -> Any:
        with urllib.request.urlopen(request, timeout=60) as response:
            body = response.read()
            if response.headers.get("content-encoding") == "gzip":
                import gzip

                body = gzip.decompress(body)
            return json.loads(body)

    order = urllib.request.Request(
        f"{base}/orders",
        data=json.dumps({"item": "widget", "count": 3}).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    gzipped = urllib.request.Request(
        f"{base}/gzip", headers={"Authorization": f"Bearer {FAKE_TOKEN}"}
    )
    out = [read(f"{base}/rates?to=USD"), read(order), read(f"{base}/redirect"), read(gzipped)]
    try:
        urllib.request.urlopen(f"{base}/missing", timeout=60)
        out.append(200)
    except urllib.error.HTTPError as exc:
        out.append(exc.code)
    return out


CLIENTS = [
    pytest.param(_requests_calls, id="requests"),
    pytest.param(_aiohttp_calls, id="aiohttp"),
    pytest.param(_urllib_calls, id="urllib"),
]
EXPECTED = [
    {"to": "USD", "rate": 1.1},
    {"order": "widget x 3"},
    {"to": "GBP", "rate": 0.85},
    {"zipped": True},
    404,
]


@pytest.mark.parametrize("calls", CLIENTS)
def test_calls_are_recorded_then_served_without_a_connection(
    calls: Calls, api: CountingToolApi, tmp_path: Path
) -> None:
    log = tmp_path / "t.tools.jsonl"
    with capturing_tool_traffic(log, own=[]):
        assert calls(api.url) == EXPECTED
    assert api.connections >= 1
    recorded = read_tool_traffic(log)
    paths = [(e.request.method, e.request.url.removeprefix(api.url)) for e in recorded]
    assert paths == [
        ("GET", "/rates?to=USD"),
        ("POST", "/orders"),
        ("GET", "/redirect"),
        ("GET", "/rates?to=GBP"),
        ("GET", "/gzip"),
        ("GET", "/missing"),
    ]
    assert [e.response.status for e in recorded] == [200, 201, 302, 200, 200, 404]
    assert FAKE_TOKEN not in log.read_text()

    api.connections = 0
    with ToolTrafficReplay(recorded).serving() as served:
        assert calls(api.url) == EXPECTED
    assert api.connections == 0
    assert served.served == len(recorded)


@pytest.mark.parametrize(
    ("calls", "error"),
    [
        pytest.param(_requests_calls, requests.ConnectionError, id="requests"),
        pytest.param(_aiohttp_calls, aiohttp.ClientConnectionError, id="aiohttp"),
        pytest.param(_urllib_calls, urllib.error.URLError, id="urllib"),
    ],
)
def test_an_unrecorded_call_fails_closed_naming_the_client(
    calls: Calls, error: type[Exception], api: CountingToolApi
) -> None:
    with ToolTrafficReplay([]).serving(), pytest.raises(error) as caught:
        calls(api.url)
    assert api.connections == 0
    message = str(caught.value)
    assert f"the tool call GET {api.url}/rates?to=USD was not recorded" in message
    assert "(a " in message and " call)" in message
    client = {requests.ConnectionError: "requests", aiohttp.ClientConnectionError: "aiohttp"}
    assert f"a {client.get(error, 'urllib')} call" in message


@pytest.mark.parametrize("calls", CLIENTS)
def test_the_clients_are_themselves_again_after_the_block(
    calls: Calls, api: CountingToolApi, tmp_path: Path
) -> None:
    with ToolTrafficReplay([]).serving():
        pass
    with capturing_tool_traffic(tmp_path / "t.tools.jsonl", own=[]):
        pass
    assert calls(api.url) == EXPECTED
    assert api.connections >= 1
    assert not (tmp_path / "t.tools.jsonl").exists()


def test_an_opener_the_program_installed_is_kept_and_put_back(
    api: CountingToolApi, tmp_path: Path
) -> None:
    seen: list[str] = []

    class Stamp(urllib.request.BaseHandler):
        def http_request(self, request: urllib.request.Request) -> urllib.request.Request:
            seen.append(request.full_url)
            return request

    urllib.request.install_opener(urllib.request.build_opener(Stamp()))
    try:
        with capturing_tool_traffic(tmp_path / "t.tools.jsonl", own=[]) as sink:
            urllib.request.urlopen(f"{api.url}/rates?to=USD", timeout=60).read()
        assert sink.count == 1
        assert seen == [f"{api.url}/rates?to=USD"]  # the program's handler ran inside
        urllib.request.urlopen(f"{api.url}/rates?to=JPY", timeout=60).read()
        assert seen[-1] == f"{api.url}/rates?to=JPY"  # and its opener is back after
        assert len(read_tool_traffic(tmp_path / "t.tools.jsonl")) == 1
    finally:
        urllib.request.install_opener(None)  # type: ignore[arg-type]


def test_an_event_stream_is_sent_but_not_recorded(api: CountingToolApi, tmp_path: Path) -> None:
    """Reading a stream whole would hang the caller: it goes out as is, unrecorded."""
    log = tmp_path / "t.tools.jsonl"

    async def first_event() -> bytes:
        async with httpx.AsyncClient(timeout=60) as client:
            headers = {"accept": "text/event-stream"}
            async with client.stream("GET", f"{api.url}/events", headers=headers) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        return line.encode()
        return b""

    with capturing_tool_traffic(log, own=[]):
        assert asyncio.run(asyncio.wait_for(first_event(), 120)) == b"data: hello"
    assert read_tool_traffic(log) == []


MCP_POST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()


@pytest.mark.parametrize(
    ("request_", "mcp"),
    [
        pytest.param(
            httpx.Request("POST", "http://127.0.0.1:5/mcp", content=MCP_POST), True, id="json-rpc"
        ),
        pytest.param(
            httpx.Request("POST", "http://127.0.0.1:5/mcp", content=b"[" + MCP_POST + b"]"),
            True,
            id="json-rpc-batch",
        ),
        pytest.param(
            httpx.Request("DELETE", "http://127.0.0.1:5/mcp", headers={"mcp-session-id": "a1"}),
            True,
            id="session-header",
        ),
        pytest.param(
            httpx.Request("GET", "http://127.0.0.1:5/sse", headers={"accept": "text/event-stream"}),
            True,
            id="sse-at-a-toolset-url",
        ),
        pytest.param(
            httpx.Request(
                "GET", "http://127.0.0.1:6/feed", headers={"accept": "text/event-stream"}
            ),
            False,
            id="sse-elsewhere",
        ),
        pytest.param(
            httpx.Request("POST", "http://127.0.0.1:5/orders", json={"jsonrpc": "1.0"}),
            False,
            id="other-json",
        ),
    ],
)
def test_mcp_transport_is_not_a_tool_call(request_: httpx.Request, mcp: bool) -> None:
    assert is_mcp_transport(request_, ["http://127.0.0.1:5/sse"]) is mcp
    assert is_tool_request(request_, [], ["http://127.0.0.1:5/sse"]) is not mcp


def test_google_token_traffic_is_never_a_tool_call() -> None:
    request = httpx.Request("POST", "https://oauth2.googleapis.com/token", content=b"grant_type=x")
    assert not is_tool_request(request, [])


def test_blocks_nest_end_in_any_order_and_leave_the_clients_as_they_were(
    api: CountingToolApi, tmp_path: Path
) -> None:
    """A recording's capture and rec's ADK plugin's overlap in one process, and the outer
    one may end first: each library is patched once and put back exactly."""
    import contextlib

    before = (
        requests.adapters.HTTPAdapter.send,
        aiohttp.ClientSession._request,
        urllib.request._opener,  # type: ignore[attr-defined]
    )
    outer = contextlib.ExitStack()
    outer.enter_context(capturing_tool_traffic(tmp_path / "outer.tools.jsonl", own=[]))
    inner = contextlib.ExitStack()
    inner.enter_context(capturing_tool_traffic(tmp_path / "inner.tools.jsonl", own=[]))
    assert _requests_calls(api.url) == EXPECTED
    outer.close()  # the outer block ends first
    assert _aiohttp_calls(api.url) == EXPECTED  # the inner one still records
    inner.close()
    after = (
        requests.adapters.HTTPAdapter.send,
        aiohttp.ClientSession._request,
        urllib.request._opener,  # type: ignore[attr-defined]
    )
    assert after == before
    assert not (tmp_path / "outer.tools.jsonl").exists()  # the innermost block records
    assert len(read_tool_traffic(tmp_path / "inner.tools.jsonl")) == 12


@pytest.mark.parametrize("block", ["capture", "serve"])
def test_the_recording_proxy_in_the_same_process_is_never_a_tool_call(
    block: str, api: CountingToolApi, tmp_path: Path, standin_factory: Any
) -> None:
    """The forwarder's upstream client is aiohttp: while a block captures or serves the
    tools' aiohttp calls, the model call it forwards still goes to the model, streamed, and
    is neither recorded as a tool call nor answered from the tool recording."""
    from rec.standin.replies import FAKE_API_KEY, Reply
    from recorder._recorder import Recorder
    from recorder._traffic import Upstreams

    model = standin_factory(lambda request: Reply.text("one two three", chunks=3))
    stream = "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    log = tmp_path / "t.tools.jsonl"
    with Recorder(
        tmp_path, name="seam", upstreams=Upstreams(gemini=model.url), write_evalset=False
    ).running_in_thread() as rec:
        seam = (
            capturing_tool_traffic(log, own=[rec.url])
            if block == "capture"
            else ToolTrafficReplay([], own=[rec.url]).serving()
        )
        with seam:
            answer = httpx.post(
                rec.url + stream,
                json=body,
                headers={"x-goog-api-key": FAKE_API_KEY},
                timeout=60,
            )
            if block == "capture":
                assert _aiohttp_calls(api.url) == EXPECTED  # the seam is on
    assert answer.status_code == 200
    assert answer.text.count("data: ") == 3
    assert rec.result is not None and rec.result.new_exchanges == 1
    if block == "capture":
        assert all(e.request.url.startswith(api.url) for e in read_tool_traffic(log))


def _aiohttp_told(url: str) -> str:
    async def get() -> str:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            return str((await response.json())["told"])

    return asyncio.run(get())


def _requests_told(url: str) -> str:
    return str(requests.get(url, timeout=60).json()["told"])


def _urllib_told(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as response:
        return str(json.loads(response.read())["told"])


def _httpx_told(url: str) -> str:
    return str(httpx.get(url, timeout=60).json()["told"])


@pytest.mark.parametrize(
    "told",
    [
        pytest.param(_aiohttp_told, id="aiohttp"),
        pytest.param(_requests_told, id="requests"),
        pytest.param(_urllib_told, id="urllib"),
        pytest.param(_httpx_told, id="httpx"),
    ],
)
def test_a_call_to_the_recording_proxy_tells_it_the_tools_credentials(
    told: Callable[[str], str], api: CountingToolApi, tmp_path: Path, standin_factory: Any
) -> None:
    """While capturing, every client library's request to rec's own proxy (the model
    request that carries a tool's result) names the credentials the tools sent, so the
    proxy masks them before it writes that request; a request elsewhere names none."""
    from cassettes._secret_shapes import (
        CREDENTIALS_HEADER,
        credential_scope,
        credentials_from_header,
    )
    from rec.standin.replies import Reply, StandinRequest

    def seen(request: StandinRequest) -> Reply:
        return Reply.json({"told": request.headers.get(CREDENTIALS_HEADER, "")})

    proxy = standin_factory(routes={"/seen": seen})
    elsewhere = standin_factory(routes={"/seen": seen})
    with credential_scope(), capturing_tool_traffic(tmp_path / "t.tools.jsonl", own=[proxy.url]):
        headers = {"Authorization": f"Bearer {FAKE_TOKEN}"}
        assert requests.get(f"{api.url}/gzip", headers=headers, timeout=60).json() == EXPECTED[3]
        assert FAKE_TOKEN in credentials_from_header(told(f"{proxy.url}/seen"))
        assert told(f"{elsewhere.url}/seen") == ""
