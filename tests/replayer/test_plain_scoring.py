"""A plain score (no pydantic) gives what the models' score gives, or steps aside.

``rec score A B`` with the console report alone reads a clean EvalSet and a simple config
without pydantic (``replayer._scoring.plain_*``). Each case here scores the same files
both ways, through the same scorers, and compares every score, status and reason, and the
report at several widths, character for character; inputs the plain path is not sure of
(a judge metric, a config ADK spells another way, a file the quick check does not pass)
answer None, so ``rec score`` takes the models, which name each problem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassettes._evalset import Invocation, save_evalset
from replayer._reports.console import render_report
from replayer._score import score_files, score_files_plain
from tests.factories import make_evalset, make_invocation
from tests.secret_corpus import SHAPES, secret_part

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KEY = dict(SHAPES)["google-api-key"]
URL_KEY = dict(SHAPES)["query-apikey"]


def _weather(text: str = "Sunny and 21 degrees in Paris.", city: str = "Paris") -> Invocation:
    return make_invocation(
        "What's the weather in Paris?",
        final_text=text,
        tool_calls=[("get_weather", {"city": city, "days": 2}), ("get_time", None)],
        tool_responses=[("get_weather", {"forecast": "sunny"})],
    )


def _write(folder: Path, name: str, cases: list[list[Invocation]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return save_evalset(make_evalset(cases), folder / f"{name}.evalset.json")


def _facts(result: Any) -> list[Any]:
    """Every score, status and reason of a result, in order."""
    return [
        (
            case.eval_id,
            case.final_eval_status,
            case.failure_reasons,
            case.user_id,
            [
                (m.metric_name, m.threshold, m.score, m.eval_status)
                for m in case.overall_eval_metric_results
            ],
            [
                [(m.metric_name, m.score, m.eval_status) for m in row.eval_metric_results]
                for row in case.eval_metric_result_per_invocation
            ],
        )
        for case in result.eval_case_results
    ]


def _same_both_ways(expected: Path, actual: list[Path], config: Path | None = None) -> str:
    plain = score_files_plain(expected, actual, config=config)
    assert plain is not None, "the plain path stepped aside"
    model = score_files(expected, actual, config=config)
    assert _facts(plain) == _facts(model)
    assert plain.passed == model.passed
    reports = [render_report(plain, width=w) for w in (40, 72, 100, 1000)]
    assert reports == [render_report(model, width=w) for w in (40, 72, 100, 1000)]
    return reports[-1]


ACTUALS: dict[str, list[list[Invocation]]] = {
    "same": [[_weather()], [_weather("Rainy in Rome.", "Rome"), _weather()]],
    "reply": [[_weather("Cloudy, 12 degrees.")], [_weather("Rainy in Rome.", "Rome"), _weather()]],
    "args": [[_weather(city="Lyon")], [_weather("Rainy in Rome.", "Rome"), _weather()]],
    "turns": [[_weather(), _weather()], [_weather("Rainy in Rome.", "Rome"), _weather()]],
    "missing": [[_weather()]],
    "secrets": [
        [_weather(f"Your key is {KEY}, see {URL_KEY}", city=KEY)],
        [_weather("Rainy in Rome.", "Rome"), _weather()],
    ],
    "unicode": [
        [_weather("東京は晴れ。ไทย café 21°C")],
        [_weather("Rainy in Rome.", "Rome"), _weather()],
    ],
}

CONFIGS: dict[str, dict[str, Any] | None] = {
    "defaults": None,
    "integers": {"criteria": {"tool_trajectory_avg_score": 1, "response_match_score": 1}},
    "in-order": {
        "criteria": {
            "tool_trajectory_avg_score": {"threshold": 0.5, "match_type": "IN_ORDER"},
            "response_match_score": {"threshold": 0.25},
        }
    },
    "names-only": {
        "criteria": {
            "tool_trajectory_avg_score": {
                "threshold": 1.0,
                "match_type": "ANY_ORDER",
                "ignore_args": True,
            }
        }
    },
    "reply-only": {"criteria": {"response_match_score": 0.9}},
}


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("actual", ACTUALS)
def test_plain_score_equals_the_models_score(actual: str, config: str, tmp_path: Path) -> None:
    expected = _write(tmp_path, "expected", ACTUALS["same"])
    got = _write(tmp_path / "runs", "actual", ACTUALS[actual])
    if CONFIGS[config] is not None:
        (tmp_path / "test_config.json").write_text(json.dumps(CONFIGS[config]))
    report = _same_both_ways(expected, [got])
    if actual == "secrets":
        assert KEY not in report and secret_part(URL_KEY) not in report
    several = _same_both_ways(expected, [got, expected, got])  # three runs: averaged
    assert "Eval set" in several


def test_plain_score_of_camel_case_and_events_files(tmp_path: Path) -> None:
    """A file in camelCase, and the InvocationEvents shape ADK writes, read plainly too."""
    example = EXAMPLES / "production_bug" / "evals" / "thermostat_bug.evalset.json"
    document = json.loads(example.read_text())

    def camel(value: Any, key: str = "") -> Any:
        if isinstance(value, dict) and key not in ("args", "response"):
            spelled = {"eval_id": "evalId", "user_content": "userContent"}
            spelled |= {"final_response": "finalResponse", "function_call": "functionCall"}
            spelled |= {"intermediate_data": "intermediateData"}
            spelled |= {"invocation_events": "invocationEvents"}
            return {spelled.get(k, k): camel(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [camel(v) for v in value]
        return value

    changed = camel(document)
    changed["eval_cases"][0]["conversation"][0]["finalResponse"]["parts"][0]["text"] = "Cold."
    actual = tmp_path / "actual.evalset.json"
    actual.write_text(json.dumps(changed))
    assert "evalId" in actual.read_text()
    report = _same_both_ways(example, [actual], config=example.with_name("test_config.json"))
    assert "FAILED" in report


@pytest.mark.parametrize(
    "example", sorted(EXAMPLES.rglob("*.evalset.json")), ids=lambda p: p.stem.split(".")[0]
)
def test_plain_score_of_every_example_or_none(example: Path) -> None:
    """Each example scores the same both ways, or (a scenario, a judge metric) steps aside."""
    plain = score_files_plain(example, [example])
    if plain is None:
        return
    _same_both_ways(example, [example])


def _config(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    "config",
    [
        {"criteria": {"tool_trajectory_avg_scor": 1.0}},  # a typo: the models name it
        {"criteria": {"response_match_score": "0.8"}},  # a string: the strict config refuses
        {"criteria": {"response_match_score": True}},
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "matchType": "EXACT"}}},
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "exact"}}},
        {"criteria": {"tool_trajectory_avg_score": {"match_type": "EXACT"}}},
        {"criteria": {"response_match_score": {"threshold": 0.8, "match_type": "EXACT"}}},
        {"criteria": {"final_response_match_v2": 0.8}},  # an LLM judge: google-adk
        {"criteria": {"tool_trajectory_f1": 0.8}},
        {"criteria": {}},
        {"criteria": {"response_match_score": 0.8}, "custom_metrics": {}},
        [1, 2],
    ],
    ids=str,
)
def test_a_config_the_plain_path_is_not_sure_of_takes_the_models(
    config: object, tmp_path: Path
) -> None:
    expected = _write(tmp_path, "expected", ACTUALS["same"])
    _config(tmp_path, config)
    assert score_files_plain(expected, [expected]) is None


def test_an_eval_set_the_quick_check_is_not_sure_of_takes_the_models(tmp_path: Path) -> None:
    expected = _write(tmp_path, "expected", ACTUALS["same"])
    document = json.loads(expected.read_text())
    document["eval_cases"][0]["surprise"] = 1
    unknown = tmp_path / "unknown.evalset.json"
    unknown.write_text(json.dumps(document))
    broken = tmp_path / "broken.evalset.json"
    broken.write_text("{")
    for actual in (unknown, broken, tmp_path / "absent.evalset.json", tmp_path / "test.json"):
        assert score_files_plain(expected, [actual]) is None
        assert score_files_plain(actual, [expected]) is None
    assert score_files_plain(expected, [expected]) is not None
