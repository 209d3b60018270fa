"""An ADK agent whose tools come from an OpenAPI spec fetched over HTTP while it loads.

``$RATES_SPEC_URL`` is a ``CountingToolApi``'s ``/openapi.json``: the module fetches it
with requests at import, as agents that build an ``OpenAPIToolset`` from a URL do, and
ADK's ``RestApiTool`` then calls the API the spec describes (with httpx).
"""

from __future__ import annotations

import os

import requests
from google.adk.agents import LlmAgent
from google.adk.tools.openapi_tool import OpenAPIToolset

TURNS = ("What is the USD rate?",)

spec = requests.get(os.environ["RATES_SPEC_URL"], timeout=60)
spec.raise_for_status()

root_agent = LlmAgent(
    name="openapi_rates",
    model="gemini-2.0-flash",
    instruction="You answer exchange-rate questions with your tools.",
    # The API runs on loopback in the tests; ADK's tools refuse private hosts by default.
    tools=[
        OpenAPIToolset(spec_str=spec.text, spec_str_type="json", allow_private_network_access=True)
    ],
)
