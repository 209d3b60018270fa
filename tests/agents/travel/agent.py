"""The travel assistant: tools, session state in the instruction, and a booking sub-agent.

``root_agent`` (``travel_agent``) answers weather, flight and currency questions and
hands bookings to ``booking_agent`` through ``transfer_to_agent``. ``book_hotel`` writes
the booking into session state (``bookings``, ``last_booking``); the instructions read
``{user_name}`` and ``{home_city?}`` from state. ``convert_currency`` calls an external
HTTP API with httpx at ``$TRAVEL_RATES_URL`` (tests point it at a local server; without
it the tool raises, as a tool without its credentials would).
"""

from __future__ import annotations

import os
from typing import Any

import httpx
from google.adk.agents import LlmAgent
from google.adk.tools.tool_context import ToolContext

MODEL = "gemini-2.0-flash"
RATES_URL_ENV = "TRAVEL_RATES_URL"

_WEATHER = {"paris": ("sunny", 24), "rome": ("cloudy", 19), "tokyo": ("rain", 16)}


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather forecast for a city.

    Args:
        city: The city name, e.g. "Paris".
    """
    sky, temperature = _WEATHER.get(city.lower(), ("clear", 21))
    return {"city": city, "sky": sky, "temperature_c": temperature}


def find_flights(origin: str, destination: str, date: str) -> dict[str, Any]:
    """Find direct flights between two cities on a date.

    Args:
        origin: Departure city.
        destination: Arrival city.
        date: Travel date as YYYY-MM-DD.
    """
    code = (origin[:2] + destination[:2]).upper()
    return {
        "flights": [
            {"flight": f"{code}{100 + len(date)}", "departs": f"{date}T08:15", "price_eur": 129},
            {"flight": f"{code}{200 + len(date)}", "departs": f"{date}T17:40", "price_eur": 98},
        ]
    }


def convert_currency(amount: float, currency: str) -> dict[str, Any]:
    """Convert an amount in euros to another currency at today's rate.

    Args:
        amount: The amount in EUR.
        currency: The target currency code, e.g. "USD".
    """
    base_url = os.environ.get(RATES_URL_ENV)
    if not base_url:
        raise RuntimeError(f"{RATES_URL_ENV} is not set: no exchange-rate service configured")
    response = httpx.get(base_url, params={"from": "EUR", "to": currency.upper()}, timeout=10)
    response.raise_for_status()
    rate = float(response.json()["rate"])
    return {
        "amount_eur": amount,
        "currency": currency.upper(),
        "converted": round(amount * rate, 2),
    }


def book_hotel(city: str, nights: int, tool_context: ToolContext) -> dict[str, Any]:
    """Book a hotel room and remember the booking in the session.

    Args:
        city: The city to stay in.
        nights: Number of nights.
    """
    bookings = list(tool_context.state.get("bookings", []))
    reference = f"HTL-{city[:3].upper()}-{nights}-{len(bookings) + 1}"
    booking = {"reference": reference, "city": city, "nights": nights}
    bookings.append(booking)
    tool_context.state["bookings"] = bookings
    tool_context.state["last_booking"] = reference
    return {"status": "confirmed", **booking}


booking_agent = LlmAgent(
    name="booking_agent",
    model=MODEL,
    description="Books hotels for the user and confirms booking references.",
    instruction=(
        "You book hotels for {user_name}. Use book_hotel, then confirm the booking reference. "
        "For anything that is not a booking, transfer back to travel_agent."
    ),
    tools=[book_hotel],
)

root_agent = LlmAgent(
    name="travel_agent",
    model=MODEL,
    description="A travel assistant for weather, flights and currency.",
    instruction=(
        "You are a friendly travel assistant helping {user_name} (home city: {home_city?}). "
        "Use the tools for weather, flights and currency conversion. "
        "Transfer hotel bookings to booking_agent."
    ),
    tools=[get_weather, find_flights, convert_currency],
    sub_agents=[booking_agent],
)
