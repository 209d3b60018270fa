"""A plain google-genai program (no ADK) whose tools run by automatic function calling.

The SDK sees two plain Python functions in ``tools``, declares them to the model, runs the
calls the model asks for and sends the results back, until the model answers in text.

Run it (with a key, or against ``rec serve`` / the stand-in; see examples/README.md)::

    python examples/genai_afc/thermostat_helper.py "How warm is the kitchen?"

``chat`` has the shape ``rec replay`` drives a plain program through (``module:function``):
an async function taking the user's text and a session object whose ``data`` dict keeps
the program's own objects (here its chat) between the turns of one conversation::

    rec replay examples/genai_afc/thermostat_helper.py:chat examples/genai_afc/recordings

It must create its ``genai.Client`` inside the call: rec points new clients at the replay
proxy (through ``GOOGLE_GEMINI_BASE_URL``) and gives them a placeholder key.
"""

from __future__ import annotations

import asyncio
import sys
from types import SimpleNamespace
from typing import Any

from google import genai
from google.genai import types

MODEL = "gemini-2.0-flash"

INSTRUCTION = (
    "You help with room temperatures at home. Use get_room_temperature to read a room "
    "(room ids: living_room, bedroom, kitchen) and celsius_to_fahrenheit when asked for "
    "Fahrenheit. Answer in one sentence."
)

_READINGS_C = {"living_room": 20.5, "bedroom": 17.0, "kitchen": 21.5}


def get_room_temperature(room: str) -> dict[str, Any]:
    """Read the current temperature of a room, in degrees Celsius.

    Args:
        room: The room id: living_room, bedroom or kitchen.
    """
    if room not in _READINGS_C:
        return {"error": f"no sensor in {room!r}"}
    return {"room": room, "temperature_c": _READINGS_C[room]}


def celsius_to_fahrenheit(celsius: float) -> dict[str, Any]:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit.

    Args:
        celsius: The temperature in degrees Celsius.
    """
    return {"celsius": celsius, "fahrenheit": round(celsius * 9 / 5 + 32, 1)}


async def chat(text: str, session: Any) -> str | None:
    """Send one user turn; the chat (and its history) lives in ``session.data``."""
    if "chat" not in session.data:
        client = genai.Client()
        session.data["client"] = client
        session.data["chat"] = client.aio.chats.create(
            model=MODEL,
            config=types.GenerateContentConfig(
                system_instruction=INSTRUCTION,
                tools=[get_room_temperature, celsius_to_fahrenheit],
            ),
        )
    reply = await session.data["chat"].send_message(text)
    return reply.text


async def _conversation(questions: list[str]) -> None:
    session = SimpleNamespace(data={}, turn=0)
    for turn, question in enumerate(questions):
        session.turn = turn
        print(f"[user]: {question}")
        print(f"[model]: {await chat(question, session)}")


def main(argv: list[str] | None = None) -> None:
    """Ask each command-line argument in turn, in one conversation."""
    questions = list(sys.argv[1:] if argv is None else argv) or ["How warm is the kitchen?"]
    asyncio.run(_conversation(questions))


if __name__ == "__main__":
    main()
