"""Conversations that open alike replay deterministically, in any order.

Six chats were recorded through the real proxy against the stand-in, each opening with
the same "Hi!" (the model greeted each differently) and then asking about its own city.
Replayed through the real replay proxy with the real google-genai client, the openings
share one FIFO queue, so a chat can get another's greeting. Each chat's second turn must
still get its own city's recorded answer: once with the chats replayed in reverse order
(every greeting is a sibling's), once all at once.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

from google import genai

import rec
from rec.standin.replies import Reply, StandinRequest
from replayer._replay_api import replay

MODEL = "gemini-2.0-flash"
CITIES = ("Paris", "Rome", "Lisbon", "Oslo", "Vienna", "Prague")


def _greeter() -> Any:
    greetings = itertools.count(1)

    def answer(request: StandinRequest) -> Reply | None:
        if request.rpc != "generateContent":
            return None
        if len(request.contents) == 1:
            return Reply.text(f"Hello! I am greeter number {next(greetings)}.")
        question = request.contents[-1]["parts"][0]["text"]
        return Reply.text(f"The answer for {question.split()[-1]}")

    return answer


async def _opening(client: genai.Client) -> Any:
    chat = client.aio.chats.create(model=MODEL)
    await chat.send_message("Hi!")
    return chat


async def _ask(chat: Any, city: str) -> str:
    reply = await chat.send_message(f"What is there to see in {city}")
    return str(reply.text)


def _record(folder: Path, standin_factory: Any) -> Path:
    api = standin_factory(_greeter())

    async def drive() -> None:
        client = genai.Client()
        for city in CITIES:
            await _ask(await _opening(client), city)

    with rec.record(folder, name="chats", upstream=api.url, write_evalset=False):
        asyncio.run(drive())
    return folder / "chats.cassette.json"


def test_each_chat_follows_its_own_branch_whatever_greeting_it_got(
    tmp_path: Path, standin_factory: Any, fake_api_key: str, loopback_only: Any
) -> None:
    cassette = _record(tmp_path, standin_factory)

    async def reversed_order() -> list[str]:
        client = genai.Client()
        chats = [await _opening(client) for _ in CITIES]  # chat i gets greeting i
        return [await _ask(chat, city) for chat, city in zip(chats[::-1], CITIES, strict=True)]

    async def all_at_once() -> list[str]:
        client = genai.Client()
        chats = await asyncio.gather(*(_opening(client) for _ in CITIES))
        asks = (_ask(chat, city) for chat, city in zip(chats, CITIES, strict=True))
        return list(await asyncio.gather(*asks))

    expected = [f"The answer for {city}" for city in CITIES]
    for run in (reversed_order, all_at_once):
        with replay(cassette) as replaying:
            assert asyncio.run(run()) == expected, run.__name__
        assert replaying.misses == [], run.__name__
