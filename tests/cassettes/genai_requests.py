"""Real google-genai request bodies, captured from the real client talking to the stand-in.

The matching, redaction and divergence tests run on these rather than on hand-written
JSON, so they see the SDK's real key spellings and its URL-safe base64 for bytes.
"""

from __future__ import annotations

import functools
from typing import Any

from cassettes._cassette import Exchange, JsonBody, RecordedRequest, RecordedResponse
from rec.standin.replies import Reply, ScriptedResponder, StandinRequest
from rec.standin.server import StandinGemini

FAKE_KEY = "AIzaFAKE-test-key-00000000000000000000000"[:39]
"""A key-shaped fake credential (39 characters like a real one)."""

SIGNATURE = bytes(range(256)) * 2
"""Thought-signature bytes whose base64 differs between the URL-safe and standard alphabets."""

SYSTEM = "You are a helpful assistant that answers questions about the weather."


def get_weather(city: str) -> dict[str, Any]:
    """Returns the current weather in a city."""
    return {"city": city, "forecast": "sunny"}


def get_time(city: str) -> str:
    """Returns the current local time in a city."""
    return "10:00"


def _recorded(request: StandinRequest, base_url: str) -> RecordedRequest:
    query = "&".join(f"{k}={v}" for k, v in request.query.items())
    url = f"{base_url}{request.path}" + (f"?{query}" if query else "")
    return RecordedRequest(
        method=request.method,
        url=url,
        headers=dict(request.headers),
        body=JsonBody(value=request.body) if request.body is not None else None,
    )


@functools.lru_cache(maxsize=1)
def captured() -> dict[str, RecordedRequest]:
    """Requests the real SDK sends, by scenario name (captured once per session).

    - ``first_turn``: system instruction, two tools, temperature, one user turn.
    - ``second_turn``: the history after a function call with a thought signature
      (the SDK echoes it URL-safe) and the function response.
    - ``no_tools``: a plain question without config.
    - ``stream``: ``first_turn`` sent with ``generate_content_stream``.
    """
    from google import genai
    from google.genai import types

    replies = [Reply.text("ok")] * 4
    with StandinGemini(ScriptedResponder(replies, repeat_last=True)) as api:
        client = genai.Client(api_key=FAKE_KEY, http_options=types.HttpOptions(base_url=api.url))
        config = types.GenerateContentConfig(
            system_instruction=SYSTEM,
            tools=[get_weather, get_time],
            temperature=0.2,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        question = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
        call = types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}),
                    thought_signature=SIGNATURE,
                )
            ],
        )
        answer = types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(
                    name="get_weather", response={"city": "Paris", "forecast": "sunny"}
                )
            ],
        )
        model = "gemini-2.0-flash"
        client.models.generate_content(model=model, contents=[question], config=config)
        client.models.generate_content(
            model=model, contents=[question, call, answer], config=config
        )
        client.models.generate_content(model=model, contents="What is the capital of France?")
        for _ in client.models.generate_content_stream(
            model=model, contents=[question], config=config
        ):
            pass
        client.close()
        names = ["first_turn", "second_turn", "no_tools", "stream"]
        return {name: _recorded(r, api.url) for name, r in zip(names, api.requests, strict=True)}


def exchange_for(request: RecordedRequest, *, id: int = 0, text: str = "ok") -> Exchange:
    """A recorded exchange answering ``request`` with a one-text-part response."""
    return Exchange(
        id=id,
        recorded_at="2026-01-01T00:00:00+00:00",
        request=request,
        response=RecordedResponse(
            status=200,
            headers={"content-type": "application/json"},
            body=JsonBody(
                value={"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]}
            ),
        ),
    )
