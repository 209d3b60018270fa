"""Capturing the tools' own httpx calls while recording (``recorder._tool_traffic``).

The tool API is the stand-in's ``/rates`` route: on loopback, but not rec's proxy, so by
rec's rule ("everything but rec's own proxy and forwarder") it is a tool's API.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import rec
from cassettes._cassette import load_cassette
from rec.standin.server import StandinGemini
from recorder._capture_files import read_tool_traffic
from recorder._tool_traffic import capturing_tool_traffic, tool_traffic_path
from recorder._traffic import INTERNAL_EXTENSION
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.travel_recording import CONVERSATIONS, record_travel

FAKE_KEY = "AIzaFAKE-test-key-00000000000000000000000"
FAKE_BEARER = "fake-bearer-token-0123456789abcdef"


@pytest.fixture(scope="module")
def rates_api() -> Iterator[StandinGemini]:
    with StandinGemini(routes=STANDIN_ROUTES) as api:
        yield api


def test_recording_holds_the_tool_call_after_the_model_exchanges(tmp_path: Path) -> None:
    record_travel(tmp_path, CONVERSATIONS[:1])
    cassette = load_cassette(tmp_path / "travel.cassette.json")
    model = [e for e in cassette.exchanges if e.origin is None]
    tools = [e for e in cassette.exchanges if e.origin == "tool"]
    assert len(tools) == 1
    assert [e.id for e in cassette.exchanges] == list(range(len(cassette.exchanges)))
    assert tools[0].id == max(e.id for e in model) + 1
    assert tools[0].request.method == "GET"
    assert tools[0].request.url.endswith("/rates?from=EUR&to=USD")
    assert tools[0].response.status == 200
    assert tools[0].response.body is not None
    assert tools[0].response.body.model_dump()["value"]["rate"] == 1.1
    assert all("/rates" not in e.request.url for e in model)
    assert not (tmp_path / ".rec" / "travel.tools.jsonl").exists()  # merged, then removed
    evalset = json.loads((tmp_path / "travel.evalset.json").read_text())
    assert len(evalset["eval_cases"][0]["conversation"]) == 4


def _sync_call(url: str) -> httpx.Response:
    return httpx.get(
        url,
        params={"from": "EUR", "to": "GBP", "key": FAKE_KEY},
        headers={"Authorization": f"Bearer {FAKE_BEARER}"},
    )


def _async_call(url: str) -> httpx.Response:
    async def call() -> httpx.Response:
        async with httpx.AsyncClient() as client:
            return await client.get(
                url,
                params={"from": "EUR", "to": "GBP", "key": FAKE_KEY},
                headers={"Authorization": f"Bearer {FAKE_BEARER}"},
            )

    return asyncio.run(call())


@pytest.mark.parametrize(
    "call", [pytest.param(_sync_call, id="sync"), pytest.param(_async_call, id="async")]
)
def test_tool_calls_are_sent_recorded_and_redacted(
    call: object, rates_api: StandinGemini, tmp_path: Path
) -> None:
    target = tmp_path / ".rec" / "x.tools.jsonl"
    with capturing_tool_traffic(target, own=["http://127.0.0.1:1"]):
        response = call(f"{rates_api.url}/rates")  # type: ignore[operator]
    assert response.status_code == 200
    assert response.json()["rate"] == 0.85  # the caller still gets the real answer
    text = target.read_text()
    assert FAKE_KEY not in text
    assert FAKE_BEARER not in text
    (exchange,) = read_tool_traffic(target)
    assert exchange.origin == "tool"
    assert "authorization" not in exchange.request.headers
    assert "key=" not in exchange.request.url
    assert exchange.request.url == f"{rates_api.url}/rates?from=EUR&to=GBP"


@pytest.mark.parametrize(
    ("url", "extensions", "captured"),
    [
        pytest.param("{api}/rates", {}, True, id="tool-api-on-loopback"),
        pytest.param("{own}/v1beta/models/m:generateContent", {}, False, id="rec-proxy"),
        pytest.param("{api}/rates", {INTERNAL_EXTENSION: True}, False, id="rec-forwarder"),
    ],
)
def test_only_tool_requests_are_captured(
    url: str,
    extensions: dict[str, object],
    captured: bool,
    rates_api: StandinGemini,
    tmp_path: Path,
) -> None:
    target = tmp_path / "t.tools.jsonl"
    own = rates_api.url.replace("127.0.0.1", "localhost")  # same server, other origin
    with capturing_tool_traffic(target, own=[own]), httpx.Client() as client:
        request = client.build_request(
            "GET", url.format(api=rates_api.url, own=own), extensions=extensions
        )
        client.send(request)
    assert len(read_tool_traffic(target)) == (1 if captured else 0)


def test_capture_ends_with_the_block(rates_api: StandinGemini, tmp_path: Path) -> None:
    target = tmp_path / "t.tools.jsonl"
    with capturing_tool_traffic(target, own=[]):
        pass
    httpx.get(f"{rates_api.url}/rates")
    assert not target.exists()


def test_capture_replaces_no_httpx_method(rates_api: StandinGemini, tmp_path: Path) -> None:
    """Capture goes through respx's router for the block: httpx's classes stay as they are."""
    sync = httpx.HTTPTransport.handle_request
    async_ = httpx.AsyncHTTPTransport.handle_async_request
    target = tmp_path / "t.tools.jsonl"
    with capturing_tool_traffic(target, own=[]):
        assert httpx.HTTPTransport.handle_request is sync
        assert httpx.AsyncHTTPTransport.handle_async_request is async_
        httpx.get(f"{rates_api.url}/rates")
    assert len(read_tool_traffic(target)) == 1


def test_capture_records_what_the_users_own_respx_mock_answers(
    tmp_path: Path, loopback_only: object
) -> None:
    import respx

    target = tmp_path / "t.tools.jsonl"
    with capturing_tool_traffic(target, own=[]), respx.mock() as user:
        user.get("https://rates.example.com/latest").respond(json={"rate": 2.0})
        answer = httpx.get("https://rates.example.com/latest")
    assert answer.json() == {"rate": 2.0}
    (exchange,) = read_tool_traffic(target)
    assert exchange.response.body.model_dump()["value"] == {"rate": 2.0}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("capture", "expected"),
    [
        pytest.param("out/.rec/demo.adk.jsonl", "out/.rec/demo.tools.jsonl", id="adk-capture"),
        pytest.param("x/other.jsonl", "x/other.tools.jsonl", id="other-name"),
    ],
)
def test_tool_traffic_path_sits_beside_the_adk_capture(capture: str, expected: str) -> None:
    assert tool_traffic_path(capture) == Path(expected)


def test_adk_plugin_captures_beside_its_session_log_until_closed(
    rates_api: StandinGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cassettes._evalset_writer import adk_capture_path
    from recorder._adk_plugin import RecCapturePlugin

    proxy = rates_api.url.replace("127.0.0.1", "localhost")  # what GOOGLE_*_BASE_URL names
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", proxy)
    plugin = RecCapturePlugin(path=adk_capture_path(tmp_path, "trip"))
    try:
        httpx.get(f"{rates_api.url}/rates", params={"from": "EUR", "to": "USD"})
        httpx.get(f"{proxy}/rates")  # the proxy's own traffic: not a tool's
    finally:
        asyncio.run(plugin.close())
    httpx.get(f"{rates_api.url}/rates")  # after close: not captured
    tools = read_tool_traffic(tmp_path / ".rec" / "trip.tools.jsonl")
    assert [e.request.url for e in tools] == [f"{rates_api.url}/rates?from=EUR&to=USD"]


@pytest.mark.parametrize(
    ("capture_tools", "tool_exchanges"),
    [pytest.param(True, 1, id="default-on"), pytest.param(False, 0, id="off")],
)
def test_record_captures_tools_unless_told_not_to(
    capture_tools: bool, tool_exchanges: int, rates_api: StandinGemini, tmp_path: Path
) -> None:
    with rec.record(tmp_path, name="r", upstream=rates_api.url, capture_tools=capture_tools):
        httpx.get(f"{rates_api.url}/rates", params={"to": "JPY"})
    if not tool_exchanges:  # nothing was recorded, so nothing was written
        assert not (tmp_path / "r.cassette.json").exists()
        return
    cassette = load_cassette(tmp_path / "r.cassette.json")
    assert [e.origin for e in cassette.exchanges] == ["tool"] * tool_exchanges


def test_a_refused_tool_call_is_logged_with_its_credentials_masked(
    rates_api: StandinGemini, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The capture's log line names the URL, never its apikey= or key=."""
    query_secret = "FAKEquery-secret-0123456789"
    target = tmp_path / "t.tools.jsonl"
    with capturing_tool_traffic(target, own=["http://127.0.0.1:1"]):
        response = httpx.post(
            f"{rates_api.url}/rates?to=GBP&apikey={query_secret}&key={FAKE_KEY}",
            json={"note": "my stripe key is sk_live_FAKE0123456789abcdefghij"},
        )
    assert response.status_code == 200
    assert read_tool_traffic(target) == []  # refused: a key shape in the body
    assert "was not recorded" in caplog.text and "/rates" in caplog.text
    assert query_secret not in caplog.text and FAKE_KEY not in caplog.text
