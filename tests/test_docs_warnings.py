"""docs/recording.md has a row for each warning about a recording that cannot replay."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("source", "said"),
    [
        pytest.param(
            "recorder/_traffic/_server.py",
            "the client closed the connection before the response ended",
            id="client-aborted-stream",
        ),
        pytest.param(
            "recorder/_importers/adk_session.py",
            "started (a saved session resumed in adk web), so their model calls are not",
            id="resumed-adk-web-session",
        ),
        pytest.param(
            "replayer/_local_run.py",
            "the case was recorded for app {recorded!r}, not for the agent being replayed",
            id="app-name-mismatch",
        ),
    ],
)
def test_docs_row_for_each_recording_warning(source: str, said: str) -> None:
    """The warning's words are the code's, and its row says what the user sees and does."""
    code = (ROOT / source).read_text(encoding="utf-8")
    assert said in code, f"{source} no longer says {said!r}: update docs/recording.md"
    words = said.replace("{recorded!r}", "'A'")
    rows = [
        line
        for line in (ROOT / "docs" / "recording.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and words in line
    ]
    assert len(rows) == 1, words
    cells = [cell.strip() for cell in rows[0].strip("|").split(" | ")]
    assert len(cells) == 3 and all(cells), rows[0]


def test_what_to_commit_names_every_file_a_recording_keeps_in_dot_rec(tmp_path: Path) -> None:
    """Each file rec keeps in ``.rec/`` for a recording has a row saying whether to delete it."""
    from cassettes._file_names import cassette_file, side_index_file
    from recorder._recording_state import RecordingPaths

    paths = RecordingPaths(tmp_path, "NAME")
    kept = [
        getattr(paths, name)
        for name in ("journal", "capture", "tools", "mcp", "live", "reads", "state", "owner_lock")
    ]
    kept.append(side_index_file(cassette_file(tmp_path, "NAME")))
    page = (ROOT / "docs" / "recording.md").read_text(encoding="utf-8")
    section = page.split("## What to commit", 1)[1].split("\n#", 1)[0]
    for file in kept:
        assert file.parent == tmp_path / ".rec", file
        assert f"`{file.name}`" in section, f"docs/recording.md: no row for .rec/{file.name}"
