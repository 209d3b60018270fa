"""Outputs on a read-only file system: one line, exit 2, before any work."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rec.cli import main

pytestmark = pytest.mark.faults


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            ["start", "--out", "{ro}/rec", "--", sys.executable, "-c", "pass"], id="start-out"
        ),
        pytest.param(["start", "--out", "{ro}"], id="start-out-existing"),
        pytest.param(
            ["replay", "an_agent", "{tmp}/x.evalset.json", "--junit", "{ro}/j.xml"],
            id="replay-junit",
        ),
        pytest.param(
            ["replay", "an_agent", "{tmp}/x.evalset.json", "--results", "{ro}/res"],
            id="replay-results",
        ),
        pytest.param(
            ["score", "{tmp}/a.json", "{tmp}/b.json", "--junit", "{ro}/j.xml"], id="score-junit"
        ),
        pytest.param(["import", "{tmp}/s.json", "--out", "{ro}/evals"], id="import-out"),
        pytest.param(
            ["replay", "an_agent", "{tmp}/x.evalset.json", "--html", "{ro}/r.html"],
            id="replay-html",
        ),
        pytest.param(
            ["score", "{tmp}/a.json", "{tmp}/b.json", "--html", "{ro}/r.html"], id="score-html"
        ),
        pytest.param(
            ["score", "{tmp}/a.json", "{tmp}/b.json", "--record-judge", "{ro}/judge"],
            id="score-record-judge",
        ),
    ],
)
def test_a_read_only_output_is_one_line_and_exit_2(
    read_only_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    argv = [a.format(ro=read_only_folder, tmp=tmp_path) for a in args]
    code = main(argv)
    text = capsys.readouterr().err.strip()
    assert code == 2, text
    assert text.count("\n") == 0 and "Traceback" not in text, text
    assert "Read-only file system" in text, text
