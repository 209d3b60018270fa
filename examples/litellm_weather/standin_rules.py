"""Rules that let rec's stand-in model (speaking OpenAI chat completions) drive the agent."""

from __future__ import annotations

from typing import Any

from rec.standin.brain import RuleBrain, Turn, call

_CITIES = ("lisbon", "oslo", "paris")


def _city(turn: Turn) -> dict[str, Any]:
    text = turn.user_text.lower()
    return {"city": next((c.title() for c in _CITIES if c in text), "Lisbon")}


def _temperature(turn: Turn) -> dict[str, Any]:
    forecast = next((r for name, r in turn.responses if name == "get_forecast"), {})
    return {
        "temperature_c": forecast.get("temperature_c", 18) if isinstance(forecast, dict) else 18
    }


def weather_brain() -> RuleBrain:
    """Forecast for the city named; a packing tip after it when asked what to pack."""
    return RuleBrain(
        [
            call("get_forecast", _city, when=("weather", "forecast", "pack")),
            call("packing_tip", _temperature, when="pack", after="get_forecast"),
        ]
    )
