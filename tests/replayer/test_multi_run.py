"""The eval config's ``multi_run_config`` (ADK 2.15): each case run several times and judged
on all of its runs, by ADK's own aggregator.

A real ADK agent (tests/agents/capital) is recorded five times per case against a stand-in
that answers France right three times of five (Paris, London, Paris, London, Paris) and
Italy right every time; ``rec replay`` then judges the recorded runs offline. The parity
test runs ADK's own eval service (``LocalEvalService``, as ``adk eval`` does) on the same
agent against the same stand-in, and compares ADK's saved verdicts with rec's.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cassettes._eval_result import EvalSetResult
from rec.cli import main
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.adk_recording import CAPITAL_AGENT, WaveringCapitals, adk_eval, record_adk

CRITERIA = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
EFFICIENCY = (
    "tool_call_count_v1",
    "inference_call_count_v1",
    "token_usage_v1",
    "invocation_duration_v1",
)


QUESTIONS = [("What is the capital of France?",), ("What is the capital of Italy?",)]


def _rec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


def _config(folder: Path, multi_run: dict[str, Any]) -> Path:
    path = folder / "test_config.json"
    path.write_text(json.dumps({"criteria": CRITERIA, "multi_run_config": multi_run}))
    return path


def _record_five(
    folder: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    multi_run: dict[str, Any],
) -> tuple[Path, int, str]:
    """The two cases recorded five times each by ``rec replay --mode record`` under the
    config ``multi_run`` (its ``num_runs`` says how many: no ``--num-runs``); the eval set,
    and the record run's exit status and output."""
    from tests.agents.capital import agent

    evalset = record_adk(
        folder, agent.root_agent, QUESTIONS, responder=WaveringCapitals(), app_name="capital",
        name="capitals",
    )  # fmt: skip
    _config(folder, multi_run)
    with StandinGemini(WaveringCapitals()) as api:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        code, output = _rec(
            capsys, "replay", str(CAPITAL_AGENT), str(evalset), "--mode", "record",
            "--upstream", api.url, "--workers", "1",
        )  # fmt: skip
    return evalset, code, output


@pytest.fixture
def five_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Five recorded runs of each case, the record run judged by the config's rules."""
    rules = {"num_runs": 5, "cross_run_criteria": [{"method": "pass_rate", "threshold": 0.9}]}
    evalset, code, output = _record_five(tmp_path, capsys, monkeypatch, rules)
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert code == 1, output  # France: pass_rate 0.6 < 0.9
    assert "5 runs: 3 passed, 2 failed" in output
    return evalset


def _result(folder: Path) -> EvalSetResult:
    [file] = folder.glob("*.evalset_result.json")
    return EvalSetResult.model_validate_json(file.read_bytes())


@pytest.mark.usefixtures("loopback_only")
@pytest.mark.parametrize(
    ("rule", "code", "france"),
    [
        pytest.param({"method": "pass_rate", "threshold": 0.6}, 0, 1, id="pass-rate-met"),
        pytest.param({"method": "pass_rate", "threshold": 0.7}, 1, 2, id="pass-rate-missed"),
        pytest.param({"method": "pass_at_k", "k": 2, "threshold": 0.9}, 0, 1, id="pass@2-met"),
        pytest.param({"method": "pass_hat_k", "k": 2, "threshold": 0.5}, 1, 2, id="pass^2-missed"),
    ],
)
def test_a_replay_judges_each_case_on_its_recorded_runs(
    five_runs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rule: dict[str, Any],
    code: int,
    france: int,
) -> None:
    # Metrics judged by pass counts too, so no metric's mean decides the case alone.
    _config(five_runs.parent, {"cross_run_scoring": {"method": "pass_rate", "threshold": 0.0},
                               "cross_run_criteria": [rule]})  # fmt: skip
    results = tmp_path / "results"
    got, output = _rec(
        capsys, "replay", str(CAPITAL_AGENT), str(five_runs), "--workers", "1",
        "--results", str(results),
    )  # fmt: skip
    assert got == code, output
    summaries = {s.eval_id: s for s in _result(results).multi_run_case_summaries or []}
    by_country = {("france" if "france" in k else "italy"): s for k, s in summaries.items()}
    assert by_country["france"].final_eval_status == france
    assert (by_country["france"].passed_runs, by_country["france"].failed_runs) == (3, 2)
    assert by_country["italy"].final_eval_status == 1
    assert by_country["italy"].pass_rate == 1.0
    [cross] = by_country["france"].cross_run_results
    assert cross.threshold == rule["threshold"]
    case = next(c for c in _result(results).eval_case_results if "france" in c.eval_id)
    assert case.final_eval_status == france
    assert case.multi_run is not None and case.multi_run in output


@pytest.mark.usefixtures("loopback_only")
def test_pass_at_k_drawing_more_runs_than_there_are_is_refused(
    five_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(five_runs.parent, {"cross_run_criteria": [{"method": "pass_at_k", "k": 6}]})
    code, output = _rec(capsys, "replay", str(CAPITAL_AGENT), str(five_runs), "--workers", "1")
    assert code == 2, output
    assert "test_config.json:multi_run_config.cross_run_criteria[0]: k=6" in output
    assert "--num-runs" in output


@pytest.mark.usefixtures("loopback_only")
def test_custom_methods_are_refused_with_the_file_and_the_fix(
    five_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(
        five_runs.parent,
        {"custom_methods": {"p25": {"code_config": {"name": "m.p25"}, "uses_scores": True}}},
    )
    code, output = _rec(capsys, "replay", str(CAPITAL_AGENT), str(five_runs), "--workers", "1")
    assert code == 2, output
    assert "test_config.json:multi_run_config: custom_methods (p25) is not run by rec" in output
    code, output = _rec(capsys, "check", str(config))
    assert code == 1, output  # rec check's status for a file with problems
    assert "custom_methods (p25) is not run by rec" in output


PARITY_RULES = {
    "num_runs": 5,
    "cross_run_scoring_by_metric": {"response_match_score": "min_over_runs"},
    "cross_run_criteria": [
        {"method": "pass_rate", "threshold": 0.5},
        {"method": "pass_at_k", "k": 2, "threshold": 0.9},
        {"method": "pass_hat_k", "k": 3},
    ],
}
"""A mean, a worst run, a pass rate, pass@2 and a pass^3 that only reports."""


def _value(metric: str, value: float | None) -> float | None:
    """A metric's value; none for the wall-clock duration, whose presence and status are
    compared (a replay's turns are not ADK's run's, and ``rec replay`` does not time them)."""
    return None if metric == "invocation_duration_v1" else value


def _verdicts(result: EvalSetResult) -> dict[str, Any]:
    """Per case: its cross-run status, run counts, every rule's value, threshold and status,
    and each configured metric's aggregated score."""
    return {
        s.eval_id: {
            "status": s.final_eval_status,
            "runs": (s.num_runs, s.passed_runs, s.failed_runs, s.crashed_runs, s.pass_rate),
            "rules": [(m.name, m.value, m.threshold, m.status) for m in s.cross_run_results],
            "metrics": {
                name: (m.name, _value(name, m.value), m.threshold, m.status)
                for name, m in s.metric_methods.items()
            },
            "scores": {
                m.metric_name: (_value(m.metric_name, m.score), m.eval_status)
                for m in s.overall_eval_metric_results
            },
        }
        for s in result.multi_run_case_summaries or []
    }


@pytest.mark.usefixtures("loopback_only")
def test_rec_replay_gives_adks_own_verdicts_on_the_same_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    evalset, code, output = _record_five(tmp_path, capsys, monkeypatch, PARITY_RULES)
    config = tmp_path / "test_config.json"
    assert code == 1, output  # France: pass@2 0.9 is met, pass_rate 0.6 too; min run 0.75
    from tests.agents.capital import agent

    adk_runs = adk_eval(
        agent.root_agent, evalset, config, responder=WaveringCapitals(), app_name="capital",
        num_runs=5, results=tmp_path / "adk",
    )  # fmt: skip
    assert len(adk_runs) == 10  # two cases, five runs each
    monkeypatch.delenv("GOOGLE_API_KEY")
    [adk_file] = (tmp_path / "adk").rglob("*.evalset_result.json")
    adk = EvalSetResult.model_validate_json(adk_file.read_bytes())  # ADK's file loads in rec

    results = tmp_path / "results"
    code, output = _rec(  # each case in its own worker: the summaries are merged
        capsys, "replay", str(CAPITAL_AGENT), str(evalset), "--workers", "2",
        "--results", str(results),
    )  # fmt: skip
    assert code == 1, output
    ours, theirs = _verdicts(_result(results)), _verdicts(adk)
    assert ours == theirs
    summaries = _result(results).multi_run_case_summaries or []
    assert [s.eval_id for s in summaries] == [c.eval_id for c in _result(results).eval_case_results]
    france = next(v for k, v in ours.items() if "france" in k)
    assert france["status"] == 2 and france["runs"] == (5, 3, 2, 0, 0.6)
    assert [r[0] for r in france["rules"]] == ["pass_rate", "pass@2", "pass^3"]
    assert france["metrics"]["response_match_score"][0] == "min_over_runs"
    informational = [name for name, (_, status) in france["scores"].items() if status == 4]
    assert informational == list(EFFICIENCY)  # ADK's, added to every eval, never gating


def _runs_written(folder: Path, replies: list[str]) -> list[Path]:
    """The expected eval set (Paris) and one actual file per run, answering ``replies``."""
    from tests.factories import make_evalset, make_invocation

    def evalset(reply: str) -> str:
        built = make_evalset([[make_invocation("Capital of France?", final_text=reply)]])
        return built.model_dump_json(exclude_none=True)

    paths = [folder / "expected.evalset.json"]
    paths[0].write_text(evalset("The capital is Paris."))
    for index, reply in enumerate(replies):
        paths.append(folder / f"run{index}.evalset.json")
        paths[-1].write_text(evalset(reply))
    return paths


@pytest.mark.parametrize(
    ("threshold", "code"),
    [pytest.param(0.6, 0, id="two-of-three-enough"), pytest.param(0.7, 1, id="not-enough")],
)
def test_rec_score_judges_each_actual_file_as_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], threshold: float, code: int
) -> None:
    replies = ["The capital is Paris.", "The capital is London.", "The capital is Paris."]
    expected, *actual = _runs_written(tmp_path, replies)
    _config(tmp_path, {"cross_run_scoring": {"method": "pass_rate", "threshold": 0.0},
                       "cross_run_criteria": [{"method": "pass_rate",
                                               "threshold": threshold}]})  # fmt: skip
    results = tmp_path / "results"
    got, output = _rec(capsys, "score", str(expected), *map(str, actual), "--results", str(results))
    assert got == code, output
    [summary] = _result(results).multi_run_case_summaries or []
    assert (summary.num_runs, summary.passed_runs, summary.failed_runs) == (3, 2, 1)
    assert summary.final_eval_status == (1 if code == 0 else 2)
    assert "3 runs: 2 passed, 1 failed" in output


def test_rec_score_refuses_a_num_runs_the_files_do_not_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected, *actual = _runs_written(tmp_path, ["The capital is Paris."] * 2)
    _config(tmp_path, {"num_runs": 3})
    code, output = _rec(capsys, "score", str(expected), *map(str, actual))
    assert code == 2, output
    assert "multi_run_config.num_runs is 3, but 2 run(s) were given" in output


@pytest.mark.usefixtures("loopback_only")
@pytest.mark.parametrize(("threshold", "fails"), [(0.6, False), (0.7, True)])
def test_agent_evaluator_judges_by_the_config_on_its_num_runs(
    five_runs: Path, threshold: float, fails: bool
) -> None:
    from rec import AgentEvaluator

    _config(five_runs.parent, {"cross_run_scoring": {"method": "pass_rate", "threshold": 0.0},
                               "cross_run_criteria": [{"method": "pass_rate",
                                                       "threshold": threshold}]})  # fmt: skip
    evaluate = AgentEvaluator.evaluate(
        "tests.agents.capital", str(five_runs), num_runs=5, print_detailed_results=False
    )
    if not fails:
        asyncio.run(evaluate)
        return
    with pytest.raises(AssertionError, match=r"failed on its runs \(multi_run_config\)"):
        asyncio.run(evaluate)


@pytest.mark.usefixtures("loopback_only")
def test_an_adk_without_the_aggregator_refuses_the_key(
    five_runs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # An older google-adk: the aggregator's module does not import.
    aggregator = "google.adk.evaluation._eval_case_result_multi_run_aggregator"
    monkeypatch.setitem(sys.modules, aggregator, None)
    code, output = _rec(capsys, "replay", str(CAPITAL_AGENT), str(five_runs), "--workers", "1")
    assert code == 2, output
    assert "multi_run_config needs google-adk's multi-run aggregator" in output
    assert "google-adk 2.15 or later" in output


@pytest.mark.parametrize(("allowed", "code"), [(0, 1), (1, 0)])
def test_a_run_without_the_case_is_a_crashed_run_that_max_crashed_runs_may_allow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], allowed: int, code: int
) -> None:
    expected, *actual = _runs_written(tmp_path, ["The capital is Paris."] * 3)
    emptied = json.loads(actual[2].read_text())
    actual[2].write_text(json.dumps({**emptied, "eval_cases": []}))
    _config(tmp_path, {"max_crashed_runs": allowed})
    got, output = _rec(capsys, "score", str(expected), *map(str, actual))
    assert got == code, output
    assert f"3 runs: 2 passed, 0 failed, 1 crashed (at most {allowed} may)" in output
