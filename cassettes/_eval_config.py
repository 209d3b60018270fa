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

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import InitErrorDetails

from cassettes._errors import did_you_mean
from cassettes._eval_enums import MatchType
from cassettes._file_names import CONFIG_NAMES
from cassettes._json_file import parse_json, read_file
from cassettes._multi_run_config import MultiRunConfig
from cassettes._problems import Problem, first_problem, type_name, validation_problems
from cassettes._validation import invalid, nested_errors

__all__ = [
    "ADK_METRICS",
    "CONFIG_NAMES",
    "DEFAULT_EVAL_CONFIG",
    "DEFAULT_LIVE_TIMEOUT_SECONDS",
    "REC_METRICS",
    "BaseCriterion",
    "CodeConfig",
    "Criterion",
    "CustomMetricConfig",
    "EvalConfig",
    "JudgeModelOptions",
    "MatchType",
    "MetricSpec",
    "MultiRunConfig",
    "TakesRule",
    "ToolArgRule",
    "config_problems",
    "criterion_shape",
    "dump_eval_config",
    "find_eval_config",
    "load_eval_config",
    "parse_eval_config",
]


def _match_type(value: Any) -> Any:
    """ADK's spellings: a name (case, ``-`` and space tolerant) or ADK's integers 0/1/2."""
    if isinstance(value, MatchType):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1, 2):
        return MatchType(value)
    hint = ""
    if isinstance(value, str):
        normalized = value.strip().upper().replace("-", "_").replace(" ", "_")
        if normalized in MatchType.__members__:
            return MatchType[normalized]
        hint = did_you_mean(normalized, MatchType.__members__).strip()
    raise invalid(
        "match_type",
        "unknown match_type {value}",
        hint or f"Use one of: {', '.join(MatchType.__members__)}",
        value=json.dumps(value),
    )


Threshold = Annotated[float, Field(strict=True, allow_inf_nan=False)]
"""A finite number (``NaN`` would fail every case with any score; a string is a typo)."""


class _ConfigModel(BaseModel):
    # Strict where ADK is silent: an unknown key is a typo that would change nothing.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True
    )


class ToolArgRule(_ConfigModel):
    """Which arguments of one tool take part in the comparison (rec metrics only)."""

    ignore: list[str] = Field(default_factory=list)
    """Argument keys left out of the comparison."""
    only: list[str] | None = None
    """If set, only these argument keys are compared."""


class JudgeModelOptions(_ConfigModel):
    """How an LLM-judge metric calls its judge (ADK's ``JudgeModelOptions``)."""

    judge_model: str | None = None
    judge_model_config: dict[str, Any] | None = None
    num_samples: int | None = None
    parallelism_limit: int | None = None


class BaseCriterion(_ConfigModel):
    """ADK's ``BaseCriterion``: what every metric takes. Each metric's criterion adds its own
    fields below; a key a metric does not take is reported (ADK would ignore it)."""

    threshold: Threshold
    """Pass iff the metric's score is ``>=`` this."""
    include_intermediate_responses_in_final: bool = False

    @model_validator(mode="wrap")
    @classmethod
    def _threshold_required(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(data)
        except ValidationError as exc:
            errors = nested_errors(exc, ())
            for error in errors:
                if error["type"] == "missing" and error["loc"] == ("threshold",):
                    error["type"] = invalid(
                        "no_threshold",
                        "the criterion has no threshold",
                        'Add "threshold": <number>',
                    )
                    error["loc"] = ()
            raise ValidationError.from_exception_data(cls.__name__, errors) from None


class TrajectoryCriterion(BaseCriterion):
    """``tool_trajectory_avg_score`` (ADK's ``ToolTrajectoryCriterion``)."""

    match_type: Annotated[MatchType, BeforeValidator(_match_type)] = MatchType.EXACT
    """Trajectory match type."""
    ignore_args: bool = False
    """Compare tool names only."""

    @field_validator("match_type")
    @classmethod
    def _adk_match_types(cls, value: MatchType) -> MatchType:
        if value in (MatchType.SUBSET, MatchType.SUPERSET) and not issubclass(cls, RulesCriterion):
            raise invalid(
                "match_type",
                "{value} is rec's match type, not ADK's",
                f"{value.name} needs the rec metric tool_trajectory_rules_score",
                value=value.name,
            )
        return value


class RulesCriterion(TrajectoryCriterion):
    """``tool_trajectory_rules_score``: ADK's match types plus SUBSET/SUPERSET, per-tool rules."""

    tool_args: dict[str, ToolArgRule] = Field(default_factory=dict)
    """Per-tool argument rules."""


class F1Criterion(BaseCriterion):
    """``tool_trajectory_f1``: partial credit over the matched calls."""

    ignore_args: bool = False
    tool_args: dict[str, ToolArgRule] = Field(default_factory=dict)


class JudgeCriterion(BaseCriterion):
    """An LLM-judge metric (ADK's ``LlmAsAJudgeCriterion``)."""

    judge_model_options: JudgeModelOptions | None = None
    """Judge model options, handed to ADK."""


class RubricsCriterion(JudgeCriterion):
    """A rubric-based metric (ADK's ``RubricsBasedCriterion``)."""

    rubrics: list[Any] | None = None
    """Rubrics, handed to ADK as they are."""


class HallucinationsCriterion(JudgeCriterion):
    """``hallucinations_v1`` (ADK's ``HallucinationsCriterion``)."""

    evaluate_intermediate_nl_responses: bool | None = None


class UserSimulatorCriterion(JudgeCriterion):
    """``per_turn_user_simulator_quality_v1`` (ADK's ``LlmBackedUserSimulatorCriterion``)."""

    stop_signal: str | None = None


class Criterion(
    RulesCriterion, F1Criterion, RubricsCriterion, HallucinationsCriterion, UserSimulatorCriterion
):
    """Every criterion field: what a resolved metric carries (:attr:`MetricSpec.criterion`),
    and what a custom metric's criterion may hold."""

    def to_adk_dict(self) -> dict[str, Any]:
        """The criterion as ADK's ``BaseCriterion`` would hold it (only what was given)."""
        data = self.model_dump(exclude_unset=True, exclude={"tool_args"})
        if "match_type" in data:
            data["match_type"] = self.match_type.name
        return data


class _CustomCriterion(Criterion):
    # A custom metric's function reads whatever its criterion holds (ADK keeps extras).
    model_config = ConfigDict(extra="allow")


_ADK_CRITERIA: dict[str, type[BaseCriterion]] = {
    "tool_trajectory_avg_score": TrajectoryCriterion,
    "response_evaluation_score": BaseCriterion,
    "response_match_score": BaseCriterion,
    "safety_v1": BaseCriterion,
    "final_response_match_v2": JudgeCriterion,
    "rubric_based_final_response_quality_v1": RubricsCriterion,
    "hallucinations_v1": HallucinationsCriterion,
    "rubric_based_tool_use_quality_v1": RubricsCriterion,
    "per_turn_user_simulator_quality_v1": UserSimulatorCriterion,
    "multi_turn_task_success_v1": JudgeCriterion,
    "multi_turn_trajectory_quality_v1": JudgeCriterion,
    "multi_turn_tool_use_quality_v1": JudgeCriterion,
    "rubric_based_multi_turn_trajectory_quality_v1": RubricsCriterion,
    "tool_call_count_v1": JudgeCriterion,
    "inference_call_count_v1": JudgeCriterion,
    "token_usage_v1": JudgeCriterion,
    "invocation_duration_v1": JudgeCriterion,
}
"""Every metric ADK 2.13 registers (``PrebuiltMetrics``) and the criterion it reads."""

_REC_CRITERIA: dict[str, type[BaseCriterion]] = {
    "final_session_state_match": BaseCriterion,
    "tool_trajectory_f1": F1Criterion,
    "tool_trajectory_rules_score": RulesCriterion,
}
"""Deterministic metrics rec adds beside ADK's."""

ADK_METRICS: tuple[str, ...] = tuple(_ADK_CRITERIA)
"""Every metric name ADK 2.13 registers."""
REC_METRICS: tuple[str, ...] = tuple(_REC_CRITERIA)

DEFAULT_LIVE_TIMEOUT_SECONDS = 300
"""ADK's default ``live_model_config.timeout_seconds`` (google.adk.evaluation.constants)."""
"""Deterministic metrics rec adds beside ADK's."""


def criterion_shape(metric: str) -> type[BaseCriterion]:
    """The criterion a metric reads (a custom metric's may hold anything)."""
    return _ADK_CRITERIA.get(metric) or _REC_CRITERIA.get(metric) or _CustomCriterion


def _resolved(shape: BaseCriterion) -> Criterion:
    if isinstance(shape, Criterion):
        return shape
    return Criterion.model_construct(shape.model_fields_set, **dict(shape))


class CodeConfig(_ConfigModel):
    """Where a custom metric function lives."""

    name: str
    """``module.function``."""

    @field_validator("name")
    @classmethod
    def _dotted(cls, value: str) -> str:
        if "." not in value.strip("."):
            raise invalid(
                "dotted_path",
                '"{name}" is not a dotted path module.function',
                'Write e.g. "my_package.metrics.my_metric"',
                name=value,
            )
        return value


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


class TakesRule(_ConfigModel):
    """When a case with several takes passes (rec only; ADK ignores ``takes``).

    By default every take must pass. With ``min_pass_at_k`` the case passes when pass@k
    (the chance that at least one of k takes passes) reaches it; ``k`` defaults to the
    number of takes."""

    min_pass_at_k: float | None = Field(default=None, ge=0, le=1)
    k: int | None = Field(default=None, ge=1)


class EvalConfig(_ConfigModel):
    """A whole eval config."""

    criteria: dict[str, float | BaseCriterion] = Field(default_factory=dict)
    """Metric name -> threshold, or the criterion the metric reads (:func:`criterion_shape`)."""
    custom_metrics: dict[str, CustomMetricConfig] | None = None
    user_simulator_config: dict[str, Any] | None = None
    """ADK's user simulator settings, for ``conversation_scenario`` cases."""
    live_model_config: dict[str, Any] | None = None
    """Set: every case runs in a Live session (as in ``adk eval``); its ``timeout_seconds``
    bounds each turn (:meth:`live_timeout_seconds`)."""
    takes: TakesRule | None = None
    """The verdict rule over a case's takes (rec only; see :class:`TakesRule`)."""
    parallelism: int | None = Field(default=None, ge=1)
    """ADK's: how many cases run at once (``AgentEvaluator``'s ``parallelism`` overrides it)."""
    multi_run_config: MultiRunConfig | None = None
    """ADK 2.15's: run each case several times and judge it on all of its runs, with ADK's
    own aggregator (``rec replay``; see :class:`cassettes._multi_run_config.MultiRunConfig`)."""
    _source: Path | None = PrivateAttr(default=None)

    @field_validator("live_model_config")
    @classmethod
    def _live_timeout(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        unknown = sorted(set(value) - {"timeout_seconds", "timeoutSeconds"})
        if unknown:
            raise ValueError(
                f"unknown key {unknown[0]!r} in live_model_config: ADK knows only timeout_seconds"
            )
        timeout = value.get("timeout_seconds", value.get("timeoutSeconds"))
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0
        ):
            raise ValueError(
                f"live_model_config.timeout_seconds is {timeout!r}: give a whole number "
                "of seconds above 0"
            )
        return value

    def live_timeout_seconds(self) -> int:
        """Seconds a Live turn may take (ADK's default when the config gives none)."""
        live = self.live_model_config or {}
        timeout = live.get("timeout_seconds", live.get("timeoutSeconds"))
        return DEFAULT_LIVE_TIMEOUT_SECONDS if timeout is None else int(timeout)

    @model_validator(mode="wrap")
    @classmethod
    def _criteria_by_metric(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Validate each criterion as its metric's criterion, reporting every problem."""
        if not isinstance(data, dict) or not isinstance(data.get("criteria"), dict):
            return _checked_multi_run(handler(data))
        custom = data.get("custom_metrics", data.get("customMetrics"))
        declared = set(custom) if isinstance(custom, dict) else set()
        known = sorted({*ADK_METRICS, *REC_METRICS, *declared})
        criteria: dict[str, float | BaseCriterion] = {}
        errors: list[InitErrorDetails] = []
        for name, value in data["criteria"].items():
            place = ("criteria", name)
            if name not in known:
                hint = did_you_mean(name, known).strip()
                fix = hint or "Use an ADK or rec metric name, or declare it under custom_metrics"
                error = invalid("unknown_metric", 'unknown metric "{name}"', fix, name=name)
                errors.append({"type": error, "loc": place, "input": value})
            elif isinstance(value, bool) or not isinstance(value, (int, float, dict)):
                error = invalid(
                    "criterion_type",
                    "a criterion must be a number or an object, got {got}",
                    'Write a threshold such as 0.8 or {"threshold": 0.8}',
                    got=type_name(value),
                )
                errors.append({"type": error, "loc": place, "input": value})
            else:
                shape = criterion_shape(name) if name not in declared else _CustomCriterion
                try:
                    if isinstance(value, dict):
                        criteria[name] = shape.model_validate(value)
                    else:
                        criteria[name] = shape.model_validate({"threshold": value}).threshold
                except ValidationError as exc:
                    # The class name tells `rec check` which criterion the keys belong to.
                    nested = nested_errors(exc, (*place, shape.__name__))
                    if not isinstance(value, dict):  # a bare number: the number is the place
                        for item in nested:
                            item["loc"] = place
                    errors.extend(nested)
        try:
            config = handler({**data, "criteria": {}})
            errors.extend(_multi_run_errors(config, data["criteria"]))
        except ValidationError as exc:
            errors = [*nested_errors(exc, ()), *errors]
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        config.criteria = criteria
        return config

    @property
    def source(self) -> Path | None:
        """The file this config was read from (None: built in code, or ADK's defaults)."""
        return self._source

    def num_runs(self, flag: int | None) -> int:
        """How many runs of each case: ``flag`` (``--num-runs``) when given, else
        ``multi_run_config.num_runs``, else 1 (``adk eval``'s precedence)."""
        if flag is not None:
            return flag
        runs = self.multi_run_config.num_runs if self.multi_run_config else None
        return runs or 1

    def metrics(self) -> list[MetricSpec]:
        """The metrics in config order, as ADK's ``get_eval_metrics_from_config`` builds them."""
        specs: list[MetricSpec] = []
        for name, value in self.criteria.items():
            custom = (self.custom_metrics or {}).get(name)
            shape = _CustomCriterion if custom else criterion_shape(name)
            criterion = _resolved(
                value if isinstance(value, BaseCriterion) else shape(threshold=value)
            )
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


def _checked_multi_run(config: Any) -> Any:
    """``config`` (validated without criteria) once its multi-run rules are checked."""
    if isinstance(config, EvalConfig) and (errors := _multi_run_errors(config, {})):
        raise ValidationError.from_exception_data(EvalConfig.__name__, errors)
    return config


def _multi_run_errors(config: EvalConfig, criteria: dict[str, Any]) -> list[InitErrorDetails]:
    """ADK's check that ``cross_run_scoring_by_metric`` names metrics in ``criteria``, and
    rec's refusal of ``takes`` beside ``multi_run_config`` (two verdict rules for one case)."""
    multi = config.multi_run_config
    if multi is None:
        return []
    errors: list[InitErrorDetails] = []
    for name in sorted(set(multi.cross_run_scoring_by_metric or {}) - set(criteria)):
        error = invalid(
            "unknown_metric",
            'a multi-run rule for "{name}", which is not in criteria, would never apply',
            did_you_mean(name, list(criteria)).strip() or "Add the metric to criteria",
            name=name,
        )
        place = ("multi_run_config", "cross_run_scoring_by_metric", name)
        errors.append({"type": error, "loc": place, "input": name})
    if config.takes is not None:
        error = invalid(
            "two_verdict_rules",
            "takes and multi_run_config both judge a case on its runs",
            "Keep one: multi_run_config (ADK's rules, e.g. "
            '{"cross_run_criteria": [{"method": "pass_at_k", "k": 3, "threshold": 0.9}]}) '
            "or takes (rec's)",
        )
        errors.append({"type": error, "loc": ("takes",), "input": None})
    return errors


DEFAULT_EVAL_CONFIG = EvalConfig(
    criteria={"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
)
"""ADK's defaults when no config file exists (``rec`` writes them as ``test_config.json``)."""


def dump_eval_config(config: EvalConfig) -> str:
    """The config as a file: what was given, snake_case, indent 2."""
    document: dict[str, Any] = {
        "criteria": {
            name: value.model_dump(mode="json", exclude_unset=True)
            if isinstance(value, BaseModel)
            else value
            for name, value in config.criteria.items()
        }
    }
    document.update(config.model_dump(mode="json", exclude_unset=True, exclude={"criteria"}))
    return json.dumps(document, indent=2) + "\n"


def parse_eval_config(data: bytes | str, *, path: str | Path = "<eval config>") -> EvalConfig:
    """Validate eval-config JSON strictly.

    Raises:
        InputError: not JSON, an unknown key, a metric name that exists nowhere, a bad
            ``match_type`` or a wrongly typed value; names the JSON path and the fix.
    """
    raw = parse_json(data, path=path)
    try:
        return EvalConfig.model_validate(raw)
    except ValidationError as exc:
        raise first_problem(config_problems(exc, path=path, document=raw)) from None


def config_problems(exc: ValidationError, *, path: str | Path, document: Any) -> list[Problem]:
    """Every problem of an eval config, in ADK's terms (what ADK would have done instead)."""
    return validation_problems(
        exc, path=path, model=EvalConfig, document=document, describe_unknown=_unknown_key
    )


def _unknown_key(
    model: type[BaseModel], key: str, loc: tuple[Any, ...], problem: str, fix: str
) -> tuple[str, str]:
    field = key if key in Criterion.model_fields else None
    if field is None:
        field = next((n for n in Criterion.model_fields if to_camel(n) == key), None)
    if issubclass(model, BaseCriterion) and field is not None and len(loc) >= 2:
        metric = str(loc[1])
        takes = ", ".join(sorted(model.model_fields))
        return f'{metric} does not use "{key}" (ADK would silently ignore it)', (
            f"Remove it; {metric} takes: {takes}"
        )
    if model is JudgeModelOptions:
        return problem, fix
    return problem + " (ADK would silently ignore it)", fix


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
    for name in CONFIG_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return load_eval_config(candidate), candidate
    return DEFAULT_EVAL_CONFIG, None
