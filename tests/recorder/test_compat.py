"""The private google-genai and google-adk names the recorder uses exist; changes are reported."""

from __future__ import annotations

import pytest
from google.genai import _base_url

from cassettes._errors import RunError
from recorder._traffic import AdkChanged, session_manager_of
from recorder._traffic._compat import (
    GenaiChanged,
    caller_frame,
    genai_default_base_urls,
    hold_aiohttp_headers,
    installed_url_opener,
    module_generators,
)


def test_default_base_urls_are_set_for_the_block_and_restored() -> None:
    before = (_base_url.get_base_url(False), _base_url.get_base_url(True))
    with genai_default_base_urls("http://127.0.0.1:9"):
        assert _base_url.get_base_url(False) == "http://127.0.0.1:9"
        assert _base_url.get_base_url(True) == "http://127.0.0.1:9"
    assert (_base_url.get_base_url(False), _base_url.get_base_url(True)) == before


def test_they_win_over_a_default_the_program_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_base_url, "_default_base_gemini_url", "https://example.invalid")
    with genai_default_base_urls("http://127.0.0.1:9"):
        assert _base_url.get_base_url(False) == "http://127.0.0.1:9"
    assert _base_url.get_base_url(False) == "https://example.invalid"


def test_a_google_genai_without_them_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(_base_url, "set_default_base_urls")
    with pytest.raises(GenaiChanged) as caught:
        with genai_default_base_urls("http://127.0.0.1:9"):
            pass
    assert "google.genai._base_url.set_default_base_urls" in str(caught.value)
    assert "recorder/_traffic/_compat.py" in str(caught.value)


def test_an_mcp_toolsets_session_manager_is_reached() -> None:
    from google.adk.tools.mcp_tool import McpToolset
    from google.adk.tools.mcp_tool.mcp_session_manager import (
        MCPSessionManager,
        StreamableHTTPConnectionParams,
    )

    toolset = McpToolset(
        connection_params=StreamableHTTPConnectionParams(url="http://127.0.0.1:9/mcp")
    )
    assert isinstance(session_manager_of(toolset), MCPSessionManager)


def test_an_adk_that_moved_it_is_reported() -> None:
    class Moved:
        """A toolset of an ADK release that keeps its session manager elsewhere."""

    with pytest.raises(AdkChanged) as caught:
        session_manager_of(Moved())
    assert "_mcp_session_manager" in str(caught.value)
    assert "recorder/_traffic/_compat.py" in str(caught.value)


def test_the_installed_url_opener_is_read() -> None:
    import urllib.request

    mine = urllib.request.build_opener()
    urllib.request.install_opener(mine)
    try:
        assert installed_url_opener() is mine
    finally:
        urllib.request.install_opener(None)  # type: ignore[arg-type]
    assert installed_url_opener() is None


def test_a_python_without_it_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    monkeypatch.delattr(urllib.request, "_opener")
    with pytest.raises(RunError) as caught:
        installed_url_opener()
    assert "urllib.request has no _opener" in str(caught.value)
    assert "recorder/_traffic/_compat.py" in str(caught.value)


def test_the_live_client_reaches_a_loopback_http_base_url_over_plain_websocket() -> None:
    from google import genai

    from recorder._traffic import install_live_reach
    from recorder._traffic._compat import plain_websocket_url

    assert install_live_reach() is True
    assert install_live_reach() is True  # idempotent
    local = genai.Client(api_key="x" * 20, http_options={"base_url": "http://127.0.0.1:9/"})
    remote = genai.Client(api_key="x" * 20, http_options={"base_url": "https://example.com"})
    assert local._api_client._websocket_base_url() == "ws://127.0.0.1:9"  # noqa: SLF001
    assert remote._api_client._websocket_base_url().startswith("wss://")  # noqa: SLF001
    assert plain_websocket_url("http://10.0.0.1:80") is None


def test_an_aiohttp_connectors_protocol_factory_is_read_and_replaced() -> None:
    import asyncio
    import functools

    import aiohttp
    from aiohttp.client_proto import ResponseHandler

    from recorder._traffic._compat import aiohttp_protocol_factory, set_aiohttp_protocol_factory

    async def check() -> None:
        connector = aiohttp.TCPConnector()
        try:
            factory = aiohttp_protocol_factory(connector)
            assert isinstance(factory, functools.partial) and factory.func is ResponseHandler
            replacement = functools.partial(ResponseHandler, loop=asyncio.get_running_loop())
            set_aiohttp_protocol_factory(connector, replacement)
            assert aiohttp_protocol_factory(connector) is replacement
        finally:
            await connector.close()

    asyncio.run(check())


def test_an_aiohttp_response_handlers_parser_is_read() -> None:
    import asyncio

    from aiohttp.client_proto import ResponseHandler

    from recorder._traffic._compat import aiohttp_response_parser

    async def check() -> None:
        handler = ResponseHandler(loop=asyncio.get_running_loop())
        handler.set_response_params()
        assert hasattr(aiohttp_response_parser(handler), "feed_data")

    asyncio.run(check())


def test_an_aiohttp_responses_headers_are_held_for_its_body() -> None:
    from aiohttp import web

    response = web.StreamResponse()
    assert hold_aiohttp_headers(response)
    assert response._send_headers_immediately is False
    assert web.StreamResponse()._send_headers_immediately is True  # one response only


def test_the_generators_behind_random_and_secrets_are_reached() -> None:
    import random
    import secrets

    generator, system = module_generators()
    assert isinstance(generator, random.Random) and isinstance(system, random.SystemRandom)
    assert random.randint.__self__ is generator  # type: ignore[attr-defined]
    assert secrets.choice.__self__ is system  # type: ignore[attr-defined]


def test_the_frame_of_a_caller_is_reached() -> None:
    def asks() -> object:
        return caller_frame(1)

    frame = asks()
    assert frame is not None and frame.f_code.co_name == "test_the_frame_of_a_caller_is_reached"  # type: ignore[attr-defined]


def test_a_traced_call_is_rebuilt_as_google_genai_sends_it(standin_env) -> None:
    """The body google-genai puts on the wire (sent for real to the stand-in) is the one
    ``genai_request_body`` builds for the same model, contents and config."""
    import json

    from google import genai
    from google.genai import types

    from recorder._traffic import genai_request_body

    contents = [
        types.Content(role="user", parts=[types.Part(text="What's the weather in Rome?")]),
        types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name="f", args={"x": 1}))],
        ),
    ]
    config = types.GenerateContentConfig(
        system_instruction="Be brief.",
        temperature=0.2,
        tools=[
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(name="f", parameters_json_schema={"type": "object"})
                ]
            )
        ],
    )
    standin_env.reset()
    client = genai.Client()
    client.models.generate_content(model="gemini-2.0-flash", contents=contents, config=config)
    (sent,) = standin_env.calls("generateContent")
    built = genai_request_body("gemini-2.0-flash", contents, config)
    assert built.pop("_url") == {"model": "models/gemini-2.0-flash"}
    assert json.loads(json.dumps(built)) == sent.body


def test_a_google_genai_without_its_request_converter_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from google.genai import models

    from recorder._traffic import genai_request_body

    monkeypatch.delattr(models, "_GenerateContentParameters_to_mldev")
    with pytest.raises(GenaiChanged) as caught:
        genai_request_body("gemini-2.0-flash", "hi", None)
    assert "_GenerateContentParameters_to_mldev" in str(caught.value)
    assert "recorder/_traffic/_compat.py" in str(caught.value)
