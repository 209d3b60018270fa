"""The stand-in Gemini API is faithful: the real google-genai client and a real ADK agent
work against it exactly as against the service (DESIGN.md §2)."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import socket
import time
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors, types

from rec.standin.brain import RuleBrain, call, say, transfer
from rec.standin.replies import FAKE_API_KEY, Reply, ScriptedResponder, StandinRequest, split_text
from rec.standin.server import StandinGemini
from tests.factories import (
    function_call_content,
    function_response_content,
    gemini_request,
    gemini_stream,
    make_cassette,
    make_evalset,
    make_exchange,
    make_invocation,
)

MODEL = "gemini-2.0-flash"


def client_for(server: StandinGemini, **http: Any) -> genai.Client:
    return genai.Client(
        api_key=FAKE_API_KEY, http_options=types.HttpOptions(base_url=server.url, **http)
    )


def get_weather(city: str) -> dict[str, Any]:
    """Weather for a city."""
    return {"city": city, "sky": "sunny"}


def get_time(city: str) -> dict[str, Any]:
    """Local time in a city."""
    return {"city": city, "time": "12:00"}


# -- google-genai, sync ----------------------------------------------------------------------


def test_sync_unary(standin: StandinGemini) -> None:
    standin.reset()
    client = client_for(standin)
    response = client.models.generate_content(model=MODEL, contents="ping there")

    assert response.text == "[model #e3b0c442] You said: ping there"
    assert response.model_version == MODEL
    assert response.usage_metadata.prompt_token_count == 2
    assert response.usage_metadata.total_token_count > 2
    assert response.response_id
    (request,) = standin.requests
    assert (request.method, request.path, request.version, request.rpc) == (
        "POST",
        f"/v1beta/models/{MODEL}:generateContent",
        "v1beta",
        "generateContent",
    )
    assert request.api_key == FAKE_API_KEY
    assert request.http_client == "httpx"
    assert request.body["contents"] == [{"parts": [{"text": "ping there"}], "role": "user"}]


def test_sync_streaming_has_several_chunks(standin: StandinGemini) -> None:
    client = client_for(standin)
    chunks = list(
        client.models.generate_content_stream(model=MODEL, contents="tell me a story about trains")
    )

    assert len(chunks) == 3
    assert "".join(c.text for c in chunks) == (
        "[model #e3b0c442] You said: tell me a story about trains"
    )
    assert [c.candidates[0].finish_reason for c in chunks] == [None, None, "STOP"]
    assert all(c.model_version == MODEL and c.usage_metadata for c in chunks)


def test_stream_framing_is_exact(standin_factory: Any) -> None:
    chunks = gemini_stream("one two three four", chunks=2)
    server = standin_factory(ScriptedResponder([Reply(chunks=tuple(chunks), exact=True)]))

    with httpx.stream(
        "POST",
        f"{server.url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse",
        headers={"x-goog-api-key": FAKE_API_KEY},
        json=gemini_request("hi"),
    ) as response:
        raw = response.read()

    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["transfer-encoding"] == "chunked"
    expected = b"".join(
        b"data: " + json.dumps(c, separators=(",", ":")).encode() + b"\r\n\r\n" for c in chunks
    )
    assert raw == expected


def test_stream_events_are_spaced_by_the_delay(standin_factory: Any) -> None:
    reply = Reply.text("a b c d e f g h i j", chunks=5, delay_s=0.05)
    server = standin_factory(ScriptedResponder([Reply.text("warm"), reply]))
    client = client_for(server)
    client.models.generate_content(model=MODEL, contents="warm up the connection")
    start, arrivals = time.perf_counter(), []

    for _ in client.models.generate_content_stream(model=MODEL, contents="x"):
        arrivals.append(time.perf_counter() - start)

    assert len(arrivals) == 5
    # Sleeps only ever run long, so the time to the last event is a floor even on a loaded
    # machine (the spread between first and last is not: a busy client reads the first
    # late); the first event must not wait for the others (the stream is not buffered).
    assert arrivals[-1] >= 0.19, arrivals
    assert arrivals[0] < arrivals[-1] - 0.15, arrivals


# -- google-genai, async -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("http", "expected_client"),
    [
        pytest.param({}, "aiohttp", id="aiohttp-default"),
        pytest.param(
            {"async_client_args": {"transport": httpx.AsyncHTTPTransport()}},
            "httpx",
            id="httpx-forced",
        ),
    ],
)
def test_async_unary_and_streaming(
    standin_factory: Any, http: dict[str, Any], expected_client: str
) -> None:
    server = standin_factory(RuleBrain(stream_chunks=4))
    client = client_for(server, **http)

    async def run() -> tuple[str, list[str]]:
        unary = await client.aio.models.generate_content(model=MODEL, contents="ping")
        texts = [
            chunk.text
            async for chunk in await client.aio.models.generate_content_stream(
                model=MODEL, contents="stream me five words please"
            )
        ]
        return unary.text, texts

    unary, texts = asyncio.run(run())

    assert unary == "[model #e3b0c442] You said: ping"
    assert len(texts) == 4
    assert "".join(texts).endswith("stream me five words please")
    assert [r.http_client for r in server.requests] == [expected_client] * 2


def test_afc_with_two_tools(standin: StandinGemini) -> None:
    standin.reset()
    config = types.GenerateContentConfig(tools=[get_weather, get_time])

    client = client_for(standin)
    response = client.models.generate_content(
        model=MODEL, contents="What's the weather and time in Paris?", config=config
    )

    assert response.text == (
        '[model #e3b0c442] Done. get_weather -> {"result": {"city": "Paris", "sky": "sunny"}}; '
        'get_time -> {"result": {"city": "Paris", "time": "12:00"}}'
    )
    first, second = standin.requests
    assert [d["name"] for d in first.body["tools"][0]["functionDeclarations"]] == [
        "get_weather",
        "get_time",
    ]
    assert "+afc" in second.headers["user-agent"]
    assert [p["functionResponse"]["name"] for p in second.contents[-1]["parts"]] == [
        "get_weather",
        "get_time",
    ]


# -- errors, gzip, cut streams -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "status", "error_type"),
    [
        pytest.param(429, "RESOURCE_EXHAUSTED", errors.ClientError, id="429"),
        pytest.param(500, "INTERNAL", errors.ServerError, id="500"),
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["unary", "stream"])
def test_errors_raise_api_error(
    standin_factory: Any, code: int, status: str, error_type: type, stream: bool
) -> None:
    server = standin_factory(ScriptedResponder([Reply.fail(code, "quota says no")]))
    client = client_for(server)
    models = client.models

    with pytest.raises(error_type) as raised:
        if stream:
            list(models.generate_content_stream(model=MODEL, contents="x"))
        else:
            models.generate_content(model=MODEL, contents="x")

    assert (raised.value.code, raised.value.status, raised.value.message) == (
        code,
        status,
        "quota says no",
    )


def test_error_event_mid_stream(standin_factory: Any) -> None:
    reply = Reply.fail(500, "backend died", after=Reply.text("a b c d", chunks=2).chunks)
    server = standin_factory(ScriptedResponder([reply]))
    received = []

    client = client_for(server)
    with pytest.raises(errors.ServerError) as raised:
        for chunk in client.models.generate_content_stream(model=MODEL, contents="x"):
            received.append(chunk.text)

    assert received == ["a b ", "c d"]
    assert raised.value.message == "backend died"


def test_unary_is_gzipped_when_accepted(standin: StandinGemini) -> None:
    url = f"{standin.url}/v1beta/models/{MODEL}:generateContent"
    body = json.dumps(gemini_request("zip it")).encode()
    headers = {"x-goog-api-key": FAKE_API_KEY, "accept-encoding": "gzip"}

    with httpx.Client() as http, http.stream("POST", url, headers=headers, content=body) as resp:
        raw = b"".join(resp.iter_raw())

    assert resp.headers["content-encoding"] == "gzip"
    assert json.loads(gzip.decompress(raw))["candidates"][0]["content"]["parts"][0]["text"] == (
        "[model #e3b0c442] You said: zip it"
    )
    client = client_for(standin)
    assert client.models.generate_content(model=MODEL, contents="zip").text


@pytest.mark.parametrize("aio", [False, True], ids=["sync-httpx", "async-aiohttp"])
def test_forced_gzip_stream(standin_factory: Any, aio: bool) -> None:
    reply = Reply.text("one two three four five six", chunks=3, gzip="always")
    server = standin_factory(ScriptedResponder([reply], repeat_last=True))
    client = client_for(server)

    if aio:

        async def run() -> list[str]:
            stream = await client.aio.models.generate_content_stream(model=MODEL, contents="x")
            return [c.text async for c in stream]

        texts = asyncio.run(run())
    else:
        texts = [c.text for c in client.models.generate_content_stream(model=MODEL, contents="x")]

    assert texts == ["one two ", "three four ", "five six"]


@pytest.mark.parametrize("aio", [False, True], ids=["sync-httpx", "async-aiohttp"])
def test_cut_stream_raises_after_the_events_sent(standin_factory: Any, aio: bool) -> None:
    reply = Reply.text("a b c d e f", chunks=3, cut_after=2)
    server = standin_factory(ScriptedResponder([reply]))
    client, received = client_for(server), []

    async def run() -> None:
        async for chunk in await client.aio.models.generate_content_stream(
            model=MODEL, contents="x"
        ):
            received.append(chunk.text)

    with pytest.raises(Exception) as raised:
        if aio:
            asyncio.run(run())
        else:
            for chunk in client.models.generate_content_stream(model=MODEL, contents="x"):
                received.append(chunk.text)

    assert received == ["a b ", "c d "]
    assert type(raised.value).__name__ in ("RemoteProtocolError", "ClientPayloadError")


def test_count_tokens_and_embed(standin: StandinGemini) -> None:
    client = client_for(standin)

    tokens = client.models.count_tokens(model=MODEL, contents="one two three")
    embedded = client.models.embed_content(model="text-embedding-004", contents=["a", "b"])

    assert tokens.total_tokens == 3
    assert len(embedded.embeddings) == 2
    assert embedded.embeddings[0].values != embedded.embeddings[1].values
    assert standin.requests[-1].rpc == "batchEmbedContents"


def test_vertex_path_with_bearer_token(standin: StandinGemini) -> None:
    from google.oauth2.credentials import Credentials

    standin.reset()
    client = genai.Client(
        vertexai=True,
        project="proj",
        location="us-central1",
        credentials=Credentials(token="ya29.fake-token"),
        http_options=types.HttpOptions(base_url=standin.url),
    )

    response = client.models.generate_content(model=MODEL, contents="vertex ping")

    assert response.text.endswith("You said: vertex ping")
    (request,) = standin.requests
    assert request.path == (
        f"/v1beta1/projects/proj/locations/us-central1/publishers/google/models/{MODEL}"
        ":generateContent"
    )
    assert (request.project, request.location, request.model) == ("proj", "us-central1", MODEL)
    assert request.headers["authorization"] == "Bearer ya29.fake-token"


def test_missing_key_is_refused_with_403(standin: StandinGemini) -> None:
    response = httpx.post(
        f"{standin.url}/v1beta/models/{MODEL}:generateContent", json=gemini_request()
    )

    assert response.status_code == 403
    assert response.json()["error"]["status"] == "PERMISSION_DENIED"


def test_base_url_path_prefix_is_accepted(standin: StandinGemini) -> None:
    client = genai.Client(
        api_key=FAKE_API_KEY, http_options=types.HttpOptions(base_url=f"{standin.url}/gemini/")
    )
    response = client.models.generate_content(model=MODEL, contents="prefixed")

    assert response.text.endswith("prefixed")
    assert standin.requests[-1].path.startswith("/gemini/v1beta/models/")


def test_twenty_concurrent_streams(standin_factory: Any) -> None:
    server = standin_factory(RuleBrain(stream_chunks=3))
    client = client_for(server)

    async def one(i: int) -> str:
        stream = await client.aio.models.generate_content_stream(
            model=MODEL, contents=f"conversation {i}"
        )
        return "".join([c.text async for c in stream])

    async def run() -> list[str]:
        return await asyncio.gather(*(one(i) for i in range(20)))

    texts = asyncio.run(run())

    assert texts == [f"[model #e3b0c442] You said: conversation {i}" for i in range(20)]
    assert len(server.calls("streamGenerateContent")) == 20


def test_stop_interrupts_a_slow_stream() -> None:
    server = StandinGemini(ScriptedResponder([Reply.text("a b c", chunks=3, delay_s=30)]))
    server.start()
    sock = socket.create_connection(("127.0.0.1", server.port))
    body = json.dumps(gemini_request()).encode()
    sock.sendall(
        b"POST /v1beta/models/m:streamGenerateContent?alt=sse HTTP/1.1\r\nHost: x\r\n"
        b"x-goog-api-key: k\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK")

    start = time.perf_counter()
    server.stop()

    assert time.perf_counter() - start < 1
    sock.close()


# -- responders ----------------------------------------------------------------------------------


def request_for(body: dict[str, Any], *, rpc: str = "generateContent", model: str = MODEL):
    raw = json.dumps(body).encode()
    return StandinRequest(
        method="POST",
        path=f"/v1beta/models/{model}:{rpc}",
        query={},
        headers={},
        raw_body=raw,
        body=body,
        index=0,
        version="v1beta",
        model=model,
        rpc=rpc,
    )


def test_scripted_responder_by_model_and_order() -> None:
    scripted = ScriptedResponder([Reply.text("first"), Reply.text("second")])
    scripted.add(Reply.text("pro only"), model="gemini-pro")

    answers = [
        scripted(request_for(gemini_request(), model=m))
        for m in ("gemini-pro", MODEL, MODEL, "gemini-pro")
    ]

    assert [_text(a) if a else None for a in answers] == ["first", "second", None, "pro only"]
    assert scripted.pending == 0


def test_scripted_responder_runs_out_with_a_clear_400(standin_factory: Any) -> None:
    server = standin_factory(ScriptedResponder([]))

    client = client_for(server)
    with pytest.raises(errors.ClientError) as raised:
        client.models.generate_content(model=MODEL, contents="x")

    assert raised.value.code == 400
    assert "no reply scripted for request #0" in raised.value.message


def test_split_text_rejoins() -> None:
    assert split_text("a b c d e", 2) == ["a b c ", "d e"]
    assert "".join(split_text("  spaced  out text ", 3)) == "  spaced  out text "


def _text(reply: Reply | None) -> str:
    assert reply is not None
    return "".join(
        p.get("text", "") for c in reply.chunks for p in c["candidates"][0]["content"]["parts"]
    )


def _calls(reply: Reply | None) -> list[tuple[str, dict[str, Any]]]:
    assert reply is not None
    parts = reply.chunks[0]["candidates"][0]["content"]["parts"]
    return [(p["functionCall"]["name"], p["functionCall"]["args"]) for p in parts]


TRANSFER_DECL = {
    "name": "transfer_to_agent",
    "parameters_json_schema": {
        "type": "object",
        "properties": {"agent_name": {"type": "string", "enum": ["booking_agent"]}},
    },
}
BRAIN = RuleBrain(
    [
        transfer("booking_agent", when="book"),
        transfer("nobody", when="book"),
        call("get_weather", lambda t: {"city": t.match(r"in (\w+)")}, when="weather"),
        call("get_time", {"city": "Oslo"}, when="time"),
        call("book_hotel", {"nights": 2}, when="book", after="find_flights"),
        say("Hi from {agent}", when="hello"),
    ]
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            gemini_request("weather and time in Rome?", tools=["get_weather", "get_time"]),
            [("get_weather", {"city": "Rome"}), ("get_time", {"city": "Oslo"})],
            id="parallel-calls",
        ),
        pytest.param(
            gemini_request("weather in Rome?", tools=["get_time"]),
            "[model #e3b0c442] You said: weather in Rome?",
            id="undeclared-tool-not-called",
        ),
        pytest.param(
            gemini_request("please book", tools=[TRANSFER_DECL, "book_hotel"]),
            [("transfer_to_agent", {"agent_name": "booking_agent"})],
            id="transfer-only-to-an-allowed-agent",
        ),
        pytest.param(
            gemini_request(
                [
                    "book it",
                    function_call_content(("find_flights", {})),
                    function_response_content(("find_flights", {"n": 1})),
                ],
                tools=["find_flights", "book_hotel"],
            ),
            [("book_hotel", {"nights": 2})],
            id="after-chains-calls",
        ),
        pytest.param(
            gemini_request(
                [
                    "weather in Rome?",
                    function_call_content(("get_weather", {"city": "Rome"})),
                    function_response_content(("get_weather", {"sky": "grey"})),
                ],
                tools=["get_weather"],
            ),
            '[model #e3b0c442] Done. get_weather -> {"sky": "grey"}',
            id="summary-after-responses",
        ),
        pytest.param(
            gemini_request(
                "hello",
                system_instruction='You are an agent. Your internal name is "greeter".',
            ),
            "[greeter #70be3925] Hi from greeter",
            id="say-with-agent-name",
        ),
        pytest.param(
            gemini_request(
                [
                    "weather in Oslo?",
                    "For context: [other] said hello",
                ]
            ),
            "[model #e3b0c442] You said: weather in Oslo?",
            id="for-context-is-not-a-user-turn",
        ),
    ],
)
def test_rule_brain_decisions(body: dict[str, Any], expected: Any) -> None:
    if body["contents"][-1]["parts"][0].get("text", "").startswith("For context"):
        body["contents"][-1]["role"] = "user"
    reply = BRAIN(request_for(body))

    assert (_calls(reply) if isinstance(expected, list) else _text(reply)) == expected


def test_rule_brain_text_depends_on_system_instruction() -> None:
    brain = RuleBrain()
    one = _text(brain(request_for(gemini_request("x", system_instruction="Be terse."))))
    two = _text(brain(request_for(gemini_request("x", system_instruction="Be verbose."))))

    assert one != two
    assert one == _text(brain(request_for(gemini_request("x", system_instruction="Be terse."))))


def test_rule_brain_thought_signatures_use_standard_base64() -> None:
    brain = RuleBrain([call("get_time", {"city": "Oslo"})], thought_signatures=True)

    reply = brain(request_for(gemini_request("time?", tools=["get_time"])))

    signature = reply.chunks[0]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert "+" in signature or "/" in signature
    assert base64.b64decode(signature).endswith(b"get_time")


# -- the travel agent through a real ADK Runner ---------------------------------------------------


def test_travel_agent_multi_turn_with_transfer(standin_env: StandinGemini) -> None:
    from google.adk.runners import InMemoryRunner

    from tests.agents.travel import agent
    from tests.agents.travel_brain import CONVERSATION

    standin_env.reset()

    async def run() -> tuple[list[list[tuple[str, str]]], dict[str, Any]]:
        runner = InMemoryRunner(agent=agent.root_agent, app_name="travel")
        session = await runner.session_service.create_session(
            app_name="travel", user_id="ada", state={"user_name": "Ada", "home_city": "Paris"}
        )
        turns = []
        for text in CONVERSATION:
            steps = []
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(
                user_id="ada", session_id=session.id, new_message=message
            ):
                for part in event.content.parts if event.content and event.content.parts else []:
                    if part.function_call:
                        steps.append((event.author, f"call {part.function_call.name}"))
                    elif part.text:
                        steps.append((event.author, part.text.split("]")[0] + "]"))
            turns.append(steps)
        final = await runner.session_service.get_session(
            app_name="travel", user_id="ada", session_id=session.id
        )
        await runner.close()
        return turns, dict(final.state)

    turns, state = asyncio.run(run())

    travel, booking = "travel_agent", "booking_agent"
    travel_tag = "[travel_agent #afa812c9]"
    assert turns == [
        [(travel, "call get_weather"), (travel, travel_tag)],
        [(travel, "call find_flights"), (travel, "call convert_currency"), (travel, travel_tag)],
        [
            (travel, "call transfer_to_agent"),
            (booking, "call book_hotel"),
            (booking, "[booking_agent #b71284b3]"),
        ],
        [(booking, "call transfer_to_agent"), (travel, "call get_weather"), (travel, travel_tag)],
    ]
    assert state["bookings"] == [{"reference": "HTL-ROM-3-1", "city": "Rome", "nights": 3}]
    assert state["last_booking"] == "HTL-ROM-3-1"
    rates = [r for r in standin_env.requests if r.path == "/rates"]
    assert [r.query for r in rates] == [{"from": "EUR", "to": "USD"}]
    model_calls = standin_env.calls()
    assert {r.http_client for r in model_calls} == {"aiohttp"}
    assert "Ada (home city: Paris)" in model_calls[0].system_instruction


def test_travel_agent_loads_like_adk_eval() -> None:
    import importlib

    module = importlib.import_module("tests.agents.travel")

    assert module.agent.root_agent.name == "travel_agent"
    assert [a.name for a in module.agent.root_agent.sub_agents] == ["booking_agent"]
    assert len(module.agent.root_agent.tools) >= 3


def test_convert_currency_raises_without_its_service() -> None:
    from tests.agents.travel.agent import convert_currency

    with pytest.raises(RuntimeError, match="TRAVEL_RATES_URL is not set"):
        convert_currency(10, "USD")


# -- fixtures and factories ------------------------------------------------------------------------


def test_loopback_only_refuses_other_hosts(loopback_only: Any, standin: StandinGemini) -> None:
    with pytest.raises(ConnectionRefusedError, match="not loopback"):
        socket.create_connection(("0.0.0.1", 80), timeout=0.1)  # unroutable even unguarded
    with pytest.raises(httpx.ConnectError, match="not loopback"):
        httpx.get("https://generativelanguage.googleapis.com/v1beta/models")

    assert httpx.get(f"{standin.url}/rates", params={"to": "GBP"}).json()["rate"] == 0.85
    assert loopback_only.attempts == ["0.0.0.1", "generativelanguage.googleapis.com"]


def test_loopback_only_stops_genai_default_url(loopback_only: Any, fake_api_key: str) -> None:
    # Sync (httpx) on purpose: google-genai's aiohttp path sleeps 1-10 s and retries once
    # after a connection error (_api_client.py), which would make this test slow.
    client = genai.Client()

    with pytest.raises(httpx.ConnectError, match="not loopback"):
        client.models.generate_content(model=MODEL, contents="x")
    assert loopback_only.attempts == ["generativelanguage.googleapis.com"]


def test_fake_api_key_has_the_real_shape(fake_api_key: str) -> None:
    import os
    import re

    assert os.environ["GOOGLE_API_KEY"] == fake_api_key
    assert re.fullmatch(r"AIza[0-9A-Za-z_-]{35}", fake_api_key)


def test_factories_round_trip_through_the_file_formats() -> None:
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    from cassettes._cassette import dump_cassette, parse_cassette
    from cassettes._evalset import dump_evalset, parse_evalset

    cassette = make_cassette(
        [make_exchange(), make_exchange(stream_chunks=gemini_stream("a b c"), complete=False)]
    )
    evalset = make_evalset(
        [
            [
                make_invocation(
                    "Weather in Rome?",
                    final_text="Cloudy",
                    tool_calls=[("get_weather", {"city": "Rome"})],
                    tool_responses=[("get_weather", {"sky": "cloudy"})],
                )
            ],
            "Hello",
        ],
        state={"user_name": "Ada"},
    )

    assert parse_cassette(dump_cassette(cassette)) == cassette
    assert [e.id for e in cassette.exchanges] == [0, 1]
    assert cassette.exchanges[1].request.url.endswith(":streamGenerateContent?alt=sse")
    assert parse_evalset(dump_evalset(evalset)) == evalset
    adk = AdkEvalSet.model_validate_json(dump_evalset(evalset))
    assert [c.eval_id for c in adk.eval_cases] == ["case_0", "case_1"]


def test_travel_agent_streams_over_sse_via_aiohttp(standin_env: StandinGemini) -> None:
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.cli.utils.agent_loader import AgentLoader
    from google.adk.runners import InMemoryRunner

    root = AgentLoader(agents_dir="tests/agents").load_agent("travel")
    standin_env.reset()

    async def run() -> list[tuple[bool | None, str]]:
        runner = InMemoryRunner(agent=root, app_name="travel")
        session = await runner.session_service.create_session(
            app_name="travel", user_id="bo", state={"user_name": "Bo"}
        )
        seen = []
        async for event in runner.run_async(
            user_id="bo",
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text="Weather in Rome?")]),
            run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        ):
            for part in event.content.parts if event.content and event.content.parts else []:
                if part.text:
                    seen.append((event.partial, part.text))
        await runner.close()
        return seen

    texts = asyncio.run(run())

    partial = [text for is_partial, text in texts if is_partial]
    final = [text for is_partial, text in texts if not is_partial]
    assert len(partial) == 3
    assert final == ["".join(partial)]
    assert [(r.rpc, r.http_client) for r in standin_env.calls()] == [
        ("streamGenerateContent", "aiohttp")
    ] * 2


def _simulator_prompt(history: list[str], *, persona: str | None = None) -> str:
    """The prompt ADK's LlmBackedUserSimulator sends, rendered by ADK itself."""
    from google.adk.evaluation.simulation.llm_backed_user_simulator_prompts import (
        get_llm_backed_user_simulator_prompt,
    )
    from google.adk.evaluation.simulation.pre_built_personas import (
        get_default_persona_registry,
    )

    return get_llm_backed_user_simulator_prompt(
        conversation_plan="1. Ask for the weather in Tokyo.\n2. Then ask for the weather in Rome.",
        conversation_history="\n\n".join(history),
        stop_signal="</finished>",
        user_persona=get_default_persona_registry().get_persona(persona) if persona else None,
    )


@pytest.mark.parametrize("persona", [None, "NOVICE"])
@pytest.mark.parametrize(
    ("history", "says"),
    [
        pytest.param(["user: Hi!", "agent: Hello!"], "Ask for the weather in Tokyo.", id="first"),
        pytest.param(
            ["user: Hi!", "agent: Hello!", "user: Ask for the weather in Tokyo.", "agent: Rain."],
            "Then ask for the weather in Rome.",
            id="second",
        ),
        pytest.param(
            ["user: Hi!", "agent: Hi", "user: Tokyo?", "agent: Rain.", "user: Rome?", "agent: Sun"],
            "</finished>",
            id="plan-done",
        ),
    ],
)
def test_the_brain_plays_adks_simulated_user(
    history: list[str], says: str, persona: str | None
) -> None:
    from rec.standin.simulated_user import simulated_user_text

    assert simulated_user_text(_simulator_prompt(history, persona=persona)) == says


def test_a_prompt_that_only_quotes_the_simulator_is_not_answered_as_one() -> None:
    from rec.standin.simulated_user import simulated_user_text

    assert simulated_user_text("Tell me: " + _simulator_prompt(["user: Hi!"])) is None
