"""The eval config of a plain score, read without pydantic when it is certainly simple.

Nearly every ``test_config.json`` names ADK's two default metrics with a threshold each
(and perhaps the trajectory's ``match_type`` or ``ignore_args``). Such a config, or no
config at all (ADK's defaults), gives the same :class:`MetricSpec` list here as
:meth:`cassettes._eval_config.EvalConfig.metrics` does, without importing the config's
models. Anything else (another metric, a key spelled another way, a value the strict
config would coerce or reject) answers None, and the caller loads the config through
:mod:`cassettes._eval_config`, which reports each problem.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from cassettes._errors import InputError
from cassettes._eval_enums import MatchType
from cassettes._file_names import CONFIG_NAMES
from cassettes._json_file import parse_json, read_file

__all__ = ["PlainCriterion", "PlainEvalConfig", "PlainMetricSpec", "read_plain_config"]

_KEYS = {
    "tool_trajectory_avg_score": frozenset({"threshold", "match_type", "ignore_args"}),
    "response_match_score": frozenset({"threshold"}),
}
"""The metrics a plain config may name, and the criterion keys each may give."""

_MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")


class PlainCriterion(NamedTuple):
    """What a plain metric's criterion holds (the fields of ``Criterion`` scoring reads)."""

    threshold: float
    match_type: MatchType = MatchType.EXACT
    ignore_args: bool = False
    given: tuple[str, ...] = ("threshold",)
    """The keys the config gave, in order (``to_adk_dict`` holds only these)."""
    tool_args: Mapping[str, Any] = MappingProxyType({})
    """A plain config gives none."""

    def to_adk_dict(self) -> dict[str, Any]:
        """``Criterion.to_adk_dict``: what was given, ``match_type`` by name."""
        values = {
            "threshold": self.threshold,
            "match_type": self.match_type.name,
            "ignore_args": self.ignore_args,
        }
        return {key: values[key] for key in self.given}


class PlainMetricSpec(NamedTuple):
    """One metric to compute (the fields of ``MetricSpec``)."""

    name: str
    threshold: float
    criterion: PlainCriterion
    custom_function_path: None = None


class PlainEvalConfig(NamedTuple):
    """A plain config's metrics, in config order."""

    specs: tuple[PlainMetricSpec, ...]

    def metrics(self) -> list[PlainMetricSpec]:
        """The metrics in config order (``EvalConfig.metrics``)."""
        return list(self.specs)


DEFAULT_PLAIN_CONFIG = PlainEvalConfig(
    (
        PlainMetricSpec("tool_trajectory_avg_score", 1.0, PlainCriterion(1.0)),
        PlainMetricSpec("response_match_score", 0.8, PlainCriterion(0.8)),
    )
)
"""ADK's defaults (``DEFAULT_EVAL_CONFIG``)."""


def _threshold(value: object) -> float | None:
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return float(value)
    return None


def _criterion(name: str, value: object) -> PlainCriterion | None:
    threshold = _threshold(value)
    if threshold is not None:
        return PlainCriterion(threshold)
    if type(value) is not dict or not set(value) <= _KEYS[name]:
        return None
    threshold = _threshold(value.get("threshold"))
    match_type = value.get("match_type", "EXACT")
    ignore_args = value.get("ignore_args", False)
    if threshold is None or match_type not in _MATCH_TYPES or type(ignore_args) is not bool:
        return None
    return PlainCriterion(threshold, MatchType[match_type], ignore_args, tuple(value))


def _read(file: Path) -> PlainEvalConfig | None:
    try:
        document = parse_json(read_file(file, what="eval config"), path=file)
    except InputError:
        return None
    if type(document) is not dict or set(document) != {"criteria"}:
        return None
    criteria = document["criteria"]
    if type(criteria) is not dict or not criteria:
        return None
    specs = []
    for name, value in criteria.items():
        criterion = _criterion(name, value) if name in _KEYS else None
        if criterion is None:
            return None
        specs.append(PlainMetricSpec(name, criterion.threshold, criterion))
    return PlainEvalConfig(tuple(specs))


def read_plain_config(config: str | Path | None, expected: str | Path) -> PlainEvalConfig | None:
    """The config ``rec score`` would use (``config``, else the one beside ``expected``, else
    ADK's defaults) if it is certainly simple, else None."""
    if config:
        return _read(Path(config))
    folder = Path(expected).parent
    for name in CONFIG_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return _read(candidate)
    return DEFAULT_PLAIN_CONFIG
