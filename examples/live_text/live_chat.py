"""A plain google-genai Gemini Live program: one WebSocket session, two text turns.

Run it under rec to record it (against the Live stand-in here; drop --upstream for the
real API with GOOGLE_API_KEY set)::

    python -m rec.standin.live --port 8765 &
    GOOGLE_API_KEY=fake rec start --out examples/live_text/recordings --name chat \\
        --upstream http://127.0.0.1:8765 -- python examples/live_text/live_chat.py

and replay it with no key and no upstream: ``rec serve examples/live_text/recordings`` and
run this file with the lines it prints exported (see examples/README.md).
"""

from __future__ import annotations

import asyncio
import sys

from google import genai

MODEL = "gemini-live-2.5-flash"


async def chat(turns: list[str]) -> list[str]:
    """Send each turn in one Live session; return the model's reply to each."""
    client = genai.Client()
    replies: list[str] = []
    async with client.aio.live.connect(
        model=MODEL, config={"response_modalities": ["TEXT"]}
    ) as session:
        for text in turns:
            await session.send_client_content(
                turns={"role": "user", "parts": [{"text": text}]}, turn_complete=True
            )
            reply = ""
            async for message in session.receive():
                reply += message.text or ""
            replies.append(reply)
    return replies


if __name__ == "__main__":
    for line in asyncio.run(chat(sys.argv[1:] or ["hello", "tell me more"])):
        print(line, flush=True)
