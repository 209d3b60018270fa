"""Synthetic but realistic Gemini traffic for the benchmarks: agent conversations that grow.

Each conversation is what an ADK agent with two tools sends: a system instruction, two
function declarations, ``generationConfig``, and a history that grows by a function call
(with a URL-safe ``thoughtSignature``, as Gemini 2.5 returns) and its response, then a
text answer and the next user question. Every fourth conversation is streamed (SSE).
Bodies have the shapes google-genai 2.34 sends (see tests/cassettes/genai_requests.py), in
its key order: a request's contents are google-genai's dumps (``parts`` before ``role``, a
call's ``args`` before its ``name``), so a reply comes back spelled as rec dumps it.
"""

from __future__ import annotations

import base64
import random

from cassettes._cassette import (
    Cassette,
    Exchange,
    JsonBody,
    RecordedRequest,
    RecordedResponse,
    SseBody,
    SseEvent,
)

BASE = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
SYSTEM = (
    "You are a travel assistant. Use get_weather for forecasts and get_time for local "
    "times. Answer in two sentences at most and never invent data."
)
TOOLS = [
    {
        "functionDeclarations": [
            {
                "name": "get_weather",
                "description": "Returns the current weather forecast for a city.",
                "parameters_json_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
            {
                "name": "get_time",
                "description": "Returns the current local time in a city.",
                "parameters_json_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        ]
    }
]
CITIES = ["Paris", "Tokyo", "Lima", "Oslo", "Cairo", "Quito", "Hanoi", "Perth"]
_HEADERS = {
    "content-type": "application/json",
    "user-agent": "google-genai-sdk/2.34.0 gl-python/3.11.7 google-adk/2.13.0",
    "x-goog-api-client": "google-genai-sdk/2.34.0 gl-python/3.11.7 google-adk/2.13.0",
}


def _signature(rng: random.Random) -> str:
    return base64.urlsafe_b64encode(rng.randbytes(180)).decode("ascii")


def _usage(prompt: int) -> dict[str, int]:
    return {"promptTokenCount": prompt, "candidatesTokenCount": 40, "totalTokenCount": prompt + 40}


def _response(parts: list[dict[str, object]], index: int, prompt: int) -> dict[str, object]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": _usage(prompt),
        "modelVersion": "gemini-2.5-flash",
        "responseId": f"resp-{index:08d}",
    }


def _genai_order(call: object) -> object:
    """A function call as google-genai dumps its ``FunctionCall`` (fields id, args, name)."""
    if not isinstance(call, dict):
        return call
    return {key: call[key] for key in ("id", "args", "name") if key in call}


def exchanges(count: int, *, requests_per_conversation: int = 8, seed: int = 0) -> list[Exchange]:
    """``count`` exchanges from conversations of ``requests_per_conversation`` requests each."""
    rng = random.Random(seed)
    out: list[Exchange] = []
    conversation = 0
    while len(out) < count:
        stream = conversation % 4 == 3
        history: list[dict[str, object]] = []
        for step in range(requests_per_conversation):
            if len(out) >= count:
                break
            city = CITIES[(conversation + step) % len(CITIES)]
            if step % 2 == 0:
                history.append(
                    {
                        "parts": [
                            {
                                "text": f"Conversation {conversation}, question {step}: what is "
                                f"the weather like in {city} this afternoon, and should I "
                                "take an umbrella?"
                            }
                        ],
                        "role": "user",
                    }
                )
                parts: list[dict[str, object]] = [
                    {
                        "functionCall": {"name": "get_weather", "args": {"city": city}},
                        "thoughtSignature": _signature(rng),
                    }
                ]
            else:
                parts = [
                    {
                        "text": f"In {city} it is {rng.choice(['sunny', 'rainy', 'windy'])} "
                        f"with {rng.randint(5, 30)} degrees this afternoon. "
                        + "You will not need an umbrella; enjoy the walk along the river. "
                        * 3
                    }
                ]
            body = {
                "contents": [dict(turn) for turn in history],
                "systemInstruction": {"role": "user", "parts": [{"text": SYSTEM}]},
                "tools": TOOLS,
                "generationConfig": {"temperature": 0.2},
            }
            prompt = 60 * len(history)
            document = _response(parts, len(out), prompt)
            if stream:
                url = f"{BASE}:streamGenerateContent?alt=sse"
                response = RecordedResponse(
                    status=200,
                    headers={"content-type": "text/event-stream"},
                    body=SseBody(
                        events=[SseEvent(offset_ms=150.0 + 40 * i, data=document) for i in range(3)]
                    ),
                )
            else:
                url = f"{BASE}:generateContent"
                response = RecordedResponse(
                    status=200,
                    headers={"content-type": "application/json; charset=UTF-8"},
                    body=JsonBody(value=document),
                )
            out.append(
                Exchange(
                    id=len(out),
                    recorded_at="2026-01-01T00:00:00+00:00",
                    duration_ms=812.5,
                    client={"google-genai-sdk": "2.34.0", "google-adk": "2.13.0"},
                    request=RecordedRequest(
                        method="POST", url=url, headers=dict(_HEADERS), body=JsonBody(value=body)
                    ),
                    response=response,
                )
            )
            # Re-sent as google-genai dumps its Content: parts before role, a call's args
            # before its name (the API's responses above keep the API's own order).
            sent = [
                {k: _genai_order(v) if k == "functionCall" else v for k, v in part.items()}
                for part in parts
            ]
            history.append({"parts": sent, "role": "model"})
            if step % 2 == 0:
                history.append(
                    {
                        "parts": [
                            {
                                "functionResponse": {
                                    "name": "get_weather",
                                    "response": {"city": city, "forecast": "sunny", "c": 21},
                                }
                            }
                        ],
                        "role": "user",
                    }
                )
        conversation += 1
    return out


def cassette(count: int, **options: int) -> Cassette:
    """A cassette holding :func:`exchanges`."""
    return Cassette(
        name=f"bench-{count}",
        upstream=BASE.split("/v1beta")[0],
        exchanges=exchanges(count, **options),
    )
