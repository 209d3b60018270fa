"""Rules that let rec's stand-in model (``rec/standin/brain.py``) drive the home assistant.

The stand-in is a deterministic fake Gemini API: it reads each request (the user's text,
the declared tools, the system instruction) and answers from these rules, so a session
recorded against it looks like one recorded against the real model: transfers, tool
calls in several steps, a reply that sums up what the tools returned. The bundled
recordings were made with these rules (``examples/record.py``); with a real key you
record against Gemini instead (examples/README.md).

It also serves the weather API ``get_outdoor_weather`` calls (wttr.in's ``?format=j1``
shape) for the cities in :data:`WEATHER`.
"""

from __future__ import annotations

import re
from typing import Any

from rec.standin.brain import Rule, RuleBrain, Turn, call, say, transfer
from rec.standin.replies import Reply, StandinRequest

ROOMS = {
    "living room": "living_room",
    "lounge": "living_room",
    "bedroom": "bedroom",
    "kitchen": "kitchen",
    "hallway": "hallway",
}
"""Words a user says -> the room ids the tools take."""

WEATHER = {"Oslo": (3, "Light snow"), "Lisbon": (19, "Sunny"), "Berlin": (8, "Overcast")}
"""City -> (temperature in C, conditions) served by :func:`weather_routes`."""


def room_of(turn: Turn) -> str:
    """The room the user talks about (``living_room`` when none is named)."""
    text = turn.user_text.lower()
    for word, room in ROOMS.items():
        if word in text:
            return room
    return "living_room"


def _room_or_all(turn: Turn) -> str:
    text = turn.user_text.lower()
    return next((room for word, room in ROOMS.items() if word in text), "all")


def celsius_of(turn: Turn) -> float:
    """The temperature the user asks for, as the model would pass it.

    A model follows its instruction: when the agent's instruction says thermostats take
    Fahrenheit (the bug in ``examples/production_bug``), it converts the user's degrees.
    """
    value = float(turn.match(r"(\d+(?:\.\d+)?)\s*(?:degrees|°)", "21") or 21)
    if re.search(r"(?i)thermostats? take degrees Fahrenheit", turn.system_instruction):
        return round(value * 9 / 5 + 32, 1)
    return value


def city_of(turn: Turn) -> str:
    """A capitalised city after in/for, else the ``(city: X)`` of the instruction."""
    for pattern, text in (
        (r"\b(?:in|for)\s+([A-Z][a-z]+)", turn.user_text),
        (r"\(city: ([A-Z][a-z]+)\)", turn.system_instruction),
    ):
        found = re.search(pattern, text)  # case-sensitive: a city is capitalised
        if found:
            return found.group(1)
    return "Oslo"


def _door(turn: Turn) -> dict[str, Any]:
    return {"door": "back" if "back" in turn.user_text.lower() else "front"}


def _alarm(turn: Turn) -> dict[str, Any]:
    text = turn.user_text.lower()
    if "disarm" in text or "turn off the alarm" in text:
        return {"mode": "disarmed"}
    return {"mode": "armed_away" if ("away" in text or "leaving" in text) else "armed_home"}


def _response(turn: Turn, tool: str) -> dict[str, Any]:
    for name, response in turn.responses:
        if name == tool and isinstance(response, dict):
            return response
    return {}


def _devices_reply(turn: Turn) -> str:
    rooms = _response(turn, "list_devices").get("rooms", {})
    listed = "; ".join(f"{room.replace('_', ' ')}: {', '.join(d)}" for room, d in rooms.items())
    return f"Here is what is installed. {listed}."


def _weather_reply(turn: Turn) -> str:
    w = _response(turn, "get_outdoor_weather")
    return f"It is {w.get('temperature_c')} °C in {w.get('city')} right now: {w.get('conditions')}."


def _thermostat_reply(turn: Turn) -> str:
    reading = _response(turn, "get_room_temperature")
    result = _response(turn, "set_thermostat")
    room = str(reading.get("room", "the room")).replace("_", " ")
    if result.get("status") != "ok":
        return (
            f"The {room} is at {reading.get('temperature_c')} °C, but I could not change "
            f"the thermostat: {result.get('error')}."
        )
    return (
        f"The {room} was at {reading.get('temperature_c')} °C; I set it to "
        f"{result.get('target_c')} °C."
    )


def _temperature_reply(turn: Turn) -> str:
    reading = _response(turn, "get_room_temperature")
    room = str(reading.get("room", "the room")).replace("_", " ")
    return f"The {room} is at {reading.get('temperature_c')} °C."


def _security_reply(turn: Turn) -> str:
    done = []
    for name, response in turn.responses:
        if name == "lock_door" and isinstance(response, dict):
            done.append(f"the {response.get('door')} door is locked")
        if name == "set_alarm" and isinstance(response, dict):
            done.append(f"the alarm is {str(response.get('alarm')).replace('_', ' ')}")
    return ("Done: " + " and ".join(done) + ".") if done else "Nothing to do."


_SECURITY = ("lock", "alarm", "door")
_HOME = ("temperature", "thermostat", "weather", "outside", "device", "degrees", "chilly")


def home_rules() -> list[Rule]:
    """The rules, in priority order (transfers first, then tools, then replies)."""
    return [
        transfer("security_agent", when=_SECURITY, agent="home_assistant"),
        transfer("home_assistant", when=_HOME, agent="security_agent"),
        call("list_devices", lambda t: {"room": _room_or_all(t)}, when="device"),
        call("get_outdoor_weather", lambda t: {"city": city_of(t)}, when=("weather", "outside")),
        call(
            "get_room_temperature",
            lambda t: {"room": room_of(t)},
            when=("temperature", "chilly", "degrees", "how warm"),
        ),
        call(
            "set_thermostat",
            lambda t: {"room": room_of(t), "celsius": celsius_of(t)},
            when="degrees",
            after="get_room_temperature",
        ),
        call("lock_door", _door, when="lock"),
        call("set_alarm", _alarm, when="alarm"),
        say(_devices_reply, after="list_devices"),
        say(_weather_reply, after="get_outdoor_weather"),
        say(_thermostat_reply, after="set_thermostat"),
        say(_temperature_reply, after="get_room_temperature"),
        say(_security_reply, agent="security_agent", after="lock_door"),
        say(_security_reply, agent="security_agent", after="set_alarm"),
        say(
            "Good evening! I can check rooms, thermostats, the weather, doors and the alarm.",
            when=("hello", "hi ", "good evening"),
        ),
    ]


def home_brain() -> RuleBrain:
    """The stand-in model for the home assistant."""
    return RuleBrain(home_rules())


def _weather_route(request: StandinRequest) -> Reply:
    city = request.path.rsplit("/", 1)[-1]
    temperature, conditions = WEATHER.get(city, (12, "Partly cloudy"))
    return Reply.json(
        {
            "current_condition": [
                {
                    "temp_C": str(temperature),
                    "humidity": "70",
                    "weatherDesc": [{"value": conditions}],
                }
            ],
            "nearest_area": [{"areaName": [{"value": city}]}],
        }
    )


def weather_routes(prefix: str = "/weather") -> dict[str, Any]:
    """Stand-in routes for the weather API: ``HOME_WEATHER_URL=<standin url><prefix>``."""
    return {f"{prefix}/{city}": _weather_route for city in WEATHER}
