"""A lazily loaded cassette: the match index is built from the file's lines, no exchange
is parsed until it is used, and what a lookup returns equals the eagerly loaded one."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes._bucket_keys import raw_bucket_key
from cassettes._cassette import (
    _RECENT,
    Cassette,
    Exchange,
    JsonBody,
    LazyExchanges,
    RecordedRequest,
    RecordedResponse,
    TextBody,
    load_cassette,
)
from cassettes._cassette_writer import save_cassette
from cassettes._errors import InputError
from cassettes._matching import MatchIndex, MatchRules, _bucket_key

URL = "https://generativelanguage.googleapis.com/v1beta/models/m:generateContent"


def _exchange(n: int, turns: int) -> Exchange:
    contents = [{"role": "user", "parts": [{"text": f"q{n}-{t}"}]} for t in range(turns)]
    return Exchange(
        id=n,
        recorded_at="2026-01-01T00:00:00+00:00",
        request=RecordedRequest(
            method="POST",
            url=URL,
            body=JsonBody(value={"contents": contents, "big": 2**70 + n}),
        ),
        response=RecordedResponse(status=200, body=JsonBody(value={"answer": n})),
    )


def _write(tmp_path: Path, exchanges: list[Exchange]) -> Path:
    path = tmp_path / "c.json"
    save_cassette(Cassette(name="c", exchanges=exchanges), path)
    return path


def test_building_the_index_parses_no_exchange(tmp_path: Path) -> None:
    exchanges = [_exchange(n, 1 + n % 3) for n in range(30)]
    exchanges.append(
        Exchange(
            id=30,
            recorded_at="2026-01-01T00:00:00+00:00",
            request=RecordedRequest(method="POST", url=URL, body=TextBody(text="plain")),
            response=RecordedResponse(status=200),
            origin="tool",
        )
    )
    path = _write(tmp_path, exchanges)
    cassette = load_cassette(path, lazy=True)
    lazy = cassette.exchanges
    assert isinstance(lazy, LazyExchanges)
    index = MatchIndex(lazy, MatchRules())
    assert not any(lazy.parsed(i) for i in range(len(lazy)))
    assert lazy.origin(30) == "tool" and lazy.origin(0) is None
    assert not any(lazy.parsed(i) for i in range(len(lazy)))

    hit = index.lookup(exchanges[7].request)
    assert hit == exchanges[7]
    assert hit.request.body is not None and hit.request.body.value["big"] == 2**70 + 7
    assert sum(lazy.parsed(i) for i in range(len(lazy))) < len(lazy) // 2

    eager = load_cassette(path)
    assert list(lazy) == eager.exchanges
    for position in range(len(lazy)):
        data, start, end = lazy.raw(position)
        for use_turns in (True, False):
            assert raw_bucket_key(data, start, end, use_turns=use_turns) == _bucket_key(
                eager.exchanges[position].request, use_turns=use_turns
            )


def test_an_invalid_exchange_is_reported_with_its_place_when_used(tmp_path: Path) -> None:
    path = _write(tmp_path, [_exchange(0, 1), _exchange(1, 1)])
    text = path.read_text().replace('"status": 200', '"status": 99', 2)
    path.write_text(text)
    cassette = load_cassette(path, lazy=True)
    with pytest.raises(InputError) as caught:
        cassette.exchanges[1]  # noqa: B018
    assert caught.value.where == "exchanges[1].response.status"
    with pytest.raises(InputError):
        load_cassette(path)


def test_duplicate_ids_are_refused_at_load(tmp_path: Path) -> None:
    path = _write(tmp_path, [_exchange(0, 1), _exchange(0, 2)])
    with pytest.raises(InputError, match="both have id 0"):
        load_cassette(path, lazy=True)


def test_a_file_in_another_layout_is_read_whole(tmp_path: Path) -> None:
    path = _write(tmp_path, [_exchange(0, 1)])
    path.write_text(path.read_text().replace("\n", " "))
    cassette = load_cassette(path, lazy=True)
    assert isinstance(cassette.exchanges, list)
    assert cassette.exchanges[0] == _exchange(0, 1)


def test_a_lazily_loaded_cassette_is_written_back_byte_for_byte(tmp_path: Path) -> None:
    """Writing back (a merge, record-missing) keeps every byte: big integers stay exact."""
    path = _write(tmp_path, [_exchange(n, 2) for n in range(5)])
    before = path.read_bytes()
    cassette = load_cassette(path, lazy=True)
    assert isinstance(cassette.exchanges, LazyExchanges)
    cassette.exchanges[3]  # one parsed, the rest not: both kinds are written
    again = tmp_path / "again.json"
    save_cassette(cassette, again)
    assert again.read_bytes() == before
    assert str(2**70 + 4).encode() in before


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(r'"\ud800 lone surrogate"', id="lone-surrogate"),
        pytest.param(r'"\udc00 then a pair \ud83d\ude00"', id="trailing-surrogate"),
        pytest.param("[" * 400 + "]" * 400, id="deeper-than-jiter-reads"),
        pytest.param('{"k": 1, "k": 2}', id="duplicate-key"),
        pytest.param(str(2**70) + ", -0, " + "9" * 4000, id="big-ints"),
        pytest.param("0.1, 1e-310, 1.7976931348623157e308, -0.0, 5e-324, 1E400", id="floats"),
        pytest.param(r'"\u007f\u2028\u00e9 \\ \" \/ caf\u00e9"', id="escapes"),
        pytest.param("NaN, -Infinity", id="non-finite"),
    ],
)
def test_an_exchange_reads_as_json_loads_reads_it(tmp_path: Path, text: str) -> None:
    # The lazy load parses each exchange with pydantic-core's parser and lets json.loads
    # decide what that parser refuses: either way the values are json.loads' own.
    exchange = _exchange(0, 1)
    exchange.response.body = JsonBody(value={"v": "PLACEHOLDER"})
    path = _write(tmp_path, [exchange])
    path.write_bytes(path.read_bytes().replace(b'"PLACEHOLDER"', f"[{text}]".encode()))
    lazy = load_cassette(path, lazy=True).exchanges[0]
    assert repr(lazy) == repr(load_cassette(path).exchanges[0])


def test_the_exchanges_share_their_short_strings(tmp_path: Path) -> None:
    # pydantic-core's parser keeps one string per short text across the exchanges it reads
    # (keys, roles, the same user turn re-sent): a recording of many exchanges holds each once.
    path = _write(tmp_path, [_exchange(n, 2) for n in range(3)])
    first, second = list(load_cassette(path, lazy=True).exchanges)[1:]
    assert isinstance(first.request.body, JsonBody) and isinstance(second.request.body, JsonBody)
    one, two = first.request.body.value["contents"][0], second.request.body.value["contents"][0]
    assert one["role"] is two["role"]
    assert next(iter(one)) is next(iter(two))


def test_a_cassette_that_keeps_only_what_is_in_use_lets_the_rest_go(tmp_path: Path) -> None:
    """``rec serve``'s mode: an exchange stays the same object while its caller holds it;
    one nobody holds is let go (beyond the last few used) and parsed again when used again."""
    path = tmp_path / "c.cassette.json"
    exchanges = [_exchange(n, 1 + n % 3) for n in range(100)]
    save_cassette(Cassette(name="c", upstream="https://x", exchanges=exchanges), path)
    lazy = load_cassette(path, lazy=True).exchanges
    assert isinstance(lazy, LazyExchanges)
    lazy.keep_only_in_use()
    kept = lazy[3]
    for position in range(100):
        assert lazy[position] == exchanges[position]
    assert lazy.parses() == 100  # each parsed once, as it was used
    assert lazy[3] is kept  # still held by this test: the same object, not parsed again
    held = [position for position in range(100) if lazy.parsed(position)]
    assert len(held) <= _RECENT + 1 and 3 in held
    lazy[10]  # let go since: parsed again
    assert lazy.parses() == 101
    assert list(lazy) == exchanges
