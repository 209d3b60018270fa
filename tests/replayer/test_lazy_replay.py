"""Replaying from a large recording parses only the exchanges it serves: the proxy loads
cassettes lazily and its match index reads keys from the file's bytes. ``rec show`` loads
lazily too and shows what eager loading shows."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors as genai_errors

from cassettes._cassette import _RECENT, LazyExchanges, load_cassette
from cassettes._cassette_writer import save_cassette
from rec.standin.replies import FAKE_API_KEY
from recorder._api import record
from recorder._traffic import ProxyServer
from replayer._replay_api import replay
from replayer._reports.timeline import (
    cassette_timelines,
    dump_timelines,
    render_timelines,
    timeline_of,
)
from replayer._serve import serving_handler
from tests.factories import MODEL, gemini_request, hello_model, make_cassette, make_exchange


def test_serving_one_request_parses_only_that_exchange(
    tmp_path: Path, loopback_only: object
) -> None:
    path = tmp_path / "many.cassette.json"
    save_cassette(make_cassette(200), path)  # "Question 0" .. "Question 199"
    with replay(path) as replaying:
        (loaded,) = replaying.handler.cassettes
        exchanges = loaded.cassette.exchanges
        assert isinstance(exchanges, LazyExchanges)
        assert not any(exchanges.parsed(i) for i in range(len(exchanges)))
        client = genai.Client()
        answer = client.models.generate_content(model=MODEL, contents="Question 137")
    assert answer.text
    assert replaying.served == 1 and not replaying.misses
    parsed = [i for i in range(len(exchanges)) if exchanges.parsed(i)]
    assert parsed == [137]
    assert replaying.handler.origin(exchanges[137]) == path


def test_a_bucket_is_keyed_from_the_file_and_only_the_served_exchanges_are_parsed(
    tmp_path: Path, loopback_only: object
) -> None:
    """200 conversations that differ only in their first turn share one bucket (the same
    route, number of turns and last turn): serving one keys the bucket's recordings from
    the file's lines, in order up to it, and parses only the exchange it answers with."""
    path = tmp_path / "bucket.cassette.json"

    def turns(i: int) -> list[str]:
        return [f"Question {i}", f"Answer {i}", "And then?"]

    exchanges = [make_exchange(i, request_body=gemini_request(turns(i))) for i in range(200)]
    save_cassette(make_cassette(exchanges), path)
    with replay(path) as replaying:
        (loaded,) = replaying.handler.cassettes
        lazy = loaded.cassette.exchanges
        assert isinstance(lazy, LazyExchanges)
        client = genai.Client()

        def ask(i: int) -> None:
            said = zip(("user", "model", "user"), turns(i), strict=True)
            contents = [{"role": role, "parts": [{"text": text}]} for role, text in said]
            answer = client.models.generate_content(model=MODEL, contents=contents)
            assert answer.text == f"Answer {i}"  # the recording of that conversation

        ask(5)
        assert [i for i in range(200) if lazy.parsed(i)] == [5]
        ask(2)  # keyed already
        ask(9)
        assert [i for i in range(200) if lazy.parsed(i)] == [2, 5, 9]
    assert replaying.served == 3 and not replaying.misses


async def _sdk_calls(client: genai.Client) -> tuple[str | None, list[str | None]]:
    unary = await client.aio.models.generate_content(model=MODEL, contents="Héllo 😀, wörld")
    stream = await client.aio.models.generate_content_stream(model=MODEL, contents="go")
    return unary.text, [chunk.text async for chunk in stream]


def test_the_sdk_sends_its_recorded_requests_again_and_each_is_found_by_its_bytes(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """google-genai sends a recorded request byte for byte as the cassette's side index
    digests it: replay finds each by that digest (aiohttp's unary call and stream, httpx's
    call), with the answers the recording holds."""
    api = standin_factory(hello_model)
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name="wire", upstream=api.url, write_evalset=False):
        client = genai.Client()
        expected = (
            asyncio.run(_sdk_calls(client)),
            client.models.generate_content(model=MODEL, contents="sync").text,
        )
    api.stop()
    with replay(tmp_path / "wire.cassette.json") as replaying:
        client = genai.Client()
        got = (
            asyncio.run(_sdk_calls(client)),
            client.models.generate_content(model=MODEL, contents="sync").text,
        )
    assert got == expected == (("hello", ["one two ", "three ", "four"]), "hello")
    assert replaying.served == 3 and not replaying.misses
    played_by_bytes = [name for name in replaying.handler.index._wired.values() if name]
    assert len(played_by_bytes) == 3


def test_rec_serve_keeps_no_model_for_the_requests_it_served(
    tmp_path: Path, loopback_only: object
) -> None:
    """What ``rec serve`` answers with parses the one exchange each request is answered
    with, once, and lets it go once answered: after 150 requests it holds only the last
    few used, and its channel counts them without keeping them."""
    path = tmp_path / "many.cassette.json"
    save_cassette(make_cassette(300), path)  # "Question 0" .. "Question 299"
    handler = serving_handler([path])
    (loaded,) = handler.cassettes
    lazy = loaded.cassette.exchanges
    assert isinstance(lazy, LazyExchanges)
    asked = range(0, 300, 2)
    with ProxyServer(handler).running_in_thread() as server:
        client = genai.Client(api_key=FAKE_API_KEY, http_options={"base_url": server.url})
        for i in asked:
            answer = client.models.generate_content(model=MODEL, contents=f"Question {i}")
            assert answer.text == f"Answer {i}"
    assert handler.served == len(asked) and not handler.misses
    assert lazy.parses() == len(asked)
    held = [i for i in range(len(lazy)) if lazy.parsed(i)]
    assert len(held) <= _RECENT and set(held) <= set(asked)
    assert handler.channel.exchanges == []


def test_a_miss_names_the_lazily_loaded_cassette(tmp_path: Path, loopback_only: object) -> None:
    path = tmp_path / "many.cassette.json"
    save_cassette(make_cassette(50), path)
    with replay(path) as replaying:
        client = genai.Client()
        with pytest.raises(genai_errors.APIError):
            client.models.generate_content(model=MODEL, contents="Question 500")
    (miss,) = replaying.misses
    assert str(path) in str(miss)


EXAMPLES = sorted((Path(__file__).parents[2] / "examples").rglob("*.cassette.json"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.parent.name + "/" + p.name)
def test_show_reads_the_bundled_examples_as_eager_loading_does(path: Path) -> None:
    """``rec show`` loads lazily; its text and JSON equal those of the eagerly loaded file."""
    (shown,) = cassette_timelines([path])
    eager = load_cassette(path)
    expected = timeline_of(eager.exchanges, path=str(path), name=eager.name)
    assert render_timelines([shown], width=100) == render_timelines([expected], width=100)
    assert dump_timelines([shown]) == dump_timelines([expected])
    if eager.exchanges:  # what is shown came from the lazy reader
        assert isinstance(load_cassette(path, lazy=True).exchanges, LazyExchanges)
