"""The eval config (``test_config.json`` / ``eval_config.json``), read as ADK reads it, but strict.

Every form ADK 2.13 accepts loads here: ``criteria`` maps a metric name to a bare number
(the threshold) or an object with ``threshold``, ``match_type`` (``EXACT`` | ``IN_ORDER`` |
``ANY_ORDER``, case, ``-`` and space tolerant, or ADK's integers 0/1/2), ``ignore_args``,
judge options and rubrics; ``custom_metrics.<name>.code_config.name`` names a
``module.function``; keys load in snake_case and camelCase. With no file, ADK's defaults
apply (``tool_trajectory_avg_score`` 1.0, ``response_match_score`` 0.8).

Where ADK silently ignores a key it does not know (a misspelled ``match_typ`` leaves the
trajectory on EXACT without a word), rec raises :class:`InputError` naming the file, the
JSON path and the closest valid spelling.

rec adds metrics of its own, which never change ADK's numbers:

- ``tool_trajectory_rules_score``: ADK's trajectory algorithm plus the match types
  ``SUBSET`` (no unexpected calls) and ``SUPERSET`` and per-tool argument rules
  (``tool_args: {"tool": {"ignore": [...]} | {"only": [...]}}``).
- ``tool_trajectory_f1``: partial credit, the F1 of matched calls (same rules).
- ``final_session_state_match``: the case's final session state equals the expected one.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
)
from pydantic.alias_generators import to_camel

from cassettes import InputError, did_you_mean, parse_json, read_file

__all__ = [
    "ADK_METRICS",
    "DEFAULT_EVAL_CONFIG",
    "REC_METRICS",
    "CodeConfig",
    "Criterion",
    "CustomMetricConfig",
    "EvalConfig",
    "MatchType",
    "MetricSpec",
    "ToolArgRule",
    "find_eval_config",
    "load_eval_config",
    "parse_eval_config",
]

ADK_METRICS: tuple[str, ...] = (
    "tool_trajectory_avg_score",
    "response_evaluation_score",
    "response_match_score",
    "safety_v1",
    "final_response_match_v2",
    "rubric_based_final_response_quality_v1",
    "hallucinations_v1",
    "rubric_based_tool_use_quality_v1",
    "per_turn_user_simulator_quality_v1",
    "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality_v1",
    "rubric_based_multi_turn_trajectory_quality_v1",
    "tool_call_count_v1",
    "inference_call_count_v1",
    "token_usage_v1",
    "invocation_duration_v1",
)
"""Every metric name ADK 2.13 registers (``PrebuiltMetrics``)."""

REC_METRICS: tuple[str, ...] = (
    "final_session_state_match",
    "tool_trajectory_f1",
    "tool_trajectory_rules_score",
)
"""Deterministic metrics rec adds beside ADK's."""

_BASE = {"threshold", "include_intermediate_responses_in_final"}
_JUDGE = _BASE | {"judge_model_options"}
_REC_TRAJECTORY = _BASE | {"match_type", "ignore_args", "tool_args"}
_FIELDS_BY_METRIC: dict[str, set[str]] = {
    "tool_trajectory_avg_score": _BASE | {"match_type", "ignore_args"},
    "response_match_score": _BASE,
    "response_evaluation_score": _BASE,
    "safety_v1": _BASE,
    "final_response_match_v2": _JUDGE,
    "rubric_based_final_response_quality_v1": _JUDGE | {"rubrics"},
    "rubric_based_tool_use_quality_v1": _JUDGE | {"rubrics"},
    "rubric_based_multi_turn_trajectory_quality_v1": _JUDGE | {"rubrics"},
    "hallucinations_v1": _JUDGE | {"evaluate_intermediate_nl_responses"},
    "per_turn_user_simulator_quality_v1": _JUDGE | {"stop_signal"},
    "multi_turn_task_success_v1": _JUDGE,
    "multi_turn_trajectory_quality_v1": _JUDGE,
    "multi_turn_tool_use_quality_v1": _JUDGE,
    "tool_trajectory_rules_score": _REC_TRAJECTORY,
    "tool_trajectory_f1": _BASE | {"ignore_args", "tool_args"},
    "final_session_state_match": _BASE,
}
_ALL_CRITERION_FIELDS = set().union(*_FIELDS_BY_METRIC.values())
_JUDGE_OPTION_FIELDS = {"judge_model", "judge_model_config", "num_samples", "parallelism_limit"}
_TOP_FIELDS = {"criteria", "custom_metrics", "user_simulator_config", "live_model_config"}
_CUSTOM_FIELDS = {"code_config", "metric_info", "description"}
_TOOL_ARG_FIELDS = {"ignore", "only"}


class MatchType(enum.Enum):
    """How expected tool calls are compared with actual ones."""

    EXACT = 0
    """Same calls, same order, nothing extra (ADK)."""
    IN_ORDER = 1
    """Expected calls appear in order; extra calls allowed (ADK)."""
    ANY_ORDER = 2
    """Each expected call matches one actual call; extra calls allowed (ADK)."""
    SUBSET = 10
    """Each actual call matches one expected call: no unexpected calls (rec)."""
    SUPERSET = 11
    """Each expected call matches one actual call, in any order (rec)."""


_ADK_MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")


class _ConfigModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ToolArgRule(_ConfigModel):
    """Which arguments of one tool take part in the comparison (rec metrics only)."""

    ignore: list[str] = Field(default_factory=list)
    """Argument keys left out of the comparison."""
    only: list[str] | None = None
    """If set, only these argument keys are compared."""


class Criterion(_ConfigModel):
    """The object form of a criterion (ADK's criterion fields plus rec's ``tool_args``)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")
    threshold: float
    """Pass iff the metric's score is ``>=`` this."""
    match_type: MatchType = MatchType.EXACT
    """Trajectory match type."""
    ignore_args: bool = False
    """Compare tool names only."""
    tool_args: dict[str, ToolArgRule] = Field(default_factory=dict)
    """Per-tool argument rules (rec metrics only)."""
    include_intermediate_responses_in_final: bool = False
    judge_model_options: dict[str, Any] | None = None
    """Judge model options, handed to ADK as they are."""
    rubrics: list[Any] | None = None
    """Rubrics, handed to ADK as they are."""
    evaluate_intermediate_nl_responses: bool | None = None
    stop_signal: str | None = None

    @field_validator("match_type", mode="before")
    @classmethod
    def _match_type_by_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            normalized = value.strip().upper().replace("-", "_").replace(" ", "_")
            if normalized in MatchType.__members__:
                return MatchType[normalized]
        return value

    def to_adk_dict(self) -> dict[str, Any]:
        """The criterion as ADK's ``BaseCriterion`` would hold it (only what was given)."""
        data = self.model_dump(exclude_unset=True, exclude={"tool_args"})
        if "match_type" in data:
            data["match_type"] = self.match_type.name
        return data


class CodeConfig(_ConfigModel):
    """Where a custom metric function lives."""

    name: str
    """``module.function``."""


class CustomMetricConfig(_ConfigModel):
    """A metric implemented by a user function with ADK's custom-metric signature."""

    code_config: CodeConfig
    metric_info: dict[str, Any] | None = None
    description: str = ""


class MetricSpec(BaseModel):
    """One metric to compute, resolved from the config (ADK's ``EvalMetric``)."""

    name: str
    threshold: float
    criterion: Criterion
    custom_function_path: str | None = None
    config_path: Path | None = None
    """The config file the metric came from (custom metric modules are searched near it)."""


class EvalConfig(_ConfigModel):
    """A whole eval config."""

    criteria: dict[str, float | Criterion] = Field(default_factory=dict)
    """Metric name -> threshold or criterion object."""
    custom_metrics: dict[str, CustomMetricConfig] | None = None
    user_simulator_config: dict[str, Any] | None = None
    """Carried for ADK; rec does not run user simulation."""
    live_model_config: dict[str, Any] | None = None
    _source: Path | None = PrivateAttr(default=None)

    def metrics(self) -> list[MetricSpec]:
        """The metrics in config order, as ADK's ``get_eval_metrics_from_config`` builds them."""
        specs: list[MetricSpec] = []
        for name, value in self.criteria.items():
            criterion = value if isinstance(value, Criterion) else Criterion(threshold=value)
            custom = (self.custom_metrics or {}).get(name)
            specs.append(
                MetricSpec(
                    name=name,
                    threshold=criterion.threshold,
                    criterion=criterion,
                    custom_function_path=custom.code_config.name if custom else None,
                    config_path=self._source,
                )
            )
        return specs


DEFAULT_EVAL_CONFIG = EvalConfig(
    criteria={"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
)
"""ADK's defaults when no config file exists."""


def _canonical(key: str, fields: set[str]) -> str | None:
    if key in fields:
        return key
    for field in fields:
        if to_camel(field) == key:
            return field
    return None


def _check_keys(
    raw: Any, fields: set[str], *, path: str | Path, where: str, what: str
) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise InputError(
            f"{what} must be an object, got {type(raw).__name__}",
            path=path,
            where=where or "(top level)",
            fix="Write it as a JSON object",
        )
    out: dict[str, Any] = {}
    for key, value in raw.items():
        field = _canonical(key, fields)
        if field is None:
            hint = did_you_mean(key, sorted(fields)).strip()
            raise InputError(
                f'unknown key "{key}" in {what} (ADK would silently ignore it)',
                path=path,
                where=f"{where}.{key}" if where else key,
                fix=hint or f"Use one of: {', '.join(sorted(fields))}",
            )
        out[field] = value
    return out


def _check_criterion(name: str, raw: Any, *, path: str | Path, custom: bool) -> None:
    where = f"criteria.{name}"
    if isinstance(raw, bool) or not isinstance(raw, (int, float, dict)):
        raise InputError(
            f"criterion must be a number or an object, got {json.dumps(raw)}",
            path=path,
            where=where,
            fix='Write a threshold such as 0.8 or {"threshold": 0.8}',
        )
    if not isinstance(raw, dict):
        return
    if custom:
        body = {_canonical(k, _ALL_CRITERION_FIELDS) or k: v for k, v in raw.items()}
    else:
        fields = _FIELDS_BY_METRIC.get(name, _JUDGE)
        for key in raw:
            if _canonical(key, fields) is None and _canonical(key, _ALL_CRITERION_FIELDS):
                raise InputError(
                    f'{name} does not use "{key}" (ADK would silently ignore it)',
                    path=path,
                    where=f"{where}.{key}",
                    fix=f"Remove it; {name} takes: {', '.join(sorted(fields))}",
                )
        body = _check_keys(raw, fields, path=path, where=where, what=f"the {name} criterion")
    if "threshold" not in body:
        raise InputError(
            "criterion has no threshold", path=path, where=where, fix='Add "threshold": <number>'
        )
    if "judge_model_options" in body:
        _check_keys(
            body["judge_model_options"],
            _JUDGE_OPTION_FIELDS,
            path=path,
            where=f"{where}.judge_model_options",
            what="judge_model_options",
        )
    for tool, rule in (body.get("tool_args") or {}).items():
        _check_keys(
            rule, _TOOL_ARG_FIELDS, path=path, where=f"{where}.tool_args.{tool}", what="a tool rule"
        )
    if "match_type" in body:
        raw_key = next(k for k in raw if _canonical(k, _ALL_CRITERION_FIELDS) == "match_type")
        raw[raw_key] = _match_type(name, body["match_type"], path=path, where=f"{where}.{raw_key}")


def _match_type(metric: str, value: Any, *, path: str | Path, where: str) -> str:
    allowed = (
        _ADK_MATCH_TYPES
        if metric != "tool_trajectory_rules_score"
        else tuple(m.name for m in MatchType)
    )
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1, 2):
        return MatchType(value).name
    if isinstance(value, str):
        normalized = value.strip().upper().replace("-", "_").replace(" ", "_")
        if normalized in allowed:
            return normalized
        hint = did_you_mean(normalized, allowed).strip()
    else:
        hint = ""
    extra = (
        ""
        if metric == "tool_trajectory_rules_score"
        else (" (SUBSET/SUPERSET need the rec metric tool_trajectory_rules_score)")
    )
    raise InputError(
        f"unknown match_type {json.dumps(value)}{extra}",
        path=path,
        where=where,
        fix=hint or f"Use one of: {', '.join(allowed)}",
    )


def parse_eval_config(data: bytes | str, *, path: str | Path = "<eval config>") -> EvalConfig:
    """Validate eval-config JSON strictly.

    Raises:
        InputError: not JSON, an unknown key, a metric name that exists nowhere, a bad
            ``match_type`` or a wrongly typed value; names the JSON path and the fix.
    """
    raw = parse_json(data, path=path)
    top = _check_keys(raw, _TOP_FIELDS, path=path, where="", what="the eval config")
    custom = top.get("custom_metrics") or {}
    if not isinstance(custom, dict):
        raise InputError(
            "custom_metrics must be an object",
            path=path,
            where="custom_metrics",
            fix='Write {"<metric>": {"code_config": {"name": "module.function"}}}',
        )
    for name, entry in custom.items():
        body = _check_keys(
            entry, _CUSTOM_FIELDS, path=path, where=f"custom_metrics.{name}", what="a custom metric"
        )
        code = _check_keys(
            body.get("code_config", {}),
            {"name"},
            path=path,
            where=f"custom_metrics.{name}.code_config",
            what="code_config",
        )
        if "." not in str(code.get("name", "")):
            raise InputError(
                "code_config.name must be a dotted path module.function",
                path=path,
                where=f"custom_metrics.{name}.code_config.name",
                fix='Write e.g. "my_package.metrics.my_metric"',
            )
    criteria = top.get("criteria") or {}
    if not isinstance(criteria, dict):
        raise InputError(
            "criteria must be an object",
            path=path,
            where="criteria",
            fix='Write {"<metric>": <threshold>}',
        )
    known = set(ADK_METRICS) | set(REC_METRICS) | set(custom)
    for name, value in criteria.items():
        if name not in known:
            hint = did_you_mean(name, sorted(known)).strip()
            raise InputError(
                f'unknown metric "{name}"',
                path=path,
                where=f"criteria.{name}",
                fix=hint or "Use an ADK or rec metric name, or declare it under custom_metrics",
            )
        _check_criterion(name, value, path=path, custom=name in custom)
    try:
        return EvalConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"] if p not in ("float", "Criterion"))
        raise InputError(first["msg"], path=path, where=where, fix="Fix that value") from None


def load_eval_config(path: str | Path) -> EvalConfig:
    """Read and validate an eval config file.

    Raises:
        InputError: missing, unreadable or invalid file.
    """
    file = Path(path)
    config = parse_eval_config(read_file(file, what="eval config"), path=file)
    config._source = file
    return config


def find_eval_config(evalset_path: str | Path) -> tuple[EvalConfig, Path | None]:
    """The config beside an eval file (``test_config.json``, then ``eval_config.json``).

    Returns ADK's defaults and ``None`` when neither exists, as ADK does.
    """
    folder = Path(evalset_path).parent
    for name in ("test_config.json", "eval_config.json"):
        candidate = folder / name
        if candidate.is_file():
            return load_eval_config(candidate), candidate
    return DEFAULT_EVAL_CONFIG, None
