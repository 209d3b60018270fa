"""The capture files beside a recording: their names, and lines written and read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes._evalset_writer import adk_capture_path
from recorder._capture_files import (
    append_json_line,
    append_text,
    read_json_lines,
)
from recorder._mcp_capture import mcp_journal_path
from recorder._recording import RecordingPaths
from recorder._recording_state import CaptureFiles
from recorder._tool_traffic import tool_traffic_path
from tests.factories import make_cassette


@pytest.mark.parametrize(
    ("capture", "kind", "expected"),
    [
        pytest.param("out/.rec/demo.adk.jsonl", "tools", "out/.rec/demo.tools.jsonl", id="capture"),
        pytest.param("out/.rec/a.b.adk.jsonl", "mcp", "out/.rec/a.b.mcp.jsonl", id="dotted-name"),
        pytest.param("elsewhere/log.jsonl", "mcp", "elsewhere/log.mcp.jsonl", id="other-name"),
    ],
)
def test_capture_companion(capture: str, kind: str, expected: str) -> None:
    assert CaptureFiles(Path(capture)).companion(kind) == Path(expected)


def test_the_recording_and_the_plugin_name_the_same_files(tmp_path: Path) -> None:
    paths = RecordingPaths(tmp_path, "demo")
    capture = adk_capture_path(tmp_path, "demo")
    assert paths.tools == tool_traffic_path(capture) == tmp_path / ".rec" / "demo.tools.jsonl"
    assert paths.mcp == mcp_journal_path(capture) == tmp_path / ".rec" / "demo.mcp.jsonl"


def test_a_torn_line_is_skipped_and_counted(tmp_path: Path) -> None:
    file = tmp_path / ".rec" / "x.journal.jsonl"
    exchanges = make_cassette(2).exchanges
    assert append_json_line(file, exchanges[0], what="journal")
    with file.open("a") as handle:
        handle.write('{"id": 1, "requ')  # a crash mid-write
    lines, torn = read_json_lines(file, type(exchanges[0]), what="journal")
    assert [e.id for e in lines] == [exchanges[0].id] and torn == 1
    assert read_json_lines(tmp_path / "missing.jsonl", type(exchanges[0]), what="journal") == (
        [],
        0,
    )


def test_capture_files_are_created_private_and_keep_a_chosen_mode(tmp_path: Path) -> None:
    file = tmp_path / "out" / ".rec" / "demo.adk.jsonl"
    assert append_text(file, "{}\n", what="ADK capture")
    assert file.stat().st_mode & 0o777 == 0o600
    assert file.parent.stat().st_mode & 0o777 == 0o700
    file.chmod(0o640)  # the user's choice survives later appends
    assert append_text(file, "{}\n", what="ADK capture")
    assert file.stat().st_mode & 0o777 == 0o640
    assert file.read_text() == "{}\n{}\n"


def test_a_capture_file_that_cannot_be_written_is_a_warning_not_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    assert not append_text(blocker / "demo.adk.jsonl", "{}\n", what="ADK capture")
    assert "cannot write the ADK capture" in caplog.text
