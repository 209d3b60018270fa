"""An ADK agent whose three tools call the same rates API with requests, aiohttp and urllib.

Each tool reads ``$RATES_URL`` (a ``CountingToolApi``'s ``/rates``); ``rate_brain`` makes
the stand-in model call the tool a user turn names ("with requests", ...).
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any

import aiohttp
import requests
from google.adk.agents import LlmAgent

from rec.standin.brain import RuleBrain, call, say

MODEL = "gemini-2.0-flash"
TURNS = (
    "What is the USD rate with requests?",
    "What is the GBP rate with aiohttp?",
    "What is the JPY rate with urllib?",
)


def rate_with_requests(currency: str) -> dict[str, Any]:
    """The EUR rate to a currency, asked with requests.

    Args:
        currency: The currency code, e.g. "USD".
    """
    response = requests.get(os.environ["RATES_URL"], params={"to": currency}, timeout=60)
    return dict(response.json())


async def rate_with_aiohttp(currency: str) -> dict[str, Any]:
    """The EUR rate to a currency, asked with aiohttp.

    Args:
        currency: The currency code, e.g. "GBP".
    """
    async with aiohttp.ClientSession() as session:
        async with session.get(os.environ["RATES_URL"], params={"to": currency}) as response:
            return dict(await response.json())


def rate_with_urllib(currency: str) -> dict[str, Any]:
    """The EUR rate to a currency, asked with urllib.

    Args:
        currency: The currency code, e.g. "JPY".
    """
    url = f"{os.environ['RATES_URL']}?to={currency}"
    with urllib.request.urlopen(url, timeout=60) as response:
        return dict(json.loads(response.read()))


root_agent = LlmAgent(
    name="rates_agent",
    model=MODEL,
    instruction="You answer exchange-rate questions with the tool the user names.",
    tools=[rate_with_requests, rate_with_aiohttp, rate_with_urllib],
)


def rate_brain() -> RuleBrain:
    """The stand-in model's rules: call the named tool, then say the rate."""
    currency = r"\b(USD|GBP|JPY)\b"
    return RuleBrain(
        [
            call("rate_with_requests", lambda t: {"currency": t.match(currency)}, when="requests"),
            call("rate_with_aiohttp", lambda t: {"currency": t.match(currency)}, when="aiohttp"),
            call("rate_with_urllib", lambda t: {"currency": t.match(currency)}, when="urllib"),
            say("The rate is in: {user_text}"),
        ]
    )
