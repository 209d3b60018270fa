"""The in-process replay transport answers google-genai exactly as the replay proxy does.

A real google-genai client (its httpx path, with rec's transport) against a recording made
through the real recording proxy from the stand-in; the same calls through the proxy
are the reference: the same text, the same streamed chunks, the same miss.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors, types

from cassettes._cassette import JsonBody, load_cassette
from rec.standin.replies import FAKE_API_KEY, Reply
from recorder._api import record
from replayer._in_process import ReplayTransport, SyncReplayTransport
from replayer._replay_api import replay
from tests.factories import hello_model

MODEL = "gemini-2.0-flash"


async def _calls(client: genai.Client, prompt: str = "hi") -> tuple[str | None, list[Any]]:
    unary = (await client.aio.models.generate_content(model=MODEL, contents=prompt)).text
    stream = await client.aio.models.generate_content_stream(model=MODEL, contents="go")
    return unary, [chunk.text async for chunk in stream]


@pytest.fixture
def cassette(tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    api = standin_factory(hello_model)
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name="ip", upstream=api.url, write_evalset=False):
        asyncio.run(_calls(genai.Client()))
    api.stop()
    return tmp_path / "ip.cassette.json"


def _in_process_client(transport: ReplayTransport) -> genai.Client:
    options = types.HttpOptions(async_client_args={"transport": transport})
    return genai.Client(api_key=FAKE_API_KEY, http_options=options)


def test_the_transport_answers_as_the_proxy_does(cassette: Path) -> None:
    with replay(cassette) as proxied:
        expected = asyncio.run(_calls(genai.Client()))
    with replay(cassette, point_clients=False) as replaying:
        got = asyncio.run(_calls(_in_process_client(ReplayTransport(replaying.handler))))
        assert replaying.server.handled == 0  # nothing went through the proxy
    assert got == expected
    assert got[0] == "hello" and len(got[1]) == 3 and "".join(got[1]) == "one two three four"
    assert replaying.served == proxied.served == 2 and replaying.misses == []


def test_a_miss_fails_closed_with_the_proxys_error(cassette: Path) -> None:
    def miss(client: genai.Client) -> errors.APIError:
        with pytest.raises(errors.APIError) as caught:
            asyncio.run(_calls(client, prompt="something never recorded"))
        return caught.value

    with replay(cassette) as proxied:
        expected = miss(genai.Client())
    with replay(cassette, point_clients=False) as replaying:
        got = miss(_in_process_client(ReplayTransport(replaying.handler)))
    assert (got.code, got.status) == (expected.code, expected.status)
    assert str(got.message).split("(rec miss")[0] == str(expected.message).split("(rec miss")[0]
    assert len(replaying.misses) == len(proxied.misses) == 1
    assert "contents" in str(replaying.misses[0])


def test_a_stream_cut_when_recorded_breaks_off_again(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = standin_factory(lambda request: Reply.text("a b c d e f", chunks=3, cut_after=2))
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)

    async def stream(client: genai.Client) -> tuple[list[Any], type[BaseException] | None]:
        got: list[Any] = []
        try:
            async for chunk in await client.aio.models.generate_content_stream(
                model=MODEL, contents="go"
            ):
                got.append(chunk.text)
        except Exception as exc:  # noqa: BLE001 - the client's own error for a cut body
            return got, type(exc)
        return got, None

    with record(tmp_path, name="cut", upstream=api.url, write_evalset=False):
        recorded, _ = asyncio.run(stream(genai.Client()))
    api.stop()
    cassette = tmp_path / "cut.cassette.json"
    with replay(cassette, point_clients=False) as replaying:
        got, error = asyncio.run(stream(_in_process_client(ReplayTransport(replaying.handler))))
    assert got == recorded and len(got) == 2
    assert error is not None  # the body breaks off where the recording did


def test_an_answer_played_again_reuses_the_bytes_built_the_first_time(cassette: Path) -> None:
    async def twice(client: genai.Client) -> list[str | None]:
        calls = [client.aio.models.generate_content(model=MODEL, contents="hi") for _ in "ab"]
        return [(await call).text for call in calls]

    with replay(cassette, point_clients=False) as replaying:
        handler = replaying.handler
        client = _in_process_client(ReplayTransport(handler))
        assert asyncio.run(twice(client)) == ["hello", "hello"]  # the last answer repeats
        [hit, again] = handler.channel.exchanges
        assert hit is again
        built = handler.playback(hit)
        assert asyncio.run(twice(client)) == ["hello", "hello"]
        assert handler.playback(hit) is built


def _sync_calls(client: genai.Client, prompt: str = "hi") -> tuple[str | None, list[Any]]:
    unary = client.models.generate_content(model=MODEL, contents=prompt).text
    stream = client.models.generate_content_stream(model=MODEL, contents="go")
    return unary, [chunk.text for chunk in stream]


def _run(client: genai.Client, *, sync: bool, prompt: str = "hi") -> Any:
    return _sync_calls(client, prompt) if sync else asyncio.run(_calls(client, prompt))


@pytest.mark.parametrize("sync", [pytest.param(True, id="sync"), pytest.param(False, id="async")])
def test_rec_replay_answers_clients_in_process_as_the_proxy_does(
    cassette: Path, sync: bool
) -> None:
    """``rec.replay()`` answers the clients built in its block without the socket; the
    same calls through the proxy (``in_process=False``) get the same answers."""
    with replay(cassette, in_process=False) as proxied:
        expected = _run(genai.Client(), sync=sync)
    with replay(cassette) as replaying:
        got = _run(genai.Client(), sync=sync)
    assert got == expected and got[0] == "hello" and len(got[1]) == 3
    assert proxied.server.handled == proxied.served == 2
    assert replaying.server.handled == 0 and replaying.served == 2


@pytest.mark.parametrize("sync", [pytest.param(True, id="sync"), pytest.param(False, id="async")])
@pytest.mark.parametrize(
    "in_process", [pytest.param(False, id="proxy"), pytest.param(True, id="in-process")]
)
def test_a_miss_is_the_same_through_the_proxy_and_in_process(
    cassette: Path, in_process: bool, sync: bool
) -> None:
    """The same unrecorded request gets the same miss either way: the same error to the
    client, and the same reported miss (message, nearest recording and diff)."""

    def miss(session_in_process: bool) -> tuple[errors.APIError, str, list[str], int]:
        with replay(cassette, in_process=session_in_process) as replaying:
            with pytest.raises(errors.APIError) as caught:
                _run(genai.Client(), sync=sync, prompt="something never recorded")
        [reported] = replaying.misses
        return caught.value, str(reported), list(reported.diff), replaying.server.handled

    error, message, diff, handled = miss(in_process)
    reference_error, reference_message, reference_diff, _ = miss(not in_process)
    assert (handled == 0) is in_process  # the path under test was the one taken
    assert (error.code, error.status, error.message) == (
        reference_error.code,
        reference_error.status,
        reference_error.message,
    )
    assert message == reference_message and diff == reference_diff
    assert any("contents" in line for line in diff), diff


def test_a_whole_body_answer_carries_the_proxys_status_headers_and_bytes(cassette: Path) -> None:
    """Through httpx itself: the in-process answer has the proxy's status, content type,
    length and bytes; each answer's headers are its own (built once, copied per call)."""
    (unary,) = [e for e in load_cassette(cassette).exchanges if "alt=sse" not in e.request.url]
    assert isinstance(unary.request.body, JsonBody)
    path = "/" + unary.request.url.split("/", 3)[3]
    body = json.dumps(unary.request.body.value).encode()
    headers = {"content-type": "application/json"}
    with replay(cassette, point_clients=False) as replaying:
        with httpx.Client(base_url=replaying.url, trust_env=False) as client:
            proxied = client.post(path, content=body, headers=headers)
        transport = SyncReplayTransport(replaying.handler, replaying.url)
        with httpx.Client(transport=transport, base_url=replaying.url) as client:
            first = client.post(path, content=body, headers=headers)
            first.headers["x-changed"] = "by the caller"
            second = client.post(path, content=body, headers=headers)
    for got in (first, second):
        assert got.status_code == proxied.status_code == 200
        assert got.content == proxied.content and b"hello" in got.content
        for name in ("content-type", "content-length"):
            assert got.headers[name] == proxied.headers[name]
    assert "x-changed" not in second.headers
