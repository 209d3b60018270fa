"""Cassette files: what `rec check` accepts is what replays, and loading refuses the rest.

Each broken file starts as a valid recording from the factories, changed in one place the
way a hand edit or a bad merge would change it. ``rec check`` must name the place and the
rule, and loading for replay (``load_cassette``) must refuse the same file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import dump_cassette, load_cassette
from cassettes._checking import check_file
from cassettes._errors import InputError
from tests.factories import gemini_stream, make_cassette, make_exchange

Document = dict[str, Any]


def _response(document: Document, index: int = 0) -> Document:
    response: Document = document["exchanges"][index]["response"]
    return response


def _binary(document: Document) -> None:
    _response(document)["body"] = {"kind": "base64", "base64": "not base64!"}


def _header_name(document: Document) -> None:
    _response(document)["headers"]["x-evil\r\nset-cookie"] = "a=b"


def _header_value(document: Document) -> None:
    _response(document)["headers"]["content-type"] = "text/plain\r\nset-cookie: a=b"


def _request_header_value(document: Document) -> None:
    document["exchanges"][0]["request"]["headers"]["user-agent"] = "x\nevil: 1"


def _status(status: int) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        _response(document)["status"] = status

    return change


def _sse_line(document: Document) -> None:
    _response(document, 1)["body"]["events"][0] = {
        "offset_ms": 1.0,
        "lines": ['data: {"a": 1}\r\n\r\ndata: {"injected": true}'],
    }


def _duplicate_id(document: Document) -> None:
    document["exchanges"][1]["id"] = 0


BROKEN = [
    pytest.param(_binary, "exchanges[0].response.body.base64", "not valid base64", id="base64"),
    pytest.param(
        _header_name,
        'exchanges[0].response.headers."x-evil\\r\\nset-cookie"',
        "not a valid HTTP header name",
        id="header-name-crlf",
    ),
    pytest.param(
        _header_value,
        "exchanges[0].response.headers.content-type",
        "line break or NUL",
        id="header-value-crlf",
    ),
    pytest.param(
        _request_header_value,
        "exchanges[0].request.headers.user-agent",
        "line break or NUL",
        id="request-header-lf",
    ),
    pytest.param(_status(0), "exchanges[0].response.status", "HTTP status 0", id="status-0"),
    pytest.param(
        _status(99999), "exchanges[0].response.status", "HTTP status 99999", id="status-99999"
    ),
    pytest.param(_sse_line, "exchanges[1].response.body", "inject events", id="sse-line-with-crlf"),
    pytest.param(_duplicate_id, "exchanges", "both have id 0", id="duplicate-ids"),
]


def _recording() -> Document:
    exchanges = [make_exchange(0), make_exchange(1, stream_chunks=gemini_stream("Sunny today"))]
    document: Document = json.loads(dump_cassette(make_cassette(exchanges)))
    return document


@pytest.mark.parametrize(("change", "where", "message"), BROKEN)
def test_check_refuses_what_would_not_replay_and_loading_refuses_it_too(
    tmp_path: Path, change: Callable[[Document], None], where: str, message: str
) -> None:
    document = _recording()
    change(document)
    path = tmp_path / "r.cassette.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    problems = check_file(path)
    assert [p.where for p in problems] == [where], [str(p) for p in problems]
    assert message in problems[0].problem and problems[0].fix
    assert "\n" not in str(problems[0])
    with pytest.raises(InputError) as caught:
        load_cassette(path)
    assert caught.value.where == where and message in caught.value.problem


def test_a_recording_passes(tmp_path: Path) -> None:
    path = tmp_path / "r.cassette.json"
    path.write_text(dump_cassette(make_cassette(_recording_exchanges())), encoding="utf-8")
    assert check_file(path) == []
    assert len(load_cassette(path).exchanges) == 3


def _recording_exchanges() -> list[Any]:
    """Every body kind, a cut stream, an error status, a lone LF inside a CRLF stream's line."""
    odd_stream = make_exchange(2, stream_chunks=gemini_stream("Cloudy"), complete=False)
    events = odd_stream.response.body.events  # type: ignore[union-attr]
    events[0] = events[0].model_copy(update={"data": None, "lines": ["data: a\nb", ": note"]})
    return [
        make_exchange(0, status=429, response_body={"error": {"code": 429}}),
        make_exchange(1, stream_chunks=gemini_stream("Sunny today")),
        odd_stream,
    ]


@pytest.mark.parametrize(
    ("path", "name"),
    [
        pytest.param("recordings/weather.cassette.json", "weather", id="cassette"),
        pytest.param(
            "a.b.recovered-20261201T1200.cassette.json", "a.b.recovered-20261201T1200", id="dots"
        ),
        pytest.param("judge.json", "judge", id="other-file"),
    ],
)
def test_recording_name_is_what_cassette_file_was_given(path: str, name: str) -> None:
    from cassettes._file_names import cassette_file, recording_name

    assert recording_name(path) == name
    if path.endswith(".cassette.json"):
        assert cassette_file(Path(path).parent, name) == Path(path)


def test_the_reads_section_round_trips_and_an_unknown_version_is_refused(tmp_path: Path) -> None:
    from cassettes._cassette_writer import save_cassette
    from cassettes._reads import InvocationReads, Read, ReadsRecording

    reads = ReadsRecording(
        invocations=[
            InvocationReads(
                invocation_id="e-1",
                zone="Asia/Tokyo",
                readers={
                    "model:a#0": [
                        Read(kind="clock", value=1_700_000_000_123_456_789),
                        Read(kind="random", value=0.5),
                        Read(kind="uuid4", value="0" * 32),
                    ],
                    "tool:t#0": [Read(kind="bits", value=2**70), Read(kind="bytes", value="00ff")],
                },
            )
        ]
    )
    path = save_cassette(
        make_cassette([make_exchange()]).model_copy(update={"reads": reads}), tmp_path / "c.json"
    )
    for lazy in (False, True):
        loaded = load_cassette(path, lazy=lazy).reads
        assert loaded == reads
        assert (
            loaded is not None
            and type(loaded.invocations[0].readers["model:a#0"][1].value) is float
        )
    plain = save_cassette(make_cassette([make_exchange()]), tmp_path / "plain.json")
    assert "reads" not in json.loads(plain.read_text())  # a cassette without reads is as before
    assert load_cassette(plain).reads is None
    document = json.loads(path.read_text())
    document["reads"]["format_version"] = 2
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=r"reads\.format_version.*Upgrade rec"):
        load_cassette(path)
