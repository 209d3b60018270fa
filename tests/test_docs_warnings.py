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
