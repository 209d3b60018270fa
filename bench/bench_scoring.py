"""Score 10,000 invocations with both built-in metrics: rec vs ADK's evaluators, same inputs.

Run: python bench/bench_scoring.py [--invocations N]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from _measure import verdict
from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

from cassettes._eval_config import DEFAULT_EVAL_CONFIG
from cassettes._evalset import EvalCase, EvalSet, IntermediateData, Invocation, dump_evalset
from cassettes._genai_types import Content, FunctionCall, Part
from replayer._score import score_evalset
from replayer._scoring.metrics import response_match_scores, tool_trajectory_scores

WORDS = (
    "the weather in Paris is sunny and warm today with light winds running connected "
    "booking flights hotels 東京 天気 สวัสดี привет 🙂 agreed generously flies"
).split()


def _invocation(rng: random.Random) -> Invocation:
    calls = [
        FunctionCall(name=rng.choice("fgh"), args={"city": rng.choice(WORDS), "n": 1})
        for _ in range(rng.randint(0, 3))
    ]
    reply = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
    return Invocation(
        user_content=Content(role="user", parts=[Part(text="hi")]),
        final_response=Content(role="model", parts=[Part(text=reply)]),
        intermediate_data=IntermediateData(tool_uses=calls),
    )


def _evalset(rng: random.Random, cases: int, per_case: int) -> EvalSet:
    return EvalSet(
        eval_set_id="bench",
        eval_cases=[
            EvalCase(eval_id=f"c{i}", conversation=[_invocation(rng) for _ in range(per_case)])
            for i in range(cases)
        ],
    )


def _best(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invocations", type=int, default=10_000)
    parser.add_argument("--per-case", type=int, default=10)
    options = parser.parse_args()
    cases = options.invocations // options.per_case
    rng = random.Random(0)
    want, got = _evalset(rng, cases, options.per_case), _evalset(rng, cases, options.per_case)
    adk_want = AdkEvalSet.model_validate_json(dump_evalset(want))
    adk_got = AdkEvalSet.model_validate_json(dump_evalset(got))
    specs = DEFAULT_EVAL_CONFIG.metrics()

    def adk() -> None:
        for w, g in zip(adk_want.eval_cases, adk_got.eval_cases, strict=False):
            TrajectoryEvaluator(
                eval_metric=EvalMetric(
                    metric_name="tool_trajectory_avg_score",
                    criterion=ToolTrajectoryCriterion(threshold=1.0),
                )
            ).evaluate_invocations(g.conversation, w.conversation)
            RougeEvaluator(
                EvalMetric(metric_name="response_match_score", threshold=0.8)
            ).evaluate_invocations(g.conversation, w.conversation)

    def rec_scorers() -> None:
        for w, g in zip(want.eval_cases, got.eval_cases, strict=False):
            tool_trajectory_scores(g.conversation or [], w.conversation or [], specs[0])
            response_match_scores(g.conversation or [], w.conversation or [])

    def rec_full() -> None:
        score_evalset(want, got, DEFAULT_EVAL_CONFIG)

    rows = [
        ("ADK evaluators (Trajectory + Rouge)", _best(adk)),
        ("rec scorers (same metrics)", _best(rec_scorers)),
        ("rec score_evalset (+ EvalSetResult)", _best(rec_full)),
    ]
    total = cases * options.per_case
    print(f"{total} invocations ({cases} cases x {options.per_case}), best of 3")
    print(f"{'':38} {'seconds':>8} {'inv/s':>10} {'vs ADK':>7}")
    for label, seconds in rows:
        print(f"{label:38} {seconds:8.3f} {total / seconds:10.0f} {rows[0][1] / seconds:6.1f}x")
    floor = f"ADK evaluators {rows[0][1]:.3f} s"
    for label, seconds in rows[1:]:
        verdict(f"{label} / ADK's time", f"{seconds / rows[0][1]:.3f}x", floor, None, None)


if __name__ == "__main__":
    main()
