"""The climate agent AS DEPLOYED when the bug was reported (see examples/production_bug/README.md).

The instruction was copied from the US edition of the product and still says thermostats
take degrees Fahrenheit, while ``set_thermostat`` takes Celsius: asked for "22 degrees",
the model passes ``celsius=71.6`` and the tool refuses it. ``../after_fix`` is the fix.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools.tool_context import ToolContext

MODEL = "gemini-2.0-flash"

_READINGS_C = {"living_room": 20.5, "bedroom": 17.0, "kitchen": 21.5}


def get_room_temperature(room: str) -> dict[str, Any]:
    """Read the current temperature of a room, in degrees Celsius.

    Args:
        room: The room id: living_room, bedroom or kitchen.
    """
    if room not in _READINGS_C:
        return {"error": f"no sensor in {room!r}"}
    return {"room": room, "temperature_c": _READINGS_C[room]}


def set_thermostat(room: str, celsius: float, tool_context: ToolContext) -> dict[str, Any]:
    """Set a room's thermostat.

    Args:
        room: The room id: living_room, bedroom or kitchen.
        celsius: The target temperature in degrees Celsius (16 to 26).
    """
    if not 16.0 <= celsius <= 26.0:
        return {"status": "error", "error": f"{celsius} C is outside 16.0-26.0 C"}
    tool_context.state[f"thermostat:{room}"] = celsius
    return {"status": "ok", "room": room, "target_c": celsius}


root_agent = LlmAgent(
    name="climate_agent",
    model=MODEL,
    description="Reads room temperatures and sets thermostats.",
    instruction=(
        "You control the heating of {home_name}. Read a room with get_room_temperature "
        "before changing it. Thermostats take degrees Fahrenheit. Answer in one sentence."
    ),
    tools=[get_room_temperature, set_thermostat],
)
