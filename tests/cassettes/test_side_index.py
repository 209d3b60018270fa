"""The side index rec writes beside a cassette: a lazy load reads it instead of scanning the
file, and an index that no longer fits the file (edited by hand, same size and mtime; not
JSON; another shape) is never trusted: the file is scanned, with the same results."""

from __future__ import annotations

import array
import base64
import gc
import json
import os
import stat
import tracemalloc
from pathlib import Path

import pytest

import cassettes._cassette as cassette_module
from cassettes._cassette import (
    Cassette,
    Exchange,
    JsonBody,
    LazyExchanges,
    RecordedRequest,
    RecordedResponse,
    SseBody,
    SseEvent,
    TextBody,
    load_cassette,
)
from cassettes._cassette_writer import save_cassette
from cassettes._errors import InputError
from cassettes._file_names import side_index_file
from cassettes._matching import MatchIndex, MatchRules, _bucket_key
from cassettes._side_index import CassetteLayout

URL = "https://generativelanguage.googleapis.com/v1beta/models/m:generateContent"
TOOL_URL = "https://api.example.com/weather?city=Paris"


def _exchange(n: int) -> Exchange:
    if n % 7 == 3:
        request = RecordedRequest(method="GET", url=TOOL_URL)
        return Exchange(
            id=n,
            recorded_at="2026-01-01T00:00:00+00:00",
            request=request,
            response=RecordedResponse(status=200, body=TextBody(text=f"sunny {n}")),
            origin="tool",
        )
    if n % 7 == 5:
        request = RecordedRequest(method="POST", url=URL, body=TextBody(text=f"plain {n}"))
    else:
        turns = [{"role": "user", "parts": [{"text": f"q{n:03d}-{t}"}]} for t in range(1 + n % 3)]
        request = RecordedRequest(
            method="POST", url=URL, body=JsonBody(value={"contents": turns, "big": 2**70 + n})
        )
    stream = SseBody(events=[SseEvent(offset_ms=1.5, data={"answer": n})])
    return Exchange(
        id=n,
        recorded_at="2026-01-01T00:00:00+00:00",
        request=request,
        response=RecordedResponse(status=200, body=stream),
    )


EXCHANGES = [_exchange(n) for n in range(40)]


@pytest.fixture
def cassette_path(tmp_path: Path) -> Path:
    path = tmp_path / "c.cassette.json"
    save_cassette(Cassette(name="c", exchanges=EXCHANGES), path)
    return path


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each file a lazy load scans line by line (not reading its side index)."""
    seen: list[int] = []
    real = cassette_module.scan_layout

    def counting(data: bytes) -> CassetteLayout | None:
        seen.append(len(data))
        return real(data)

    monkeypatch.setattr(cassette_module, "scan_layout", counting)
    return seen


def _lazy(path: Path) -> LazyExchanges:
    exchanges = load_cassette(path, lazy=True).exchanges
    assert isinstance(exchanges, LazyExchanges)
    return exchanges


def _same_results(lazy: LazyExchanges, path: Path) -> None:
    """What matching and replay read of ``lazy`` is what the eagerly loaded file holds."""
    eager = load_cassette(path).exchanges
    for position, exchange in enumerate(eager):
        assert lazy.bucket(position) == _bucket_key(exchange.request, use_turns=True)
        assert lazy.origin(position) == exchange.origin
        assert lazy.url(position) == exchange.request.url
    for rules in (MatchRules(), MatchRules(ignore_paths=("contents",))):
        index, eager_index = MatchIndex(lazy, rules), MatchIndex(eager, rules)
        for exchange in eager:
            assert index.lookup(exchange.request) == eager_index.lookup(exchange.request)
    assert list(lazy) == eager


def test_saving_writes_a_private_side_index_in_rec_folder(cassette_path: Path) -> None:
    index = side_index_file(cassette_path)
    assert index == cassette_path.parent / ".rec" / "c.cassette.json.idx"
    assert index.is_file()
    assert stat.S_IMODE(index.stat().st_mode) == stat.S_IMODE(cassette_path.stat().st_mode)
    assert stat.S_IMODE(index.stat().st_mode) == 0o600
    assert [p.name for p in cassette_path.parent.iterdir() if p.is_file()] == ["c.cassette.json"]


def test_loading_reads_the_index_and_parses_no_exchange(
    cassette_path: Path, scans: list[int]
) -> None:
    lazy = _lazy(cassette_path)
    index = MatchIndex(lazy, MatchRules())
    assert scans == []
    assert not any(lazy.parsed(i) for i in range(len(lazy)))
    assert lazy.origin(3) == "tool" and lazy.url(3) == TOOL_URL
    hit = index.lookup(EXCHANGES[8].request)
    assert hit == EXCHANGES[8]
    assert [i for i in range(len(lazy)) if lazy.parsed(i)] == [8]
    _same_results(lazy, cassette_path)
    assert scans == []


def test_the_same_results_without_the_index(cassette_path: Path, scans: list[int]) -> None:
    side_index_file(cassette_path).unlink()
    lazy = _lazy(cassette_path)
    assert scans == [cassette_path.stat().st_size]
    _same_results(lazy, cassette_path)


def test_a_hand_edit_of_the_same_size_and_mtime_is_seen(
    cassette_path: Path, scans: list[int]
) -> None:
    before = cassette_path.stat()
    text = cassette_path.read_text()
    assert text.count('"q008-0"') == 1
    cassette_path.write_text(text.replace('"q008-0"', '"q999-0"'))
    os.utime(cassette_path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = cassette_path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    lazy = _lazy(cassette_path)
    assert scans == [cassette_path.stat().st_size]
    edited = load_cassette(cassette_path).exchanges[8]
    assert MatchIndex(lazy, MatchRules()).lookup(edited.request) == edited
    assert MatchIndex(lazy, MatchRules()).lookup(EXCHANGES[8].request) is None
    _same_results(lazy, cassette_path)


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda text: text[: len(text) // 2], id="cut-short"),
        pytest.param(lambda text: "not json at all", id="not-json"),
        pytest.param(lambda text: '{"rec_side_index": 1}', id="missing-fields"),
        pytest.param(
            lambda text: text.replace('"starts":"', '"starts":"AQAAAAAAAAA=', 1), id="extra-span"
        ),
        pytest.param(
            lambda text: text.replace('"requests":[[', '"requests":[[1,', 1), id="wrong-type"
        ),
        pytest.param(lambda text: text.replace('"ends":"', '"ends":"*', 1), id="not-base64"),
        pytest.param(lambda text: text.replace('x":2', 'x":9', 1), id="version-9"),
        pytest.param(
            lambda text: text.replace('"wires":"', '"wires":"AAAAAAAAAAAAAAAAAAAAAA==', 1),
            id="wires-of-another-length",
        ),
        pytest.param(lambda text: text.replace('"wires":"', '"wires":5,"_":"', 1), id="wires-5"),
    ],
)
def test_a_corrupt_index_is_not_trusted(
    cassette_path: Path, scans: list[int], spoil: object
) -> None:
    index = side_index_file(cassette_path)
    index.write_text(spoil(index.read_text()))  # type: ignore[operator]
    lazy = _lazy(cassette_path)
    assert scans == [cassette_path.stat().st_size]
    _same_results(lazy, cassette_path)


def test_an_index_of_other_spans_is_not_trusted(cassette_path: Path, scans: list[int]) -> None:
    """An index that parses and names the file's size and checksum, but whose spans are
    shifted, still cannot hand out a wrong exchange: each exchange read is checked, and
    one that does not parse as the exchange the index names sends replay to the whole file."""
    index = side_index_file(cassette_path)
    document = json.loads(index.read_text())
    starts = array.array("q", base64.b64decode(document["starts"]))
    starts[0] += 5
    document["starts"] = base64.b64encode(starts.tobytes()).decode()
    index.write_text(json.dumps(document))
    lazy = _lazy(cassette_path)
    assert scans == []
    assert lazy[0] == EXCHANGES[0]
    _same_results(lazy, cassette_path)


def test_a_file_replaced_after_loading_is_still_read_as_loaded(cassette_path: Path) -> None:
    """rec replaces a cassette atomically (an auto-mode replay appending to the recording it
    replays): what was loaded keeps reading the file as it was."""
    lazy = _lazy(cassette_path)
    save_cassette(Cassette(name="c", exchanges=EXCHANGES[::-1]), cassette_path)
    assert lazy[0] == EXCHANGES[0]
    assert list(lazy) == EXCHANGES


def test_a_file_changed_in_place_after_loading_is_reported_not_misread(
    cassette_path: Path,
) -> None:
    lazy = _lazy(cassette_path)
    with cassette_path.open("r+b") as handle:
        handle.truncate(100)
    with pytest.raises(InputError, match="changed on disk") as caught:
        lazy[0]  # noqa: B018
    assert str(cassette_path) in str(caught.value)


def _objects_kept_by_loading(path: Path) -> int:
    """How many memory blocks a lazy load of ``path`` allocates and keeps."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        cassette = load_cassette(path, lazy=True)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert isinstance(cassette.exchanges, LazyExchanges)
    ignored = [tracemalloc.Filter(False, tracemalloc.__file__)]
    found = after.filter_traces(ignored).compare_to(before.filter_traces(ignored), "filename")
    return sum(stat.count_diff for stat in found)


def test_loading_with_the_index_keeps_no_object_per_exchange(tmp_path: Path) -> None:
    """The index's columns are read packed: a cassette of 20 times the exchanges keeps
    about as many objects once loaded (a list per column would keep one per exchange)."""
    kept = []
    for count in (40, 800):
        path = tmp_path / f"c{count}.cassette.json"
        save_cassette(Cassette(name="c", exchanges=[_exchange(n) for n in range(count)]), path)
        kept.append(_objects_kept_by_loading(path))
    assert kept[1] - kept[0] < 100, kept


def test_a_cases_requests_are_found_by_their_first_user_turn_in_the_index(
    cassette_path: Path, scans: list[int]
) -> None:
    """The index keeps a digest of each request's first user turn: a case's requests are
    found without reading or parsing any exchange; a scanned file does not know them."""
    lazy = _lazy(cassette_path)
    found = lazy.first_asking("q004-0")
    assert found is not None
    assert [i for i in range(len(lazy)) if lazy.parsed(i)] == []
    assert (
        [e.id for e in found]
        == [4]
        == [
            e.id
            for e in EXCHANGES
            if isinstance(e.request.body, JsonBody)
            and e.request.body.value["contents"][0]["parts"][0]["text"] == "q004-0"
        ]
    )
    side_index_file(cassette_path).unlink()
    assert _lazy(cassette_path).first_asking("q004-0") is None
    assert scans == [cassette_path.stat().st_size]
