"""Every problem in an eval config (``test_config.json`` / ``eval_config.json``).

:func:`evalfiles.eval_config.parse_eval_config` stops at the first problem; this walk reports
all of them, then asks the parser for anything the walk does not know about.
"""

from __future__ import annotations

import json
from pathlib import Path

from cassettes import InputError, did_you_mean

from .eval_config import ADK_METRICS, REC_METRICS, MatchType, parse_eval_config
from .problems import Problem, Walker, type_name
from .user_code import import_callable

__all__ = ["check_eval_config"]

_TOP_KEYS = {"criteria", "custom_metrics", "user_simulator_config", "live_model_config"}
_CRITERION_KEYS = {
    "threshold",
    "match_type",
    "ignore_args",
    "judge_model_options",
    "rubrics",
    "include_intermediate_responses_in_final",
    "evaluate_intermediate_nl_responses",
    "stop_signal",
    "tool_args",
}
_CUSTOM_KEYS = {"code_config", "metric_info", "description"}
_ADK_MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
_REC_RULES_METRIC = "tool_trajectory_rules_score"


def check_eval_config(document: object, *, path: str) -> list[Problem]:
    """Every problem in a parsed eval config."""
    walker = Walker(path)
    top = walker.keys(document, "", _TOP_KEYS, what="the eval config")
    if top is None:
        return walker.problems
    custom = walker.optional(top, "", "custom_metrics", dict) or {}
    for name, entry in custom.items():
        _check_custom(walker, name, entry, folder=Path(path).parent)
    criteria = walker.optional(top, "", "criteria", dict) or {}
    known = sorted(set(ADK_METRICS) | set(REC_METRICS) | set(custom))
    for name, value in criteria.items():
        where = f"criteria.{name}"
        if name not in known:
            hint = did_you_mean(name, known).strip()
            walker.error(
                where,
                f'unknown metric "{name}"',
                hint or "Use an ADK or rec metric name, or declare it under custom_metrics",
            )
            continue
        _check_criterion(walker, name, value, where)
    if not walker.problems:
        try:
            parse_eval_config(json.dumps(document), path=path)
        except InputError as exc:
            walker.error(exc.where or "", exc.problem, exc.fix or "Fix that value")
    return walker.problems


def _check_criterion(walker: Walker, name: str, value: object, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, dict)):
        walker.error(
            where,
            f"a criterion must be a number or an object, got {type_name(value)}",
            'Write a threshold such as 0.8 or {"threshold": 0.8}',
        )
        return
    if not isinstance(value, dict):
        return
    walker.keys(value, where, _CRITERION_KEYS, what=f"the {name} criterion")
    if walker.get(value, "threshold") is None:
        walker.error(where, "the criterion has no threshold", 'Add "threshold": <number>')
    else:
        walker.optional(value, where, "threshold", (int, float))
    walker.optional(value, where, "ignore_args", bool)
    match_type = walker.get(value, "match_type")
    if match_type is not None:
        _check_match_type(walker, name, match_type, f"{where}.{walker.key_of(value, 'match_type')}")


def _check_match_type(walker: Walker, metric: str, value: object, where: str) -> None:
    allowed = tuple(m.name for m in MatchType) if metric == _REC_RULES_METRIC else _ADK_MATCH_TYPES
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1, 2):
        return
    if isinstance(value, str):
        normalized = value.strip().upper().replace("-", "_").replace(" ", "_")
        if normalized in allowed:
            return
        hint = did_you_mean(normalized, allowed).strip()
        if normalized in ("SUBSET", "SUPERSET"):
            hint = f"{normalized} needs the rec metric {_REC_RULES_METRIC}"
    else:
        hint = ""
    walker.error(
        where,
        f"unknown match_type {json.dumps(value)}",
        hint or f"Use one of: {', '.join(allowed)}",
    )


def _check_custom(walker: Walker, name: str, entry: object, *, folder: Path) -> None:
    where = f"custom_metrics.{name}"
    body = walker.keys(entry, where, _CUSTOM_KEYS, what="a custom metric")
    if body is None:
        return
    code = walker.require(body, where, "code_config", dict)
    if code is None:
        return
    inner = f"{where}.{walker.key_of(body, 'code_config')}"
    walker.keys(code, inner, {"name"}, what="code_config")
    dotted = walker.require(code, inner, "name", str)
    if dotted is None:
        return
    if "." not in dotted:
        walker.error(
            f"{inner}.name",
            f'"{dotted}" is not a dotted path module.function',
            'Write e.g. "my_package.metrics.my_metric"',
        )
        return
    problem = _import_problem(dotted, folder)
    if problem:
        walker.error(
            f"{inner}.name", problem, "Check the module is importable from here and the name"
        )


def _import_problem(dotted: str, folder: Path) -> str | None:
    """Why ``module.function`` cannot be imported and called, or None when it can."""
    try:
        import_callable(dotted, near=folder / "test_config.json")
    except ImportError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - the user's module raised while importing
        return f'importing "{dotted}" raised {type(exc).__name__}: {exc}'
    return None
