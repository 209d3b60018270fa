"""A home agent that hands thermostat changes to a sub-agent, before and after a fix.

``home_agent`` reads rooms itself (``get_room_temperature``) and transfers "set ... degrees"
to ``thermostat_agent`` (``set_thermostat``). The bug lives in the sub-agent's instruction
only ("Thermostats take degrees Fahrenheit": the model converts 22 to 71.6), so the fixed
agent sends the recorded requests until the sub-agent's first one. ``home_agent`` sees only
the current turn (``include_contents="none"``), so its later requests equal the recorded
ones: a run that left its recording must not be answered from it again.
"""

from __future__ import annotations

from typing import Any

from rec.standin.brain import RuleBrain, Turn, call, say, transfer

__all__ = ["build", "team_brain"]

MODEL = "gemini-2.0-flash"
_READINGS_C = {"living_room": 20.5, "kitchen": 21.5}


def get_room_temperature(room: str) -> dict[str, Any]:
    """Read the current temperature of a room, in degrees Celsius.

    Args:
        room: The room id: living_room or kitchen.
    """
    return {"room": room, "temperature_c": _READINGS_C.get(room, 19.0)}


def set_thermostat(room: str, celsius: float) -> dict[str, Any]:
    """Set a room's thermostat.

    Args:
        room: The room id: living_room or kitchen.
        celsius: The target temperature in degrees Celsius (16 to 26).
    """
    if not 16.0 <= celsius <= 26.0:
        return {"status": "error", "error": f"{celsius} C is outside 16.0-26.0 C"}
    return {"status": "ok", "room": room, "target_c": celsius}


def build(unit: str) -> Any:
    """The root agent, its sub-agent told that thermostats take degrees ``unit``."""
    from google.adk.agents import LlmAgent

    thermostat = LlmAgent(
        name="thermostat_agent",
        model=MODEL,
        description="Sets thermostats.",
        instruction=f"You set thermostats. Thermostats take degrees {unit}.",
        tools=[set_thermostat],
        disallow_transfer_to_parent=True,
    )
    return LlmAgent(
        name="home_agent",
        model=MODEL,
        description="Reads room temperatures.",
        instruction="You read room temperatures. Hand thermostat changes to thermostat_agent.",
        tools=[get_room_temperature],
        sub_agents=[thermostat],
        include_contents="none",
    )


def _room(turn: Turn) -> str:
    return "kitchen" if "kitchen" in turn.user_text.lower() else "living_room"


def _celsius(turn: Turn) -> float:
    degrees = float(turn.match(r"(\d+(?:\.\d+)?) degrees", "21") or 21)
    if "Fahrenheit" in turn.system_instruction:
        return round(degrees * 9 / 5 + 32, 1)
    return degrees


def _response(turn: Turn, tool: str) -> dict[str, Any]:
    found = [r for name, r in turn.responses if name == tool]
    return found[-1] if found and isinstance(found[-1], dict) else {}


def _reading(turn: Turn) -> str:
    return f"The room is at {_response(turn, 'get_room_temperature').get('temperature_c')} C."


def _set(turn: Turn) -> str:
    result = _response(turn, "set_thermostat")
    if result.get("status") == "ok":
        return f"I set it to {result.get('target_c')} C."
    return f"I could not set it: {result.get('error')}."


def team_brain() -> RuleBrain:
    """The stand-in model for both variants (it follows the sub-agent's instruction)."""
    return RuleBrain(
        [
            transfer("thermostat_agent", when="degrees", agent="home_agent"),
            call("get_room_temperature", lambda t: {"room": _room(t)}, when="temperature"),
            call(
                "set_thermostat",
                lambda t: {"room": _room(t), "celsius": _celsius(t)},
                when="degrees",
                agent="thermostat_agent",
            ),
            say(_reading, after="get_room_temperature"),
            say(_set, after="set_thermostat"),
        ]
    )
