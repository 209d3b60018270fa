"""`rec show` and the EvalSet extraction of real recordings, pinned byte for byte.

The example recordings are real ADK traffic: two agents of home_assistant handing over
(``security_agent``), a bookshop agent's tool calls, LiteLLM's OpenAI-wire calls, a
google-genai program's automatic function calling. What ``rec show`` prints (text and
``--json``) and the EvalSet ``rec stop`` would extract from them are compared with files
kept beside this test, so a change made for speed in threading, extraction, masking or
layout cannot change a byte unnoticed. After a change meant to alter the output, rewrite
the files with ``REC_PIN_REWRITE=1 pytest tests/replayer/test_show_pinned.py`` and review
their diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cassettes._cassette import load_cassette
from cassettes._evalset import dump_evalset
from cassettes._extraction import evalset_from_exchanges
from rec.cli import main

ROOT = Path(__file__).resolve().parents[2]
PINNED = Path(__file__).resolve().parent / "pinned"
RECORDINGS = [
    "examples/home_assistant/recordings/evening_routine.cassette.json",
    "examples/home_assistant/recordings/leaving_home.cassette.json",
    "examples/bookshop/recordings/orders.cassette.json",
    "examples/litellm_weather/recordings/trip.cassette.json",
    "examples/genai_afc/recordings/fahrenheit.cassette.json",
]


def _check(name: str, actual: str) -> None:
    path = PINNED / name
    if os.environ.get("REC_PIN_REWRITE") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from what is pinned"


def _show(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["show", *args]) == 0
    out, _ = capsys.readouterr()
    return out


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda r: Path(r).name.split(".")[0])
def test_show_and_extraction_are_byte_for_byte_as_pinned(
    recording: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the timeline names the path as given
    monkeypatch.delenv("COLUMNS", raising=False)  # text for a pipe: PIPE_WIDTH wide
    stem = Path(recording).name.split(".")[0]
    _check(f"{stem}.show.txt", _show([recording], capsys))
    _check(f"{stem}.show.json", _show(["--json", recording], capsys))
    exchanges = load_cassette(ROOT / recording).exchanges
    evalset = evalset_from_exchanges(exchanges, eval_set_id=stem, app_name="app")
    _check(f"{stem}.evalset.json", dump_evalset(evalset))


def test_every_pinned_recording_is_a_multi_turn_agent_recording() -> None:
    """The pins cover what they claim: the home_assistant recording hands over between two
    agents, and every recording has a model call with a tool call."""
    evening = (PINNED / "evening_routine.show.txt").read_text(encoding="utf-8")
    assert "agents: home_assistant, security_agent" in evening
    for recording in RECORDINGS:
        stem = Path(recording).name.split(".")[0]
        assert "      -> " in (PINNED / f"{stem}.show.txt").read_text(encoding="utf-8")
