"""Record through the real proxy, replay with the stand-in stopped: the program can't tell.

Every scenario runs the real google-genai client over real sockets: first live through
``rec.record`` against the stand-in Gemini server, then through ``replayer`` replay
with the stand-in stopped, no API key and sockets limited to loopback. The program's
observable results (texts, chunk counts, errors) must be identical.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from cassettes._cassette import SseBody, load_cassette
from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from recorder._api import record
from replayer._replay_api import replay

MODEL = "gemini-2.0-flash"


def _last_user_text(request: StandinRequest) -> str:
    for content in reversed(request.contents):
        if content.get("role", "user") == "user":
            texts = [p["text"] for p in content.get("parts", []) if "text" in p]
            if texts:
                return " ".join(texts)
    return ""


def scripted_model(request: StandinRequest) -> Reply | None:
    """A tiny deterministic model: errors on demand, two parallel tool calls, echoes."""
    if request.rpc not in ("generateContent", "streamGenerateContent"):
        return None
    text = _last_user_text(request)
    has_tools = bool(request.body.get("tools"))
    answered = any(
        "functionResponse" in part for c in request.contents for part in c.get("parts", [])
    )
    if "please fail 429" in text:
        return Reply.fail(429, "Resource has been exhausted (e.g. check quota).")
    if "please fail 500" in text:
        return Reply.fail(500, "Internal error encountered.")
    if "please cut" in text:
        return Reply.text("one two three four five six", chunks=5, cut_after=2)
    if has_tools and not answered:
        return Reply.calls(("get_weather", {"city": "Paris"}), ("get_time", {"city": "Paris"}))
    if answered:
        return Reply.text("In Paris it is sunny and it is noon.", chunks=3)
    return Reply.text(f"You said: {text}. Here is a longer answer to stream.", chunks=4)


def get_weather(city: str) -> dict[str, Any]:
    """Weather for a city."""
    return {"city": city, "sky": "sunny"}


def get_time(city: str) -> dict[str, Any]:
    """Local time in a city."""
    return {"city": city, "time": "12:00"}


def _client(kind: str) -> genai.Client:
    if kind == "httpx":
        return genai.Client(
            http_options=types.HttpOptions(httpx_async_client=httpx.AsyncClient(trust_env=False))
        )
    return genai.Client()


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", fn())
    except genai_errors.APIError as exc:
        return ("error", exc.code, exc.status)


def sync_unary(client: genai.Client) -> Any:
    return client.models.generate_content(model=MODEL, contents="hello there").text


def sync_stream(client: genai.Client) -> Any:
    return [
        c.text for c in client.models.generate_content_stream(model=MODEL, contents="stream please")
    ]


def async_unary(client: genai.Client) -> Any:
    async def run() -> Any:
        response = await client.aio.models.generate_content(model=MODEL, contents="async hello")
        return response.text

    return asyncio.run(run())


def async_stream(client: genai.Client) -> Any:
    async def run() -> Any:
        stream = await client.aio.models.generate_content_stream(
            model=MODEL, contents="async stream"
        )
        return [c.text async for c in stream]

    return asyncio.run(run())


def afc_two_tools(client: genai.Client) -> Any:
    response = client.models.generate_content(
        model=MODEL,
        contents="What's the weather and time in Paris?",
        config=types.GenerateContentConfig(tools=[get_weather, get_time]),
    )
    history = response.automatic_function_calling_history or []
    return response.text, len(history)


def chat_two_turns(client: genai.Client) -> Any:
    chat = client.chats.create(model=MODEL)
    return [chat.send_message("first turn").text, chat.send_message("second turn").text]


def error_429(client: genai.Client) -> Any:
    return client.models.generate_content(model=MODEL, contents="please fail 429").text


def error_500(client: genai.Client) -> Any:
    return client.models.generate_content(model=MODEL, contents="please fail 500").text


def cut_stream(client: genai.Client) -> Any:
    got: list[str] = []
    try:
        for chunk in client.models.generate_content_stream(model=MODEL, contents="please cut"):
            got.append(chunk.text or "")
    except Exception:  # the SDK raises its transport's error for a cut body
        return got, "cut"
    return got, "complete"


SCENARIOS = [
    pytest.param(sync_unary, "default", id="sync-unary"),
    pytest.param(sync_stream, "default", id="sync-stream"),
    pytest.param(async_unary, "default", id="async-unary-aiohttp"),
    pytest.param(async_stream, "default", id="async-stream-aiohttp"),
    pytest.param(async_unary, "httpx", id="async-unary-httpx"),
    pytest.param(async_stream, "httpx", id="async-stream-httpx"),
    pytest.param(afc_two_tools, "default", id="afc-two-tools"),
    pytest.param(chat_two_turns, "default", id="chat-two-turns"),
    pytest.param(error_429, "default", id="error-429"),
    pytest.param(error_500, "default", id="error-500"),
    pytest.param(cut_stream, "default", id="cut-stream"),
]


@pytest.mark.parametrize(("program", "http"), SCENARIOS)
def test_replay_is_indistinguishable_from_live(
    program: Callable[[genai.Client], Any],
    http: str,
    tmp_path: Path,
    standin_factory: Any,
    monkeypatch: pytest.MonkeyPatch,
    loopback_only: Any,
) -> None:
    api = standin_factory(scripted_model)
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name="session", upstream=api.url) as session:
        live = _outcome(lambda: program(_client(http)))
    assert session.result is not None and session.result.exchanges >= 1
    assert len(api.requests) == session.result.exchanges

    api.stop()
    monkeypatch.delenv("GOOGLE_API_KEY")
    with replay(tmp_path / "session.cassette.json") as replaying:
        replayed = _outcome(lambda: program(_client(http)))
    assert replaying.misses == []
    assert replayed == live
    if program in (error_429, error_500):
        assert live[0] == "error" and live[1] in (429, 500)
    else:
        assert live[0] == "ok"
    if program is cut_stream:
        assert live[1][1] == "cut" and len(live[1][0]) == 2


def test_gzip_is_stored_decoded_and_replays(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = standin_factory(
        lambda r: (
            Reply.text("compressed answer", gzip="always")
            if r.rpc in ("generateContent",)
            else None
        )
    )
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name="gz", upstream=api.url):
        client = genai.Client()
        live = client.models.generate_content(model=MODEL, contents="zip it").text
    exchange = load_cassette(tmp_path / "gz.cassette.json").exchanges[0]
    assert "content-encoding" not in exchange.response.headers
    assert exchange.response.body is not None and exchange.response.body.kind == "json"
    api.stop()
    with replay(tmp_path / "gz.cassette.json"):
        client = genai.Client()
        assert client.models.generate_content(model=MODEL, contents="zip it").text == live


def _record_stream(
    tmp_path: Path,
    standin_factory: Any,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    text: str,
    delay_s: float,
) -> Any:
    """Record NAME: one streamed call answered with ``text`` in 3 chunks ``delay_s`` apart."""
    api = standin_factory(
        lambda r: Reply.text(text, chunks=3, delay_s=delay_s) if r.stream else None
    )
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name=name, upstream=api.url):
        client = genai.Client()
        list(client.models.generate_content_stream(model=MODEL, contents="go"))
    return api


def test_stream_events_keep_offsets_and_framing(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _record_stream(tmp_path, standin_factory, monkeypatch, "s", "a b c d e", 0.05)
    body = load_cassette(tmp_path / "s.cassette.json").exchanges[0].response.body
    assert isinstance(body, SseBody) and body.complete and body.line_ending == "\r\n"
    offsets = [e.offset_ms for e in body.events]
    assert len(offsets) == 3 and offsets == sorted(offsets)
    assert offsets[2] - offsets[0] >= 60  # two 50 ms gaps, measured as they arrived


def test_cut_stream_is_recorded_as_cut(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = standin_factory(scripted_model)
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name="cut", upstream=api.url):
        cut_stream(genai.Client())
    body = load_cassette(tmp_path / "cut.cassette.json").exchanges[0].response.body
    assert isinstance(body, SseBody)
    assert body.complete is False and len(body.events) == 2


def test_fake_key_reaches_no_file_and_no_log(
    tmp_path: Path,
    standin_factory: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = standin_factory(scripted_model)
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    caplog.set_level("DEBUG")
    with record(tmp_path, name="secret", upstream=api.url):
        client = genai.Client()
        sync_unary(client)
        sync_stream(client)
        _outcome(lambda: error_429(client))
    assert api.requests[0].api_key == FAKE_API_KEY  # it was sent upstream...
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert FAKE_API_KEY not in file.read_text(errors="replace"), file
    assert FAKE_API_KEY not in caplog.text  # ...and never written or logged
    headers = load_cassette(tmp_path / "secret.cassette.json").exchanges[0].request.headers
    assert "x-goog-api-key" not in headers


def test_changed_system_instruction_fails_closed_and_names_it(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    api = standin_factory(scripted_model)
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)

    def ask(instruction: str) -> str | None:
        client = genai.Client()
        return client.models.generate_content(
            model=MODEL,
            contents="What should I pack?",
            config=types.GenerateContentConfig(system_instruction=instruction),
        ).text

    with record(tmp_path, name="si", upstream=api.url):
        ask("You are a helpful travel assistant.")
    seen = len(api.requests)
    with replay(tmp_path / "si.cassette.json") as replaying:
        with pytest.raises(genai_errors.ClientError) as caught:
            ask("You are a grumpy travel assistant.")
    assert len(api.requests) == seen  # never forwarded, though the stand-in was up
    message = str(caught.value)
    assert "systemInstruction" in message
    assert "si.cassette.json" in message
    assert len(replaying.misses) == 1 and "systemInstruction" in str(replaying.misses[0])


def test_twenty_concurrent_conversations_each_exchange_once(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = standin_factory(scripted_model)
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)

    async def conversation(client: genai.Client, n: int) -> list[str]:
        chat = client.aio.chats.create(model=MODEL)
        first = await chat.send_message(f"conversation {n} turn one")
        second = await chat.send_message(f"conversation {n} turn two")
        return [first.text or "", second.text or ""]

    async def all_of_them() -> list[list[str]]:
        client = genai.Client()
        return await asyncio.gather(*(conversation(client, n) for n in range(20)))

    with record(tmp_path, name="many", upstream=api.url):
        live = asyncio.run(all_of_them())
    cassette = load_cassette(tmp_path / "many.cassette.json")
    assert len(cassette.exchanges) == 40 == len(api.requests)
    bodies = [json.dumps(e.request.body.value, sort_keys=True) for e in cassette.exchanges]  # type: ignore[union-attr]
    assert len(set(bodies)) == 40
    assert sorted(e.id for e in cassette.exchanges) == list(range(40))
    api.stop()
    with replay(tmp_path / "many.cassette.json") as replaying:
        assert asyncio.run(all_of_them()) == live
    assert replaying.misses == [] and replaying.handler.unused() == []


def test_vertex_paths_are_recorded_and_replayed(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from google.oauth2.credentials import Credentials

    token = "ya29.FAKE-oauth-token-for-tests-only"
    api = standin_factory(scripted_model)

    def vertex_client() -> genai.Client:
        return genai.Client(
            vertexai=True,
            project="demo-project",
            location="us-central1",
            credentials=Credentials(token=token),
        )

    with record(tmp_path, name="vx", upstream=api.url, vertex_upstream=api.url):
        client = vertex_client()
        live = client.models.generate_content(model=MODEL, contents="vertex hello").text
    assert api.requests[0].vertex and "/projects/demo-project/" in api.requests[0].path
    assert api.requests[0].headers.get("authorization") == f"Bearer {token}"
    text = (tmp_path / "vx.cassette.json").read_text()
    assert "/projects/demo-project/locations/us-central1/" in text
    assert token not in text and "authorization" not in text.lower()
    api.stop()
    with replay(tmp_path / "vx.cassette.json") as replaying:
        client = vertex_client()
        assert client.models.generate_content(model=MODEL, contents="vertex hello").text == live
    assert replaying.misses == []


def test_client_disconnect_cancels_the_upstream_request(
    tmp_path: Path, standin_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    api = standin_factory(
        lambda r: Reply.text("one two three", chunks=3, delay_s=8.0) if r.stream else None
    )
    body = {"contents": [{"role": "user", "parts": [{"text": "count slowly"}]}]}
    with record(tmp_path, name="gone", upstream=api.url, point_clients=False) as rec:
        url = f"{rec.url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
        assert rec.forwarder is not None
        with httpx.Client(trust_env=False) as client:
            with client.stream(
                "POST", url, json=body, headers={"x-goog-api-key": FAKE_API_KEY}
            ) as r:
                # Keep the iterator: a dropped iter_raw() generator closes the response (and the
                # connection) when it is collected, which would end the stream early.
                chunks = r.iter_raw()
                assert next(chunks).startswith(b"data: ")
                assert rec.forwarder.streams_in_flight == 1
        # The client hung up after the first event; the next one is 8 s away. The proxy
        # must give up the upstream stream after its grace (2 s: a stream that had ended
        # would have ended by then), not when it next tries to write.
        hung_up = time.monotonic()
        deadline = hung_up + 6.5  # generous: CI machines are loaded
        while rec.forwarder.streams_in_flight and time.monotonic() < deadline:
            time.sleep(0.02)
        waited = time.monotonic() - hung_up
        assert rec.forwarder.streams_in_flight == 0, (
            f"the upstream stream outlived its client by {waited:.2f} s "
            f"(server status: {rec.server.handler.status() if rec.server else None})"
        )
        assert rec.forwarder.journal.recorded == 0  # an aborted answer is not recorded, and said so
    assert "#0: the client closed the connection before the response ended" in " ".join(
        caplog.text.split()
    )


def test_realtime_replay_keeps_the_recorded_pace(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = _record_stream(tmp_path, standin_factory, monkeypatch, "pace", "a b c d e f", 0.15)
    api.stop()

    def spread(**options: Any) -> float:
        with replay(tmp_path / "pace.cassette.json", **options):
            client = genai.Client()
            start, arrivals = time.perf_counter(), []
            for _ in client.models.generate_content_stream(model=MODEL, contents="go"):
                arrivals.append(time.perf_counter() - start)
        return arrivals[-1] - arrivals[0]

    paced = spread(realtime=True)
    assert paced >= 0.2  # two recorded gaps of 0.15 s (sleeps never run short)
    # Default: as fast as possible. No absolute bound (a loaded machine delays anything):
    # the unpaced replay only has to beat the paced one, whose sleeps alone take 0.3 s.
    assert spread() < paced
