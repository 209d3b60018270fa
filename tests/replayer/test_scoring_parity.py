"""rec's scorers against ADK's own evaluators on the same inputs: floats must be equal."""

from __future__ import annotations

import json
import statistics
from typing import Any

import pytest
from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet
from google.adk.evaluation.final_response_match_v1 import (
    RougeEvaluator,
    _calculate_rouge_1_scores,
)
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassettes._eval_config import parse_eval_config
from cassettes._eval_result import EvalStatus
from cassettes._evalset import dump_evalset, parse_evalset
from replayer._score import score_evalset
from replayer._scoring.response_match import rouge1_fmeasure

from .evalsets import evalset, invocation

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0]),
    st.sampled_from(["x", "y", ""]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from("pq"), inner, max_size=2)
    ),
    max_leaves=4,
)
args = st.one_of(st.none(), st.dictionaries(st.sampled_from("abc"), values, max_size=2))
call = st.tuples(st.sampled_from(["f", "g", "transfer_to_agent"]), args)
calls = st.lists(call, max_size=4)


@st.composite
def trajectory_pairs(draw: Any) -> tuple[list[Any], list[Any]]:
    """Expected calls and an actual list derived from them (so matches happen often)."""
    expected = draw(calls)
    actual = list(expected)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["insert", "drop", "swap", "mutate", "none"]))
        if op == "insert":
            actual.insert(draw(st.integers(0, len(actual))), draw(call))
        elif op == "drop" and actual:
            actual.pop(draw(st.integers(0, len(actual) - 1)))
        elif op == "swap" and len(actual) > 1:
            i = draw(st.integers(0, len(actual) - 2))
            actual[i], actual[i + 1] = actual[i + 1], actual[i]
        elif op == "mutate" and actual:
            i = draw(st.integers(0, len(actual) - 1))
            actual[i] = (actual[i][0], draw(args))
    return expected, actual


def _both(sets: Any) -> tuple[Any, Any]:
    """The same JSON file loaded by rec and by ADK (so both see decoded JSON)."""
    text = dump_evalset(sets)
    return parse_evalset(text), AdkEvalSet.model_validate_json(text)


MATCH_TYPES = ["EXACT", "IN_ORDER", "ANY_ORDER"]


@SETTINGS
@given(
    turns=st.lists(trajectory_pairs(), min_size=1, max_size=3),
    match_type=st.sampled_from(MATCH_TYPES),
    ignore_args=st.booleans(),
    threshold=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_tool_trajectory_equals_adk(
    turns: list[Any], match_type: str, ignore_args: bool, threshold: float
) -> None:
    want, _ = _both(evalset({"c": [invocation(calls=e) for e, _ in turns]}))
    got, adk_got = _both(evalset({"c": [invocation(calls=a) for _, a in turns]}))
    adk_want = AdkEvalSet.model_validate_json(dump_evalset(want))
    criterion = {"threshold": threshold, "match_type": match_type, "ignore_args": ignore_args}
    config = parse_eval_config(json.dumps({"criteria": {"tool_trajectory_avg_score": criterion}}))
    ours = score_evalset(want, got, config).eval_case_results[0]

    evaluator = TrajectoryEvaluator(
        eval_metric=EvalMetric(
            metric_name="tool_trajectory_avg_score",
            criterion=ToolTrajectoryCriterion(**criterion),
        )
    )
    theirs = evaluator.evaluate_invocations(
        adk_got.eval_cases[0].conversation, adk_want.eval_cases[0].conversation
    )
    metric = ours.overall_eval_metric_results[0]
    assert metric.score == theirs.overall_score
    assert metric.eval_status.value == theirs.overall_eval_status.value
    per = [r.eval_metric_results[0].score for r in ours.eval_metric_result_per_invocation]
    assert per == [r.score for r in theirs.per_invocation_results]


WORDS = [
    "running",
    "runs",
    "ran",
    "runner",
    "connection",
    "connected",
    "connects",
    "generously",
    "the",
    "a",
    "is",
    "cats",
    "cat",
    "happily",
    "flies",
    "flying",
    "agreed",
    "Paris",
    "42",
    "3.14",
    "don't",
    "e-mail",
    "naïve",
    "café",
    "Straße",
    "東京",
    "天気",
    "こんにちは",
    "カタカナ",
    "한국어",
    "ภาษาไทย",
    "สวัสดีครับ",
    "ລາວ",
    "ខ្មែរ",
    "မြန်မာ",
    "привет",
    "мир",
    "Погода",
    "🙂",
    "👍🏽",
    "ﬁne",
    "①",
    "Ⅻ",
    ",",
    ".",
    "!",
    "?",
    "—",
    "(",
    ")",
    "\n",
    "\t",
    "",
]
texts = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),
    st.lists(st.sampled_from(WORDS), max_size=8).map("".join),
    st.text(max_size=40),
)


@SETTINGS
@given(candidate=texts, reference=texts)
def test_rouge1_equals_adk(candidate: str, reference: str) -> None:
    assert rouge1_fmeasure(candidate, reference) == (
        _calculate_rouge_1_scores(candidate, reference).fmeasure
    )


@pytest.mark.parametrize(
    ("candidate", "reference"),
    [
        pytest.param("", "", id="both-empty"),
        pytest.param("The cats are running", "the cat ran", id="stemming"),
        pytest.param("東京の天気は晴れ", "東京は晴れです", id="cjk"),
        pytest.param("สวัสดีครับ", "สวัสดีค่ะ", id="thai"),
        pytest.param("Погода хорошая", "погода плохая", id="cyrillic"),
        pytest.param("🙂 ok", "ok 🙂", id="emoji"),
    ],
)
def test_rouge1_examples(candidate: str, reference: str) -> None:
    assert rouge1_fmeasure(candidate, reference) == (
        _calculate_rouge_1_scores(candidate, reference).fmeasure
    )


@SETTINGS
@given(
    pairs=st.lists(st.tuples(texts, texts), min_size=1, max_size=4),
    threshold=st.sampled_from([0.0, 0.5, 0.8]),
)
def test_response_match_case_equals_adk(pairs: list[tuple[str, str]], threshold: float) -> None:
    want, adk_want = _both(evalset({"c": [invocation(reply=e) for e, _ in pairs]}))
    got, adk_got = _both(evalset({"c": [invocation(reply=a) for _, a in pairs]}))
    config = parse_eval_config(json.dumps({"criteria": {"response_match_score": threshold}}))
    ours = score_evalset(want, got, config).eval_case_results[0].overall_eval_metric_results[0]
    theirs = RougeEvaluator(
        EvalMetric(metric_name="response_match_score", threshold=threshold)
    ).evaluate_invocations(adk_got.eval_cases[0].conversation, adk_want.eval_cases[0].conversation)
    assert ours.score == theirs.overall_score
    assert ours.eval_status.value == theirs.overall_eval_status.value


def test_several_runs_use_statistics_mean() -> None:
    want = evalset({"c": [invocation(reply="a b c"), invocation(reply="d e f g")]})
    runs = [
        evalset({"c": [invocation(reply="a b"), invocation(reply="d e")]}),
        evalset({"c": [invocation(reply="a x c"), invocation(reply="d e f g h")]}),
        evalset({"c": [invocation(reply="z"), invocation(reply="d")]}),
    ]
    config = parse_eval_config('{"criteria": {"response_match_score": 0.1}}')
    result = score_evalset(want, runs, config).eval_case_results[0]
    expected = statistics.mean(
        rouge1_fmeasure(
            run.eval_cases[0].conversation[i].final_response.parts[0].text,
            want.eval_cases[0].conversation[i].final_response.parts[0].text,
        )
        for run in runs
        for i in range(2)
    )
    assert result.overall_eval_metric_results[0].score == expected
    assert result.final_eval_status is EvalStatus.PASSED
