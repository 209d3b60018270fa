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
    cassette = load_cassette(evalset.with_name("evening_routine.cassette.json"))
    recorded = sum(e.origin is None for e in cassette.exchanges)  # not the tools' own calls
    html = tmp_path / "report.html"
    argv = ["replay", "--workers", "1", "--num-runs", runs, "--html", str(html)]
    assert main([*argv, str(example), str(evalset)]) == 0
    # The usage table's last row: "all", then the model calls.
    said = re.findall(r"\n +all +(\d+) ", html.read_text(encoding="utf-8"))
    assert said == [str(recorded)], said


@pytest.mark.parametrize("shard", ["1/2", "2/2"])
def test_a_shards_html_report_has_no_empty_eval_set_block(
    shard: str, tmp_path: Path, loopback_only: object
) -> None:
    """home_assistant has two eval sets of one case each: each shard's report shows one."""
    example = ROOT / "examples" / "home_assistant"
    html = tmp_path / "report.html"
    argv = ["replay", "--workers", "1", "--shard", shard, "--html", str(html)]
    assert main([*argv, str(example), str(example / "recordings")]) == 0
    assert html.read_text(encoding="utf-8").count('<section class="evalset">') == 1
