"""Takes: the recorded runs of one case, each replayed and judged on its own.

``rec replay --mode record --num-runs K`` (or a script that runs the same conversation
K times under ``rec start``) leaves K recorded runs of a case in one cassette. Nothing in
the cassette names a run: the runs are counted by the case's opening request (its first
user turn alone, answered with a success), which every run sends once. Replay answers the
n-th identical request with the n-th recording, so the takes of a case replay one after
another, in recording order, each getting its own answers.

Each take is scored on its own, and the case's status follows the verdict rule
(:class:`cassettes._eval_config.TakesRule`): by default every take must pass; with
``min_pass_at_k`` the case passes when pass@k reaches it. The report gives pass@k, pass^k
and whether the case is stable (every take passed), flaky (some did) or failing (none did).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from cassettes._cassette import Exchange, JsonBody
from cassettes._eval_config import TakesRule
from cassettes._eval_enums import EvalStatus
from cassettes._eval_result import CaseTakes, EvalCaseResult
from cassettes._evalset import EvalCase
from cassettes._first_user import first_user_text
from cassettes._matching import canonical_request, request_key
from cassettes._usage import is_model_call
from replayer._streaming_mode import case_text

__all__ = ["judge_takes", "pass_at_k", "pass_hat_k", "recorded_takes"]


_TURN_ROLES = ("user", "assistant", "tool")
"""OpenAI and Anthropic message roles that are turns of the conversation (not system)."""


def _opening(exchange: Exchange, text: str) -> bool:
    """Whether ``exchange`` is a successful model call whose only turn is ``text``."""
    body = exchange.request.body
    if exchange.response.status != 200 or not is_model_call(exchange):
        return False
    if not isinstance(body, JsonBody) or not isinstance(body.value, dict):
        return False
    value = body.value
    turns = value.get("contents")
    if not isinstance(turns, list):
        messages = value.get("messages")
        turns = (
            [m for m in messages if isinstance(m, dict) and m.get("role") in _TURN_ROLES]
            if isinstance(messages, list)
            else None
        )
    return isinstance(turns, list) and len(turns) == 1 and first_user_text(value) == text


def recorded_takes(
    cases: Sequence[EvalCase],
    found: Mapping[str, Sequence[Exchange]],
    *,
    suite: Sequence[EvalCase] = (),
) -> dict[str, int]:
    """Per case, how many takes of it the recordings hold (at least 1).

    Args:
        cases: the cases being replayed.
        found: per first user text, the recorded exchanges that may open it.
        suite: every case of the eval set (default: ``cases``): cases opening with the same
            words share the recordings of that opening, wherever they run (a worker process
            or a shard may hold only some of them).
    """
    sharing: dict[str, int] = {}
    for case in suite or cases:
        sharing[case_text(case)] = sharing.get(case_text(case), 0) + 1
    counts: dict[str, int] = {}
    for case in cases:
        text = case_text(case)
        keys: dict[str, int] = {}
        for exchange in found.get(text, ()) if text else ():
            if _opening(exchange, text):
                key = request_key(canonical_request(exchange.request))
                keys[key] = keys.get(key, 0) + 1
        counts[case.eval_id] = max(1, max(keys.values(), default=1) // sharing.get(text, 1))
    return counts


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k takes drawn from n (c of them passing) passes."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all of k takes drawn from n (c of them passing) pass (pass^k)."""
    return math.comb(c, k) / math.comb(n, k)


def _failed_metrics(result: EvalCaseResult) -> str:
    failed = [
        f"{m.metric_name}={'-' if m.score is None else f'{m.score:.3f}'}"
        for m in result.overall_eval_metric_results
        if m.eval_status is EvalStatus.FAILED
    ]
    if failed:
        return ", ".join(failed)
    return result.failure_reasons[0].splitlines()[0] if result.failure_reasons else "failed"


def judge_takes(takes: Sequence[EvalCaseResult], rule: TakesRule) -> EvalCaseResult:
    """One result for a case from its takes' results (in take order).

    The case shows the first failing take's details (else the first take's) and its status
    follows ``rule``; a reason names every take that failed and why.
    """
    n = len(takes)
    passed = [i + 1 for i, t in enumerate(takes) if t.final_eval_status is not EvalStatus.FAILED]
    c = len(passed)
    k = min(rule.k or n, n)
    at_k, hat_k = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    verdict: Literal["stable", "flaky", "failing"] = (
        "stable" if c == n else "failing" if c == 0 else "flaky"
    )
    if rule.min_pass_at_k is None:
        ok, words = c == n, "every take must pass"
    else:
        ok = at_k >= rule.min_pass_at_k - 1e-12
        words = f"pass@{k} >= {rule.min_pass_at_k:g}"
    shown = next((t for t in takes if t.final_eval_status is EvalStatus.FAILED), takes[0])
    reasons: list[str] = []
    if verdict != "stable":
        differing = "; ".join(
            f"take {i + 1}: {_failed_metrics(t)}"
            for i, t in enumerate(takes)
            if t.final_eval_status is EvalStatus.FAILED
        )
        reasons.append(
            f"{verdict}: {c} of {n} takes passed, pass@{k} {at_k:.2f}, pass^{k} {hat_k:.2f} "
            f"({words}). Takes that failed: {differing}"
        )
    summary = CaseTakes(
        takes=n, passed=passed, pass_at_k=at_k, pass_hat_k=hat_k, k=k, verdict=verdict, rule=words
    )
    status = EvalStatus.PASSED if ok else EvalStatus.FAILED
    detail = [] if ok else [r for r in shown.failure_reasons if r not in reasons]
    return shown.model_copy(
        update={
            "final_eval_status": status,
            "failure_reasons": reasons + detail,
            "takes": summary,
        }
    )
