"""A home-automation assistant: an ADK agent with tools, session state and a sub-agent.

Read this file top to bottom to see every piece rec records and replays:

- **Tools** are plain Python functions; ADK builds their declarations from the signature
  and the docstring, so both matter to the model.
- ``set_thermostat`` takes a ``tool_context`` and writes **session state**
  (``thermostats``, ``last_change``); ADK hides that parameter from the model.
- ``get_outdoor_weather`` calls an **external HTTP API** through httpx: ``wttr.in``'s JSON
  format (``GET {base}/{city}?format=j1``, no key needed). ``$HOME_WEATHER_URL`` overrides
  the base URL (the bundled recordings point it at the local stand-in). Under
  ``rec replay`` the tool is not executed: it returns the response recorded for its call.
- **Instructions read session state**: ``{home_name}`` and ``{owner_name}`` must be in the
  session's state (``adk run --replay session.json`` and each eval case's
  ``session_input.state`` provide them); ``{city?}`` is optional.
- **A sub-agent reached by transfer**: ``home_assistant`` hands doors, locks and the alarm
  to ``security_agent`` (ADK adds a ``transfer_to_agent`` tool to both), which hands
  anything else back.

Run it: ``adk run examples/home_assistant`` (needs a model: a Gemini key, or
``GOOGLE_GEMINI_BASE_URL`` pointing at ``rec serve`` / the stand-in; see examples/README.md).
"""

from __future__ import annotations

import os
from typing import Any

import httpx
from google.adk.agents import LlmAgent
from google.adk.tools.tool_context import ToolContext

MODEL = "gemini-2.0-flash"

WEATHER_URL_ENV = "HOME_WEATHER_URL"
"""Environment variable with the weather API's base URL."""
DEFAULT_WEATHER_URL = "https://wttr.in"
"""wttr.in: a free weather API that needs no key (``/{city}?format=j1`` returns JSON)."""

COMFORT_RANGE_C = (16.0, 26.0)
"""Thermostat set points outside this range are refused."""

DEVICES: dict[str, list[str]] = {
    "living_room": ["thermostat", "ceiling light", "smart speaker"],
    "bedroom": ["thermostat", "bedside lamp"],
    "kitchen": ["smoke detector", "dishwasher"],
    "hallway": ["front door lock", "alarm panel"],
    "garden": ["back door lock", "floodlight"],
}
"""The simulated home: devices by room."""

_SENSOR_READINGS_C = {"living_room": 20.5, "bedroom": 17.0, "kitchen": 21.5, "hallway": 18.0}
"""What the (simulated) room sensors read right now."""


def list_devices(room: str = "all") -> dict[str, Any]:
    """List the smart devices, in one room or in the whole home.

    Args:
        room: A room id (living_room, bedroom, kitchen, hallway, garden), or "all".
    """
    if room == "all":
        return {"rooms": DEVICES}
    if room not in DEVICES:
        return {"error": f"unknown room {room!r}", "rooms": sorted(DEVICES)}
    return {"rooms": {room: DEVICES[room]}}


def get_room_temperature(room: str) -> dict[str, Any]:
    """Read the current temperature of a room from its sensor.

    Args:
        room: The room id, one of living_room, bedroom, kitchen, hallway.
    """
    if room not in _SENSOR_READINGS_C:
        return {"error": f"no temperature sensor in {room!r}", "rooms": sorted(_SENSOR_READINGS_C)}
    return {"room": room, "temperature_c": _SENSOR_READINGS_C[room]}


def set_thermostat(room: str, celsius: float, tool_context: ToolContext) -> dict[str, Any]:
    """Set a room's thermostat and remember the new set point in the session.

    Args:
        room: The room id, e.g. living_room or bedroom.
        celsius: The target temperature in degrees Celsius (16 to 26).
    """
    if "thermostat" not in DEVICES.get(room, []):
        return {"status": "error", "error": f"{room!r} has no thermostat"}
    low, high = COMFORT_RANGE_C
    if not low <= celsius <= high:
        return {"status": "error", "error": f"{celsius} C is outside {low}-{high} C"}
    thermostats = dict(tool_context.state.get("thermostats", {}))
    thermostats[room] = celsius
    tool_context.state["thermostats"] = thermostats
    tool_context.state["last_change"] = f"{room} thermostat -> {celsius} C"
    return {"status": "ok", "room": room, "target_c": celsius}


def get_outdoor_weather(city: str) -> dict[str, Any]:
    """Get the current outdoor weather for a city from the weather service.

    Args:
        city: The city name, e.g. "Oslo".
    """
    base_url = os.environ.get(WEATHER_URL_ENV, DEFAULT_WEATHER_URL).rstrip("/")
    response = httpx.get(f"{base_url}/{city}", params={"format": "j1"}, timeout=10)
    response.raise_for_status()
    current = response.json()["current_condition"][0]
    return {
        "city": city,
        "temperature_c": float(current["temp_C"]),
        "conditions": current["weatherDesc"][0]["value"],
    }


def lock_door(door: str, tool_context: ToolContext) -> dict[str, Any]:
    """Lock one of the home's doors.

    Args:
        door: Which door: "front" or "back".
    """
    if door not in ("front", "back"):
        return {"status": "error", "error": f"no smart lock on the {door!r} door"}
    locked = sorted(set(tool_context.state.get("locked_doors", [])) | {door})
    tool_context.state["locked_doors"] = locked
    return {"status": "locked", "door": door}


def set_alarm(mode: str, tool_context: ToolContext) -> dict[str, Any]:
    """Arm or disarm the alarm system.

    Args:
        mode: "armed_home" (night: perimeter only), "armed_away" (everything) or "disarmed".
    """
    if mode not in ("armed_home", "armed_away", "disarmed"):
        return {"status": "error", "error": f"unknown alarm mode {mode!r}"}
    tool_context.state["alarm"] = mode
    return {"status": "ok", "alarm": mode}


security_agent = LlmAgent(
    name="security_agent",
    model=MODEL,
    description="Locks doors and arms or disarms the alarm system.",
    instruction=(
        "You keep {home_name} safe for {owner_name}. Lock doors with lock_door and set the "
        "alarm with set_alarm (armed_home for the night, armed_away when everyone leaves). "
        "Confirm what you did in one sentence. For anything else (temperatures, weather, "
        "devices), transfer back to home_assistant."
    ),
    tools=[lock_door, set_alarm],
)

root_agent = LlmAgent(
    name="home_assistant",
    model=MODEL,
    description="The home assistant: devices, room temperatures, thermostats and weather.",
    instruction=(
        "You are the voice assistant of {home_name}, the home of {owner_name} "
        "(city: {city?}). Answer briefly. Use list_devices for what is installed, "
        "get_room_temperature before changing a thermostat, set_thermostat to change one "
        "(room ids: living_room, bedroom, kitchen, hallway) and get_outdoor_weather for the "
        "weather outside. Transfer anything about doors, locks or the alarm to security_agent."
    ),
    tools=[list_devices, get_room_temperature, set_thermostat, get_outdoor_weather],
    sub_agents=[security_agent],
)
