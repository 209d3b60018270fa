"""The google-genai clients ADK builds for an agent's models share one TLS context.

Real ADK agents and real google-genai clients, built the way ADK builds them on a running
loop; what is read back is the client's own TLS setup (google-genai's private fields: the
mechanism is that no client builds a context of its own, so no CA bundle is loaded again).
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.models import Gemini
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from rec.standin.replies import FAKE_API_KEY
from replayer._model_clients import gemini_models, shared_tls, tls_context


def _tree() -> LlmAgent:
    helper = LlmAgent(name="helper", model=Gemini(model="gemini-2.0-flash"))
    child = LlmAgent(name="child", model=Gemini(model="gemini-2.0-flash"))
    return LlmAgent(
        name="root",
        model=Gemini(model="gemini-2.0-flash"),
        sub_agents=[child],
        tools=[AgentTool(agent=helper)],
    )


def _tls_of(model: Any) -> list[object]:
    """The TLS contexts the model's client (built on a running loop, as ADK does) uses:
    httpx's ``verify``, aiohttp's and websockets' ``ssl``."""

    async def build() -> Any:
        return model.api_client._api_client

    api = asyncio.run(build())
    return [
        api._async_httpx_client_args["verify"],
        api._async_client_session_request_args["ssl"],
        api._websocket_ssl_ctx["ssl"],
    ]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)


def test_every_model_of_the_tree_builds_its_client_with_the_one_context() -> None:
    root = _tree()
    models = gemini_models(root)
    assert len(models) == 3
    with shared_tls(root) as count:
        assert count == 3
        for model in models:
            assert all(ctx is tls_context() for ctx in _tls_of(model))
    assert all(model.client_kwargs is None for model in models)  # put back
    outside = _tls_of(Gemini(model="gemini-2.0-flash"))
    assert all(isinstance(ctx, ssl.SSLContext) and ctx is not tls_context() for ctx in outside)


def test_a_model_that_names_its_own_context_keeps_it() -> None:
    own = ssl.create_default_context()
    options = types.HttpOptions(async_client_args={"ssl": own}, headers={"x-mine": "1"})
    root = LlmAgent(name="root", model=Gemini(model="gemini-2.0-flash"))
    root.model.client_kwargs = {"http_options": options}
    with shared_tls(root):
        verify, aiohttp_ssl, websocket_ssl = _tls_of(root.model)
        assert aiohttp_ssl is own and websocket_ssl is own
        assert verify is tls_context()  # httpx was given none of its own
        assert root.model.client_kwargs["http_options"].headers == {"x-mine": "1"}
    assert root.model.client_kwargs == {"http_options": options}
