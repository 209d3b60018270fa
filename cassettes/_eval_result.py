"""ADK-compatible EvalSetResult models (``*.evalset_result.json``, ADK's eval history).

Field for field ADK 2.13's ``google.adk.evaluation.eval_result`` models: snake_case on
the way out, both casings on the way in, statuses as integers (1 passed, 2 failed, 3 not
evaluated, 4 informational), so ADK tooling loads what rec writes. rec adds two fields ADK
ignores on load: ``EvalCaseResult.failure_reasons``, the plain-language reasons a case
did not pass (a metric that could not run, a different number of invocations...), and
``EvalCaseResult.duration_seconds``, the wall time its runs took.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from cassettes._eval_status import EvalStatus
from cassettes._evalset import Invocation

__all__ = [
    "EvalCaseResult",
    "EvalMetric",
    "EvalMetricResult",
    "EvalMetricResultPerInvocation",
    "EvalSetResult",
    "EvalStatus",
    "dump_eval_set_result",
    "save_eval_set_result",
]


class _ResultModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        arbitrary_types_allowed=True,
        defer_build=True,  # built on first use: `rec check` never needs results
    )


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
    user_id: str | None = None
    failure_reasons: list[str] = Field(default_factory=list)
    """Why the case did not pass, in words (rec only; ADK ignores it on load)."""
    duration_seconds: float | None = None
    """The wall time the case's runs took, in seconds (rec only; ADK ignores it on load);
    None when rec did not run the case (``rec score`` of recorded invocations)."""
    left_recording: str | None = None
    """``rec replay --mode auto``: where the case's run left its recording (the turn and
    model request, and what differed), from which the model was called and recorded;
    None when the recording answered every request (rec only; ADK ignores it on load)."""


class EvalSetResult(_ResultModel):
    """The verdict on one eval set (ADK's ``EvalSetResult``)."""

    eval_set_result_id: str
    eval_set_result_name: str | None = None
    eval_set_id: str
    eval_case_results: list[EvalCaseResult] = Field(default_factory=list)
    creation_timestamp: float = 0.0

    @property
    def passed(self) -> bool:
        """True iff no case failed."""
        return all(c.final_eval_status != EvalStatus.FAILED for c in self.eval_case_results)


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
