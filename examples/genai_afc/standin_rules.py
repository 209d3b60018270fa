"""Rules that let rec's stand-in model drive ``thermostat_helper.py`` (see ../home_assistant)."""

from __future__ import annotations

from typing import Any

from rec.standin.brain import Rule, RuleBrain, Turn, call, say

_ROOMS = {"living room": "living_room", "bedroom": "bedroom", "kitchen": "kitchen"}


def _room(turn: Turn) -> dict[str, Any]:
    text = turn.user_text.lower()
    return {"room": next((r for w, r in _ROOMS.items() if w in text), "living_room")}


def _unwrap(response: Any) -> dict[str, Any]:
    """google-genai's AFC sends a tool's return value as ``{"result": value}``."""
    if isinstance(response, dict) and set(response) == {"result"}:
        response = response["result"]
    return response if isinstance(response, dict) else {}


def _response(turn: Turn, tool: str) -> dict[str, Any]:
    return next((_unwrap(r) for n, r in turn.responses if n == tool), {})


def _reading(turn: Turn) -> dict[str, Any]:
    return _response(turn, "get_room_temperature")


def _to_fahrenheit(turn: Turn) -> dict[str, Any]:
    return {"celsius": _reading(turn).get("temperature_c", 20.0)}


def _fahrenheit_reply(turn: Turn) -> str:
    converted = _response(turn, "celsius_to_fahrenheit")
    room = str(_reading(turn).get("room", "room")).replace("_", " ")
    return f"The {room} is {converted['celsius']} °C, that is {converted['fahrenheit']} °F."


def _celsius_reply(turn: Turn) -> str:
    reading = _reading(turn)
    room = str(reading.get("room", "room")).replace("_", " ")
    return f"The {room} is at {reading.get('temperature_c')} °C."


def afc_rules() -> list[Rule]:
    """Read the room first; convert only once the reading is back (two model steps)."""
    return [
        call("get_room_temperature", _room, when=("warm", "cold", "temperature", "fahrenheit")),
        call(
            "celsius_to_fahrenheit", _to_fahrenheit, when="fahrenheit", after="get_room_temperature"
        ),
        say(_fahrenheit_reply, after="celsius_to_fahrenheit"),
        say(_celsius_reply, after="get_room_temperature"),
    ]


def afc_brain() -> RuleBrain:
    """The stand-in model for the thermostat helper."""
    return RuleBrain(afc_rules())
