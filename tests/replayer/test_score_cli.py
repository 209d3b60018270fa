"""`rec score` through click: exit statuses, JSON, JUnit parsed back, --results loaded by ADK."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from google.adk.evaluation.eval_result import EvalSetResult as AdkEvalSetResult

from cassettes._evalset import save_evalset
from rec._score import score_command
from rec.cli import main

from .evalsets import evalset, invocation


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    want = evalset(
        {
            "ok": [
                invocation("weather?", [("get_weather", {"city": "Paris"})], "It is sunny in Paris")
            ],
            "bad": [invocation("book", [("book", {"n": 2})], "Booked two seats for you")],
        }
    )
    same = evalset(
        {
            "ok": [
                invocation("weather?", [("get_weather", {"city": "Paris"})], "It is sunny in Paris")
            ],
            "bad": [invocation("book", [("book", {"n": 2})], "Booked two seats for you")],
        }
    )
    wrong = evalset(
        {
            "ok": [
                invocation("weather?", [("get_weather", {"city": "Paris"})], "It is sunny in Paris")
            ],
            "bad": [invocation("book", [("book", {"n": 3})], "Sorry, sold out")],
        }
    )
    paths = tmp_path / "expected.evalset.json", tmp_path / "same.json", tmp_path / "wrong.json"
    for model, path in zip((want, same, wrong), paths, strict=False):
        save_evalset(model, path)
    return paths


def test_all_passed_exit_0(files: tuple[Path, Path, Path]) -> None:
    result = CliRunner().invoke(score_command, [str(files[0]), str(files[1])])
    assert result.exit_code == 0, result.output
    assert "2 passed, 0 failed" in result.output


def test_failure_exit_1_with_table_under_80_columns(files: tuple[Path, Path, Path]) -> None:
    result = CliRunner().invoke(
        score_command, [str(files[0]), str(files[2])], env={"COLUMNS": "80"}
    )
    assert result.exit_code == 1
    assert "FAILED  bad" in result.output
    assert "book(n=2)" in result.output and "book(n=3)" in result.output
    assert "tool_trajectory_avg_score: 0 is below the threshold 1" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80


def test_json_is_eval_set_result(files: tuple[Path, Path, Path]) -> None:
    result = CliRunner().invoke(score_command, [str(files[0]), str(files[2]), "--json"])
    doc = json.loads(result.output)
    cases = {c["eval_id"]: c for c in doc["eval_case_results"]}
    assert cases["ok"]["final_eval_status"] == 1 and cases["bad"]["final_eval_status"] == 2
    metric = cases["bad"]["overall_eval_metric_results"][0]
    assert {"metric_name", "threshold", "score", "eval_status"} <= set(metric)
    assert cases["bad"]["eval_metric_result_per_invocation"][0]["eval_metric_results"]


def test_junit_and_results(files: tuple[Path, Path, Path], tmp_path: Path) -> None:
    junit, results = tmp_path / "out" / "junit.xml", tmp_path / "history"
    CliRunner().invoke(
        score_command,
        [str(files[0]), str(files[2]), "--junit", str(junit), "--results", str(results)],
    )
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1"
    by_name = {c.get("name"): c for c in suite.findall("testcase")}
    assert by_name["ok"].find("failure") is None
    failure = by_name["bad"].find("failure")
    assert failure is not None and "book(n=3)" in (failure.text or "")
    props = {p.get("name"): p.get("value") for p in by_name["bad"].iter("property")}
    assert props["tool_trajectory_avg_score"].startswith("score=0.0 threshold=1.0")

    (written,) = results.glob("*.evalset_result.json")
    adk = AdkEvalSetResult.model_validate_json(written.read_text())
    assert [c.final_eval_status.value for c in adk.eval_case_results] == [1, 2]


def test_config_beside_expected_is_used(files: tuple[Path, Path, Path]) -> None:
    (files[0].parent / "test_config.json").write_text(
        '{"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "ignore_args": true}}}'
    )
    result = CliRunner().invoke(score_command, [str(files[0]), str(files[2])])
    assert result.exit_code == 0, result.output


def test_a_case_no_metric_judges_is_not_a_pass(files: tuple[Path, Path, Path]) -> None:
    """Criteria that name no metric judge nothing: every case fails with the reason (and
    the same files pass once a metric is named), never exit 0 on cases nothing judged."""
    config = files[0].parent / "test_config.json"
    config.write_text('{"criteria": {}}')
    result = CliRunner().invoke(score_command, [str(files[0]), str(files[1])])
    assert result.exit_code == 1, result.output
    assert "0 passed, 2 failed" in result.output
    assert "no metric judges this case" in result.output
    config.write_text('{"criteria": {"tool_trajectory_avg_score": 1.0}}')
    result = CliRunner().invoke(score_command, [str(files[0]), str(files[1])])
    assert result.exit_code == 0, result.output


def test_invocation_count_mismatch_is_a_case_failure(tmp_path: Path) -> None:
    save_evalset(
        evalset({"c": [invocation(reply="a"), invocation(reply="b")]}), tmp_path / "e.json"
    )
    save_evalset(evalset({"c": [invocation(reply="a")]}), tmp_path / "a.json")
    result = CliRunner().invoke(score_command, [str(tmp_path / "e.json"), str(tmp_path / "a.json")])
    assert result.exit_code == 1
    assert "1 invocations in the actual case, 2 expected" in result.output


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            '{"criteria": {"respons_match_score": 1}}',
            'Did you mean "response_match_score"',
            id="bad-config",
        ),
        pytest.param(None, "eval set not found", id="missing-file"),
    ],
)
def test_input_errors_exit_2(
    files: tuple[Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    config: str | None,
    message: str,
) -> None:
    args = ["score", str(files[0]), str(files[1])]
    if config is None:
        args = ["score", str(tmp_path / "nope.json"), str(files[1])]
    else:
        (tmp_path / "c.json").write_text(config)
        args += ["--config", str(tmp_path / "c.json")]
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_failed_eval_exit_1_through_main(files: tuple[Path, Path, Path]) -> None:
    assert main(["score", str(files[0]), str(files[2])]) == 1


def test_a_cassette_given_as_an_eval_set_is_named_as_such(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cassettes._cassette_writer import save_cassette
    from tests.factories import make_cassette

    cassette = save_cassette(make_cassette(2), tmp_path / "oslo.cassette.json")
    assert main(["score", str(files[0]), str(cassette)]) == 2
    err = capsys.readouterr().err
    assert f"{cassette}: this is a cassette" in err and err.count("\n") == 1
