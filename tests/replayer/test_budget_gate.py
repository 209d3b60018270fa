"""``--baseline`` and ``--budget``: a change compared with its baseline, gated by a budget.

The capital agent is recorded against a stand-in returning fixed ``usageMetadata``; its
changed version (tests/agents/capital_lookup) looks Italy's capital up with a tool, one
more model call in turn 2. Both are real ADK agents replayed offline through rec's CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rec.cli import main
from tests.agents.adk_recording import capital_answers, record_adk

AGENTS = Path(__file__).resolve().parents[1] / "agents"
USAGE = {"promptTokenCount": 100, "candidatesTokenCount": 7, "totalTokenCount": 107}
TURNS = [("What is the capital of France?", "And of Italy?")]
_ANSWER = capital_answers(USAGE)


def _record(folder: Path, name: str) -> Path:
    module = __import__(f"tests.agents.{name}.agent", fromlist=["root_agent"])
    return record_adk(
        folder, module.root_agent, TURNS, responder=_ANSWER, app_name="capital", name="capitals"
    )


def _rec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The unchanged agent's results (``--results``), its recording beside them."""
    evalset = _record(tmp_path / "before", "capital")
    results = tmp_path / "baseline"
    code, output = _rec(
        capsys, "replay", str(AGENTS / "capital"), str(evalset), "--results", str(results)
    )
    assert code == 0, output
    return results


def _gated(
    capsys: pytest.CaptureFixture[str], agent: str, evalset: Path, budget: Path, *extra: str
) -> tuple[int, str]:
    """``rec replay tests/agents/AGENT EVALSET --budget BUDGET EXTRA...``."""
    return _rec(
        capsys, "replay", str(AGENTS / agent), str(evalset), "--budget", str(budget), *extra
    )


def _budget(tmp_path: Path, document: object, name: str = "budget.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


@pytest.mark.usefixtures("loopback_only")
def test_one_more_model_call_fails_the_budget_naming_the_turn_and_growth(
    baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = _record(tmp_path / "after", "capital_lookup")
    budget = _budget(tmp_path, {"case": {"model_calls": "+0", "prompt_tokens": "+10%"}})
    html = tmp_path / "report.html"
    code, output = _gated(
        capsys, "capital_lookup", changed, budget, "--baseline", str(baseline), "--html", str(html)
    )
    assert code == 1, output
    assert "budget: turn 2: +1 model call (budget +0), +100 prompt tokens (budget +10%)" in output
    assert "turn 1:" not in output
    assert "parts from the baseline at turn 2" in output
    rows = [line.split() for line in output.splitlines()]
    assert ["model_calls", "2", "3", "+1", "model", "call"] in rows
    assert "parts from the baseline at turn 2" in html.read_text()


@pytest.mark.usefixtures("loopback_only")
def test_an_absolute_limit_names_the_figure_and_the_limit(
    baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = _record(tmp_path / "after", "capital_lookup")
    budget = _budget(
        tmp_path, {"case": {"model_calls": 2, "scores": {"response_match_score": 0.5}}}
    )
    code, output = _gated(capsys, "capital_lookup", changed, budget)
    assert code == 1, output
    assert "budget: 3 model calls (budget 2 model calls)" in output


@pytest.mark.usefixtures("loopback_only")
def test_the_unchanged_agent_passes_twice_with_the_same_output(
    baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evalset = tmp_path / "before" / "capitals.evalset.json"
    budget = _budget(
        tmp_path,
        {"case": {"model_calls": "+0", "prompt_tokens": "+10%", "cost_usd": 0.01},
         "suite": {"total_tokens": "+0%"}},
    )  # fmt: skip
    first = _gated(capsys, "capital", evalset, budget, "--baseline", str(baseline))
    second = _gated(capsys, "capital", evalset, budget, "--baseline", str(baseline))
    assert first[0] == 0, first[1]
    assert first == second
    assert "same calls and tokens as the baseline" in first[1]


@pytest.mark.usefixtures("loopback_only")
def test_a_recording_folder_is_a_baseline_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path / "before", "capital")
    changed = _record(tmp_path / "after", "capital_lookup")
    budget = _budget(tmp_path, {"case": {"model_calls": "+0"}})
    before = tmp_path / "before"
    code, output = _gated(capsys, "capital_lookup", changed, budget, "--baseline", str(before))
    assert code == 1, output
    assert "budget: turn 2: +1 model call (budget +0)" in output


@pytest.mark.parametrize(
    ("document", "extra", "expected"),
    [
        pytest.param(
            {"case": {"prompt_tokens": "+10%"}}, [], "a growth limit ('+N%') needs a baseline",
            id="growth-without-baseline",
        ),
        pytest.param(
            {"case": {"model_call": 3}}, [], "case.model_call: 'model_call' is not a figure rec "
            "computes. Did you mean 'model_calls'?", id="unknown-figure",
        ),
        pytest.param(
            {"case": {"cost_usd": 0.01}}, ["--prices", "PRICES"],
            "the budget limits cost_usd, which this run cannot compute (gemini-2.0-flash)",
            id="cost-without-a-price",
        ),
        pytest.param(
            {"case": {"model_calls": "lots"}}, [], "'lots' is not a limit", id="bad-limit"
        ),
    ],
)  # fmt: skip
@pytest.mark.usefixtures("loopback_only")
def test_a_budget_the_run_cannot_check_is_an_input_error(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    document: object,
    extra: list[str],
    expected: str,
) -> None:
    evalset = _record(tmp_path / "before", "capital")
    prices = _budget(tmp_path, {"taken": "2026-01-01", "models": {}}, "prices.json")
    extra = [str(prices) if a == "PRICES" else a for a in extra]
    budget = _budget(tmp_path, document)
    code, output = _gated(capsys, "capital", evalset, budget, *extra)
    assert code == 2, output
    assert expected in output


@pytest.mark.usefixtures("loopback_only")
def test_a_yaml_budget_reads_like_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("yaml")
    evalset = _record(tmp_path / "before", "capital")
    budget = tmp_path / "budget.yaml"
    budget.write_text("case:\n  model_calls: 1\n")
    code, output = _gated(capsys, "capital", evalset, budget)
    assert code == 1, output
    assert "budget: 2 model calls (budget 1 model call)" in output


@pytest.mark.usefixtures("loopback_only")
def test_a_recording_run_of_the_change_is_gated_against_the_baseline(
    baseline: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The change is run once against the model (--mode record; its new tool runs for real),
    compared and gated."""
    from rec.standin.replies import FAKE_API_KEY
    from rec.standin.server import StandinGemini

    candidate = tmp_path / "candidate"
    candidate.mkdir()
    evalset = candidate / "capitals.evalset.json"
    evalset.write_bytes((tmp_path / "before" / "capitals.evalset.json").read_bytes())
    budget = _budget(tmp_path, {"case": {"model_calls": "+0"}})
    with StandinGemini(_ANSWER) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        code, output = _gated(
            capsys, "capital_lookup", evalset, budget, "--mode", "record", "--live-tools",
            "--upstream", api.url, "--baseline", str(baseline),
        )  # fmt: skip
    assert code == 1, output
    assert "budget: turn 2: +1 model call (budget +0)" in output
    assert (candidate / "capitals.cassette.json").exists()
