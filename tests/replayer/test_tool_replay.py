"""``rec replay --live-tools``: real tools, their own httpx calls served from the cassette.

The travel agent is recorded against the stand-in, whose ``/rates`` route is the
``convert_currency`` tool's API; the cassette then holds that call (``origin: "tool"``).
Every replay runs with the stand-in stopped, no API key and sockets refused beyond
loopback, so only the cassette can answer the tool.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from cassettes._cassette import Exchange, JsonBody, RecordedRequest, RecordedResponse, load_cassette
from replayer._tool_replay import ToolTrafficReplay, tool_exchanges
from tests.agents.travel_recording import TRAVEL_AGENT
from tests.factories import cli_replay as _replay

CASE_ID = "what_s_the_weather_in_rome"


@pytest.fixture
def rates_url(recorded: Path) -> str:
    """The (now dead) rates API URL the recording used."""
    cassette = load_cassette(recorded / "travel.cassette.json")
    (tool,) = [e for e in cassette.exchanges if e.origin == "tool"]
    parts = urlsplit(tool.request.url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


@pytest.fixture
def offline(loopback_only: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, no stand-in, nothing beyond loopback."""
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("TRAVEL_RATES_URL", raising=False)


@pytest.mark.usefixtures("offline")
def test_live_tools_get_their_recorded_http_answers(
    recorded: Path, rates_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAVEL_RATES_URL", rates_url)
    code, output = _replay(str(TRAVEL_AGENT), str(recorded), "--live-tools")
    assert code == 0, output
    assert "2 passed, 0 failed, 2 cases" in output


@pytest.mark.usefixtures("offline")
def test_an_unrecorded_tool_call_fails_the_case_naming_tool_and_url(
    recorded: Path, rates_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAVEL_RATES_URL", rates_url.replace("/rates", "/v2/rates"))
    code, output = _replay(str(TRAVEL_AGENT), str(recorded), "--live-tools", "--case", CASE_ID)
    assert code == 1, output
    text = " ".join(output.split())  # the report wraps long lines
    assert "(while running convert_currency)" in text
    assert f"{rates_url.replace('/rates', '/v2/rates')}?from=EUR&to=USD was not recorded" in text
    assert f"nearest recorded tool call: GET {rates_url}?from=EUR&to=USD" in text
    assert "replay without --live-tools" in text


@pytest.mark.usefixtures("offline")
def test_mock_mode_does_not_run_the_tool(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAVEL_RATES_URL", "http://127.0.0.1:9/nowhere")
    code, output = _replay(str(TRAVEL_AGENT), str(recorded), "--case", CASE_ID)
    assert code == 0, output


def _exchange(url: str, rate: float, *, method: str = "GET") -> Exchange:
    return Exchange(
        id=0,
        recorded_at="2026-01-01T00:00:00+00:00",
        origin="tool",
        request=RecordedRequest(method=method, url=url),
        response=RecordedResponse(
            status=200,
            headers={"content-type": "application/json", "x-api": "rates"},
            body=JsonBody(value={"rate": rate}),
        ),
    )


RECORDED = [
    _exchange("https://rates.example.test/v1/rates?from=EUR&to=USD", 1.1),
    _exchange("https://rates.example.test/v1/rates?from=EUR&to=GBP", 0.85),
    Exchange(  # a model exchange: never answers a tool
        id=2,
        recorded_at="2026-01-01T00:00:00+00:00",
        request=RecordedRequest(method="GET", url="https://rates.example.test/v1/models"),
        response=RecordedResponse(status=200),
    ),
]


@pytest.mark.parametrize(
    ("url", "rate"),
    [
        pytest.param("https://rates.example.test/v1/rates?from=EUR&to=USD", 1.1, id="usd"),
        pytest.param("https://rates.example.test/v1/rates?to=GBP&from=EUR", 0.85, id="gbp"),
    ],
)
def test_recorded_tool_calls_are_answered_with_status_headers_and_body(
    url: str, rate: float
) -> None:
    with ToolTrafficReplay(
        tool_exchanges(RECORDED), own=["http://127.0.0.1:1"]
    ).serving() as served:
        response = httpx.get(url)
    assert response.status_code == 200
    assert response.headers["x-api"] == "rates"
    assert response.json() == {"rate": rate}
    assert served.served == 1


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("https://rates.example.test/v1/rates?from=EUR&to=JPY", id="other-query"),
        pytest.param("https://rates.example.test/v1/models", id="model-exchange"),
    ],
)
def test_unrecorded_tool_calls_fail_closed(url: str) -> None:
    with (
        ToolTrafficReplay(tool_exchanges(RECORDED)).serving(),
        pytest.raises(httpx.ConnectError) as caught,
    ):
        httpx.get(url)
    message = str(caught.value)
    assert f"{url} was not recorded" in message
    assert "Re-record" in message


@pytest.mark.parametrize(
    ("url", "pass_hosts", "passes"),
    [
        pytest.param("http://127.0.0.1:1/v1beta/models/m", (), True, id="replay-proxy"),
        pytest.param("http://127.0.0.1:2/rates", (), False, id="other-port-is-a-tool"),
        pytest.param(
            "https://generativelanguage.googleapis.com/v1beta/models/m",
            ("googleapis.com",),
            True,
            id="live-model",
        ),
        pytest.param(
            "https://example.googleapis.com.evil.test/x",
            ("googleapis.com",),
            False,
            id="suffix-is-a-whole-label",
        ),
    ],
)
def test_which_requests_pass_through(url: str, pass_hosts: tuple[str, ...], passes: bool) -> None:
    replay = ToolTrafficReplay([], own=["http://127.0.0.1:1"], pass_hosts=pass_hosts)
    assert replay.passes_through(httpx.Request("GET", url)) is passes
