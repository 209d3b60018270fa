"""RuleBrain rules that make the stand-in model drive the travel agent realistically.

A typical conversation (state ``{"user_name": "Ada", "home_city": "Paris"}``)::

    user: What's the weather in Rome?            -> get_weather(city=Rome), summary
    user: Find flights from Paris to Rome on 2025-05-01 and convert 98 EUR to USD
                                                 -> find_flights + convert_currency (parallel)
    user: Please book a hotel in Rome for 3 nights
                                                 -> transfer_to_agent(booking_agent),
                                                    booking_agent: book_hotel(Rome, 3), summary
    user: And the weather in Tokyo?              -> booking_agent: transfer_to_agent(travel_agent),
                                                    travel_agent: get_weather(Tokyo), summary

The rules also serve plain google-genai programs that declare ``get_weather`` /
``get_time`` / ``find_flights`` tools (the agent name is then None).
"""

from __future__ import annotations

from rec.standin.brain import Rule, RuleBrain, Turn, call, say, transfer

CITY = r"\b(?:in|to|for)\s+([A-Z][a-z]+)"
"""A capitalised city after "in"/"to"/"for"."""

CONVERSATION = (
    "What's the weather in Rome?",
    "Find flights from Paris to Rome on 2025-05-01 and convert 98 EUR to USD",
    "Please book a hotel in Rome for 3 nights",
    "And the weather in Tokyo?",
)
"""A four-turn conversation that exercises every rule below."""


def _city(turn: Turn) -> str:
    return turn.match(CITY, "Paris") or "Paris"


def _flight(turn: Turn) -> dict[str, str]:
    return {
        "origin": turn.match(r"from\s+([A-Z][a-z]+)", "Paris") or "Paris",
        "destination": turn.match(r"to\s+([A-Z][a-z]+)", "Rome") or "Rome",
        "date": turn.match(r"(\d{4}-\d{2}-\d{2})", "2025-05-01") or "2025-05-01",
    }


def _convert(turn: Turn) -> dict[str, object]:
    return {
        "amount": float(turn.match(r"(\d+(?:\.\d+)?)\s*EUR", "100") or 100),
        "currency": turn.match(r"EUR to ([A-Z]{3})", "USD") or "USD",
    }


def _hotel(turn: Turn) -> dict[str, object]:
    return {"city": _city(turn), "nights": int(turn.match(r"(\d+)\s+nights?", "1") or 1)}


def travel_rules() -> list[Rule]:
    """The rules, in priority order (transfers first)."""
    return [
        transfer("booking_agent", when=("book", "hotel"), agent="travel_agent"),
        transfer("travel_agent", when=("weather", "flight", "convert"), agent="booking_agent"),
        call("get_weather", lambda t: {"city": _city(t)}, when="weather"),
        call("get_time", lambda t: {"city": _city(t)}, when="time"),
        call("find_flights", _flight, when="flight"),
        call("convert_currency", _convert, when="convert"),
        call("book_hotel", _hotel, when=("book", "hotel")),
        say("Hello! How can I help with your trip?", when=("hello", "hi ")),
    ]


def travel_brain(**options: object) -> RuleBrain:
    """A RuleBrain with :func:`travel_rules` (options go to RuleBrain)."""
    return RuleBrain(travel_rules(), **options)  # type: ignore[arg-type]
