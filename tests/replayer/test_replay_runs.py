"""Runs that span several eval sets, and `--record-missing` growing a recording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cassettes._cassette import load_cassette
from rec.cli import main
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.travel_brain import travel_brain
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel
from tests.factories import add_stale_exchange


def _rec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _rec_live(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, str]:
    """``rec replay TRAVEL_AGENT ARGS --upstream STANDIN`` with a key, against a fresh stand-in."""
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        monkeypatch.setenv("TRAVEL_RATES_URL", f"{api.url}/rates")
        return _rec(capsys, "replay", str(TRAVEL_AGENT), *args, "--upstream", api.url)


def test_one_run_replays_every_eval_set_in_a_folder(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    loopback_only: object,
) -> None:
    # ADK caches each agent's model client per event loop: every eval set of a run must be
    # served from the same proxy, or the second one would talk to a closed port.
    record_travel(tmp_path, [("What's the weather in Tokyo?",)], name="tokyo")
    record_travel(tmp_path, [("What's the weather in Rome?",)], name="rome")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    code, output = _rec(capsys, "replay", str(TRAVEL_AGENT), str(tmp_path))
    assert code == 0, output
    assert output.count("1 passed, 0 failed") == 2, output
    assert output.rstrip().endswith("PASSED: 2 of 2 cases passed in 2 eval sets"), output


def test_record_missing_extends_the_recording_then_replays_offline(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    evalset = record_travel(tmp_path, [("What's the weather in Tokyo?",)], name="trip")
    extra = record_travel(tmp_path / "other", [("What's the weather in Rome?",)], name="more")
    merged = json.loads(evalset.read_text())
    merged["eval_cases"] += json.loads(extra.read_text())["eval_cases"]
    evalset.write_text(json.dumps(merged, indent=2))
    before = len(load_cassette(tmp_path / "trip.cassette.json").exchanges)

    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    code, output = _rec(capsys, "replay", str(TRAVEL_AGENT), str(evalset))
    assert code == 1 and "1 passed, 1 failed" in output, output  # the Rome case is not recorded

    code, output = _rec_live(capsys, monkeypatch, str(evalset), "--record-missing")
    assert code == 0, output
    after = load_cassette(tmp_path / "trip.cassette.json").exchanges
    assert len(after) > before
    assert FAKE_API_KEY not in (tmp_path / "trip.cassette.json").read_text()

    monkeypatch.delenv("GOOGLE_API_KEY")
    code, output = _rec(capsys, "replay", str(TRAVEL_AGENT), str(evalset))
    assert code == 0 and "2 passed, 0 failed" in output, output


def test_mode_flags_that_disagree_are_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = _rec(
        capsys, "replay", str(TRAVEL_AGENT), str(tmp_path), "--mode", "record", "--live"
    )
    assert code == 2
    assert "choose one mode, not live and record" in output


def test_mode_record_writes_the_recording_anew(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    evalset = record_travel(tmp_path, [("What's the weather in Tokyo?",)], name="trip")
    cassette = tmp_path / "trip.cassette.json"
    add_stale_exchange(cassette)
    code, output = _rec_live(capsys, monkeypatch, str(evalset), "--mode", "record")
    assert code == 0, output
    urls = [e.request.url for e in load_cassette(cassette).exchanges]
    assert urls and not any("gemini-stale" in url for url in urls)
