"""The HTML report's per-case counts are the recording's, however often a case ran."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cassettes._cassette import load_cassette
from rec.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("runs", ["1", "2"])
def test_html_recorded_model_calls_are_the_recordings_under_num_runs(
    runs: str, tmp_path: Path, loopback_only: object
) -> None:
    example = ROOT / "examples" / "home_assistant"
    evalset = example / "recordings" / "evening_routine.evalset.json"
    recorded = len(load_cassette(evalset.with_name("evening_routine.cassette.json")).exchanges)
    html = tmp_path / "report.html"
    argv = ["replay", "--workers", "1", "--num-runs", runs, "--html", str(html)]
    assert main([*argv, str(example), str(evalset)]) == 0
    said = re.findall(r"Recorded: (\d+) model call\(s\)", html.read_text(encoding="utf-8"))
    assert said == [str(recorded)], said
