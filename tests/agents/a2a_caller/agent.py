"""An ADK agent that delegates to a remote agent over A2A (a ``RemoteA2aAgent`` sub-agent).

The remote is served with ADK's ``to_a2a`` (``tests/agents/a2a_remote.py``) at
``$A2A_REMOTE_URL``; ``$A2A_STREAMING`` (``1``, the default, or ``0``) chooses between
``SendStreamingMessage`` (SSE) and ``SendMessage``. ``tests.agents.a2a_remote.caller_brain``
makes the stand-in model transfer a museum question to the helper.
"""

from __future__ import annotations

import os

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.utils.constants import TransportProtocol
from google.adk.agents import LlmAgent
from google.adk.agents.remote_a2a_agent import AGENT_CARD_WELL_KNOWN_PATH, RemoteA2aAgent

MODEL = "gemini-2.0-flash"

_streaming = os.environ.get("A2A_STREAMING", "1") != "0"
helper = RemoteA2aAgent(
    name="helper",
    agent_card=os.environ["A2A_REMOTE_URL"].rstrip("/") + AGENT_CARD_WELL_KNOWN_PATH,
    description="Knows the opening hours of every museum.",
    # ADK's own default client config, with streaming chosen (the factory sets the A2A
    # version header on the client it is given).
    a2a_client_factory=ClientFactory(
        ClientConfig(
            streaming=_streaming,
            httpx_client=httpx.AsyncClient(timeout=60),
            supported_protocol_bindings=[TransportProtocol.JSONRPC, TransportProtocol.HTTP_JSON],
        )
    ),
)

root_agent = LlmAgent(
    name="caller",
    model=MODEL,
    instruction="Hand questions about museums to the helper; answer the rest yourself.",
    sub_agents=[helper],
)
