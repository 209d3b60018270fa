"""One mode enum for the CLI, the library, the pytest plugin and ``REC_MODE``."""

from __future__ import annotations

import pytest

from cassettes._errors import InputError
from cassettes._record_mode import RecordMode


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param("replay", RecordMode.REPLAY, id="replay"),
        pytest.param("record", RecordMode.RECORD, id="record-means-record"),
        pytest.param("auto", RecordMode.AUTO, id="auto"),
        pytest.param("live", RecordMode.LIVE, id="live"),
        pytest.param("record-missing", RecordMode.AUTO, id="rec-replay-flag-name"),
        pytest.param(" Auto ", RecordMode.AUTO, id="case-and-space"),
        pytest.param(RecordMode.LIVE, RecordMode.LIVE, id="already-a-mode"),
    ],
)
def test_parse(given: str, expected: RecordMode) -> None:
    assert RecordMode.parse(given, source="REC_MODE") is expected


def test_an_unknown_mode_names_the_source_the_closest_mode_and_all_modes() -> None:
    with pytest.raises(InputError) as caught:
        RecordMode.parse("recrod", source="REC_MODE")
    assert str(caught.value) == (
        "REC_MODE: unknown mode 'recrod'. "
        'Did you mean "record"? Use one of: replay, record, auto, live'
    )


def test_modes_print_as_their_names() -> None:
    assert [str(mode) for mode in RecordMode] == ["replay", "record", "auto", "live"]
    assert f"{RecordMode.AUTO} mode" == "auto mode"
    assert RecordMode.names() == ("replay", "record", "auto", "live")


def test_the_cli_offers_the_enums_modes() -> None:
    """The CLI spells the choices out (declaring a command imports nothing): they must be
    RecordMode's values, in `rec replay --mode` all of them, in `rec start --mode` the two a
    recorder runs."""
    import click

    from rec.cli import cli

    def choices(command: str) -> list[str]:
        found = cli.get_command(click.Context(cli), command)
        assert found is not None
        params = {p.name: p for p in found.params}
        kind = params["mode"].type
        assert isinstance(kind, click.Choice)
        return [str(c) for c in kind.choices]

    assert choices("replay") == list(RecordMode.names())
    assert choices("start") == [RecordMode.RECORD.value, RecordMode.AUTO.value]
