"""Recorded tokens, calls, latency and cost in every report, read from the cassette.

The capital agent is recorded against a stand-in returning fixed ``usageMetadata``; the
recorded timing is then set in the cassette (a recorded delay is a number there), so the
figures the replay reports are the recording's, whatever the replay itself took.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import load_cassette
from cassettes._cassette_writer import save_cassette
from rec.cli import main
from rec.standin.replies import Reply
from tests.agents.adk_recording import CAPITAL_AGENT, USAGE, record_adk
from tests.factories import usage_reply

AGENT = CAPITAL_AGENT


def _answer(request: object) -> Reply:
    return usage_reply({"text": "The capital is Paris."}, usage=USAGE)


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """Two turns, one model call each, each recorded as taking 1.2 s."""
    from tests.agents.capital import agent

    evalset = record_adk(
        tmp_path,
        agent.root_agent,
        [("What is the capital of France?", "And of Italy?")],
        responder=_answer,
        app_name="capital",
        name="capitals",
    )
    cassette_path = tmp_path / "capitals.cassette.json"
    cassette = load_cassette(cassette_path)
    for exchange in cassette.exchanges:
        exchange.duration_ms = 1200.0
    save_cassette(cassette, cassette_path)
    return evalset


def _replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["replay", str(AGENT), *args, "--workers", "1"])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _case(results: Path) -> dict[str, Any]:
    [file] = results.glob("*.evalset_result.json")
    [case] = json.loads(file.read_text())["eval_case_results"]
    return case  # type: ignore[no-any-return]


@pytest.mark.usefixtures("loopback_only")
def test_recorded_figures_per_turn_and_case_in_console_json_and_junit(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, junit, html = tmp_path / "results", tmp_path / "junit.xml", tmp_path / "r.html"
    code, output = _replay(
        capsys, str(recorded), "--results", str(results), "--junit", str(junit),
        "--html", str(html),
    )  # fmt: skip
    assert code == 0, output
    # gemini-2.0-flash: 60 prompt x $0.10 + 40 cached x $0.025 + 10 output x $0.40 per million
    per_call = (60 * 0.10 + 40 * 0.025 + 10 * 0.40) / 1e6
    rows = [line.split() for line in output.splitlines()]
    assert [
        "1",
        "1",
        "0",
        "100",
        "7",
        "3",
        "40",
        "1.2",
        "s",
        "1.2",
        "s",
        f"${per_call:.6f}",
    ] in rows
    assert ["all", "2", "0", "200", "14", "6", "80", "1.2", "s", "2.4", "s"] == next(
        r[:11] for r in rows if r and r[0] == "all"
    )
    usage = _case(results)["usage"]
    assert usage["first_chunk_seconds"] == pytest.approx(1.2)
    assert usage["latency_seconds"] == pytest.approx(2.4)
    assert usage["cost_usd"] == pytest.approx(2 * per_call)
    assert [t["prompt_tokens"] for t in usage["turns"]] == [100, 100]
    assert usage["thoughts_tokens"] == 6 and usage["cached_tokens"] == 80
    xml = junit.read_text()
    assert '<property name="rec.first_chunk_seconds" value="1.200" />' in xml
    assert f'<property name="rec.cost_usd" value="{2 * per_call:.6f}" />' in xml
    page = html.read_text()
    table = next(line for line in output.splitlines() if line.strip().startswith("all"))
    assert "Recorded usage" in page and table.strip() in page


@pytest.mark.usefixtures("loopback_only")
def test_a_model_without_a_price_costs_unknown_never_0(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"taken": "2026-01-01", "models": {"other-model": {
        "prompt": 1.0, "output": 2.0}}}))  # fmt: skip
    results, junit = tmp_path / "results", tmp_path / "junit.xml"
    code, output = _replay(
        capsys, str(recorded), "--prices", str(prices), "--results", str(results),
        "--junit", str(junit),
    )  # fmt: skip
    assert code == 0, output
    assert "cost unknown (gemini-2.0-flash): give its price with --prices FILE" in output
    assert "$0.000000" not in output
    usage = _case(results)["usage"]
    assert "cost_usd" not in usage and usage["unpriced"] == ["gemini-2.0-flash"]
    assert '<property name="rec.cost_usd" value="unknown" />' in junit.read_text()


@pytest.mark.usefixtures("loopback_only")
def test_a_bad_price_table_is_an_input_error(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"taken": "2026-01-01", "models": {"m": {"prompt": 1}}}))
    code, output = _replay(capsys, str(recorded), "--prices", str(prices))
    assert code == 2, output
    assert f"{prices}:models.m.output: Field required" in output
