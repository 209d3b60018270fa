"""ADK-compatible EvalSetResult models (``*.evalset_result.json``, ADK's eval history).

Field for field ADK 2.13's ``google.adk.evaluation.eval_result`` models: snake_case on
the way out, both casings on the way in, statuses as integers (1 passed, 2 failed, 3 not
evaluated, 4 informational), so ADK tooling loads what rec writes. rec adds two fields ADK
ignores on load: ``EvalCaseResult.failure_reasons``, the plain-language reasons a case
did not pass (a metric that could not run, a different number of invocations...),
``EvalCaseResult.duration_seconds``, the wall time its runs took, ``EvalCaseResult.usage``,
the recorded tokens, calls, latency and cost per turn, ``EvalCaseResult.takes``, the
verdict over a case's recorded takes, and ``EvalCaseResult.replayed_reads``, what its code
was served of its recorded reads of the clock, randomness and ids.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from cassettes._eval_enums import EvalStatus
from cassettes._evalset import EvalModel, Invocation

__all__ = [
    "FIGURES",
    "CaseTakes",
    "CaseUsage",
    "EvalCaseResult",
    "EvalMetric",
    "EvalMetricResult",
    "EvalMetricResultPerInvocation",
    "EvalSetResult",
    "EvalStatus",
    "Figures",
    "MethodResult",
    "MultiRunCaseSummary",
    "TurnUsage",
    "dump_eval_set_result",
    "save_eval_set_result",
]


class _ResultModel(EvalModel):
    # The EvalSet models' casing and strictness; built on first use (`rec check` never
    # needs results).
    model_config = ConfigDict(arbitrary_types_allowed=True)


class EvalMetric(_ResultModel):
    """A metric as configured (ADK's ``EvalMetric``)."""

    metric_name: str
    threshold: float | None = None
    criterion: dict[str, Any] | None = None
    """The criterion as ADK's ``BaseCriterion`` holds it."""
    custom_function_path: str | None = None


class EvalMetricResult(EvalMetric):
    """A metric's score and status (ADK's ``EvalMetricResult``)."""

    score: float | None = None
    eval_status: EvalStatus
    details: dict[str, Any] = Field(default_factory=dict)


class EvalMetricResultPerInvocation(_ResultModel):
    """All metric results of one invocation."""

    actual_invocation: Invocation
    expected_invocation: Invocation | None = None
    eval_metric_results: list[EvalMetricResult] = Field(default_factory=list)


FIGURES = (
    "model_calls",
    "tool_calls",
    "prompt_tokens",
    "candidates_tokens",
    "thoughts_tokens",
    "cached_tokens",
    "total_tokens",
    "first_chunk_seconds",
    "latency_seconds",
    "cost_usd",
)
"""Every figure a report shows and a budget may limit, in report order."""


class Figures(_ResultModel):
    """What a turn or a case used, as recorded (rec only; ADK ignores it on load)."""

    prompt_tokens: int = 0
    """Input tokens, cached ones included."""
    candidates_tokens: int = 0
    """Answer tokens, thoughts left out."""
    thoughts_tokens: int = 0
    """Reasoning tokens."""
    cached_tokens: int = 0
    """The part of the prompt read from a cache."""
    model_calls: int = 0
    tool_calls: int = 0
    first_chunk_seconds: float | None = None
    """Recorded seconds to the first chunk of the first model call (None: no call)."""
    latency_seconds: float = 0.0
    """Recorded seconds from the first model call's request to the last one's end."""
    cost_usd: float | None = None
    """List-price cost in US dollars; None when a model has no price (cost unknown)."""
    unpriced: list[str] = Field(default_factory=list)
    """The models with no price, which make the cost unknown."""
    no_usage: int = 0
    """Model calls whose response carried no usage fields (their tokens count 0)."""

    @property
    def total_tokens(self) -> int:
        """Prompt, candidates and thoughts tokens together."""
        return self.prompt_tokens + self.candidates_tokens + self.thoughts_tokens

    def figure(self, name: str) -> float | None:
        """The figure called ``name`` (one of :data:`FIGURES`)."""
        value = getattr(self, name)
        return None if value is None else float(value)


class TurnUsage(Figures):
    """One turn's figures."""

    turn: int
    """The 1-based turn (invocation)."""


class CaseUsage(Figures):
    """A case's figures (its first take's, when it has several) and each turn's."""

    turns: list[TurnUsage] = Field(default_factory=list)


class CaseTakes(_ResultModel):
    """The verdict over a case's recorded takes (rec only; ADK ignores it on load)."""

    takes: int
    """How many takes ran."""
    passed: list[int] = Field(default_factory=list)
    """The 1-based takes that passed."""
    pass_at_k: float
    """The chance that at least one of k takes passes (k = ``k``)."""
    pass_hat_k: float
    """The chance that all of k takes pass (pass^k)."""
    k: int
    verdict: Literal["stable", "flaky", "failing"]
    """stable: every take passed; failing: none did; flaky: some did."""
    rule: str
    """The rule the case's status followed, in words."""


class EvalCaseResult(_ResultModel):
    """The verdict on one eval case (ADK's ``EvalCaseResult``)."""

    eval_set_file: str | None = None
    eval_set_id: str = ""
    eval_id: str = ""
    final_eval_status: EvalStatus
    overall_eval_metric_results: list[EvalMetricResult] = Field(default_factory=list)
    eval_metric_result_per_invocation: list[EvalMetricResultPerInvocation] = Field(
        default_factory=list
    )
    session_id: str = ""
    session_details: dict[str, Any] | None = None
    """The session the run produced (ADK writes it; rec leaves it out)."""
    user_id: str | None = None
    eval_metric_results: list[Any] | None = None
    """ADK's deprecated (metric, result) pairs: loaded from ADK's files, never written."""
    repetition_index: int | None = None
    """The 0-based run among the runs of the same case (ADK 2.15; ADK's files hold one
    result per run)."""
    failure_reasons: list[str] = Field(default_factory=list)
    """Why the case did not pass, in words (rec only; ADK ignores it on load)."""
    duration_seconds: float | None = None
    """The wall time the case's runs took, in seconds (rec only; ADK ignores it on load);
    None when rec did not run the case (``rec score`` of recorded invocations)."""
    left_recording: str | None = None
    """``rec replay --mode auto``: where the case's run left its recording (the turn and
    model request, and what differed), from which the model was called and recorded;
    None when the recording answered every request (rec only; ADK ignores it on load)."""
    usage: CaseUsage | None = None
    """Recorded tokens, calls, latency and cost (rec only; ADK ignores it on load)."""
    takes: CaseTakes | None = None
    """The verdict over the case's takes when it has more than one (rec only)."""
    replayed_reads: str | None = None
    """What the case's code was served of its recorded reads of the clock, randomness and
    ids, in one line (``replayed reads: clock x3, uuid4 x1``); None when it read none of
    them (rec only; ADK ignores it on load)."""
    multi_run: str | None = None
    """How the case was judged on its runs by ``multi_run_config``, in one line (the whole
    verdict is in the set's ``multi_run_case_summaries``; rec only)."""


class MethodResult(_ResultModel):
    """How one cross-run rule judged a case's runs (ADK 2.15's ``MethodResult``)."""

    name: str
    """The method, e.g. ``mean_over_invocations`` or ``pass^3``."""
    value: float | None = None
    """Its value over the runs; None when the runs gave it none."""
    threshold: float | None = None
    """The value needed to pass; None for a rule that only reports."""
    status: EvalStatus
    note: str | None = None
    """What the value rests on, such as how many runs passed."""


class MultiRunCaseSummary(_ResultModel):
    """One case judged on all of its runs (ADK 2.15's ``MultiRunCaseSummary``)."""

    eval_set_id: str = ""
    eval_id: str = ""
    final_eval_status: EvalStatus
    """The case's status across all of its runs."""
    num_runs: int
    passed_runs: int
    failed_runs: int
    crashed_runs: int = 0
    """Runs that failed without any metric result."""
    not_evaluated_runs: int = 0
    pass_rate: float | None = None
    """Passed runs over decided (passed or failed) runs; None when none was decided."""
    overall_eval_metric_results: list[EvalMetricResult] = Field(default_factory=list)
    """One result per metric, aggregated across the runs."""
    metric_methods: dict[str, MethodResult] = Field(default_factory=dict)
    """How each metric was judged on the runs, by metric name."""
    cross_run_results: list[MethodResult] = Field(default_factory=list)
    """How each of ``multi_run_config.cross_run_criteria`` judged the runs, in order."""
    max_crashed_runs: int = 0


class EvalSetResult(_ResultModel):
    """The verdict on one eval set (ADK's ``EvalSetResult``)."""

    eval_set_result_id: str
    eval_set_result_name: str | None = None
    eval_set_id: str
    eval_case_results: list[EvalCaseResult] = Field(default_factory=list)
    multi_run_case_summaries: list[MultiRunCaseSummary] | None = None
    """Each case judged on all of its runs, when the eval config has ``multi_run_config``
    (ADK 2.15)."""
    creation_timestamp: float = 0.0

    @property
    def passed(self) -> bool:
        """True iff no case failed: a case with a cross-run summary by its summary (ADK
        keeps each run's own result beside it), any other by its result."""
        summaries = {s.eval_id: s for s in self.multi_run_case_summaries or []}
        statuses = [s.final_eval_status for s in summaries.values()]
        statuses += [
            c.final_eval_status for c in self.eval_case_results if c.eval_id not in summaries
        ]
        return all(status != EvalStatus.FAILED for status in statuses)

    def masked(self) -> EvalSetResult:
        """This result with every string in it masked (itself when nothing is), by
        :func:`cassettes._secret_shapes.mask_json`, the one masking walk."""
        from cassettes._secret_shapes import mask_json

        dumped = self.model_dump(mode="python", by_alias=False)
        masked = mask_json(dumped)
        return self if masked == dumped else EvalSetResult.model_validate(masked)


def dump_eval_set_result(result: EvalSetResult) -> str:
    """Serialise as ADK's eval history does (snake_case, indent 2, integer statuses)."""
    data = result.model_dump(mode="json", exclude_none=True)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")
_MAX_NAME = 200
"""Bytes of a result's name in its file name (file systems allow 255 in all)."""


def _file_name(name: str) -> str:
    """``name`` as a file name: separators and control characters as ``_`` (ADK replaces
    ``/``), and a long name cut, with a digest of the whole so names stay distinct."""
    safe = _UNSAFE.sub("_", name)
    if len(safe.encode("utf-8")) <= _MAX_NAME:
        return safe
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    cut = safe.encode("utf-8")[: _MAX_NAME - 17].decode("utf-8", "ignore")
    return f"{cut}-{digest}"


def save_eval_set_result(result: EvalSetResult, directory: str | Path) -> Path:
    """Write ``<directory>/<eval_set_result_name>.evalset_result.json`` atomically."""
    name = _file_name(result.eval_set_result_name or result.eval_set_result_id)
    from cassettes._atomic_write import write_atomic  # filelock: only when writing

    return write_atomic(
        Path(directory) / f"{name}.evalset_result.json", dump_eval_set_result(result)
    )
