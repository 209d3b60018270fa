"""The eval config's ``multi_run_config``: ADK 2.15's rules for judging a case on several runs.

Field for field google-adk 2.15's ``MultiRunConfig`` (``num_runs``, ``max_crashed_runs``,
``cross_run_scoring``, ``cross_run_scoring_by_metric``, ``cross_run_criteria`` with
``pass_rate`` / ``pass_at_k`` / ``pass_hat_k``), both casings, unknown keys refused, and
ADK's checks of each rule (a method that counts passing runs needs a threshold, pass@k and
pass^k need ``k`` and belong in ``cross_run_criteria``...). rec judges the runs with ADK's
own aggregator, so the verdicts are ADK's. ``custom_methods`` (Python functions of the
user's) parse but are refused with the fix: rec does not run them, and a config rec reads
is never half-honoured.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator
from pydantic.alias_generators import to_camel

from cassettes._validation import invalid

__all__ = [
    "BUILT_IN_METHODS",
    "CustomCrossRunMethodConfig",
    "MultiRunConfig",
    "MultiRunCriterion",
    "PassKMultiRunCriterion",
]

BUILT_IN_METHODS: dict[str, tuple[bool, bool]] = {
    "mean_over_invocations": (True, False),
    "mean_of_runs": (True, False),
    "min_over_runs": (True, False),
    "pass_rate": (False, False),
    "pass_at_k": (False, True),
    "pass_hat_k": (False, True),
}
"""ADK 2.15's built-in cross-run methods: name -> (combines scores, draws k runs at once)."""


class _MultiRunModel(BaseModel):
    # ADK's casing and strictness: a misspelled key would silently change the rule.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True
    )


class MultiRunCriterion(_MultiRunModel):
    """A rule that counts the runs that passed, with a threshold of its own (ADK's)."""

    method: str
    """A method that counts passing runs, such as ``pass_rate``."""
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """The lowest value of ``method`` that passes (0.0 to 1.0)."""


class PassKMultiRunCriterion(MultiRunCriterion):
    """``pass_at_k`` or ``pass_hat_k`` over k runs at a time; without a threshold its value
    is only reported (INFORMATIONAL)."""

    method: Literal["pass_at_k", "pass_hat_k"]
    k: int = Field(ge=1)
    """How many runs are looked at together, at most the number of runs."""


def _criterion_tag(value: Any) -> str:
    """The model that parses a cross-run criterion, by its ``method`` (as ADK picks it)."""
    if isinstance(value, dict):
        is_pass_k = value.get("method") in ("pass_at_k", "pass_hat_k")
    else:
        is_pass_k = isinstance(value, PassKMultiRunCriterion)
    return "PassKMultiRunCriterion" if is_pass_k else "MultiRunCriterion"


CrossRunCriterion = Annotated[
    Annotated[PassKMultiRunCriterion, Tag("PassKMultiRunCriterion")]
    | Annotated[MultiRunCriterion, Tag("MultiRunCriterion")],
    Discriminator(_criterion_tag),
]


class _CodeConfig(_MultiRunModel):
    name: str
    """``module.function``."""
    args: list[Any] | None = None


class CustomCrossRunMethodConfig(_MultiRunModel):
    """A cross-run method written as a Python function (ADK's; rec refuses to run it)."""

    code_config: _CodeConfig
    uses_scores: bool


_Rule = tuple[str, str, MultiRunCriterion | None, bool]
"""Where a rule is written, the method it names, the rule object (None for a plain name),
and whether it is in ``cross_run_criteria``."""


class MultiRunConfig(_MultiRunModel):
    """How each case is run several times and judged on all of its runs (ADK 2.15)."""

    num_runs: int | None = Field(default=None, ge=1)
    """Runs of each case; unset: ``--num-runs``, else 1 (the flag wins when given, as
    ``adk eval --num_runs`` does)."""
    max_crashed_runs: int = Field(default=0, ge=0)
    """How many runs may crash (fail without any metric result) before the case fails."""
    cross_run_scoring: str | MultiRunCriterion = "mean_over_invocations"
    """How each metric's run scores become its case score."""
    cross_run_scoring_by_metric: dict[str, str | MultiRunCriterion] | None = None
    """``cross_run_scoring`` for single metrics (each must be in ``criteria``)."""
    cross_run_criteria: list[CrossRunCriterion] | None = None
    """Rules over the runs that passed as a whole; the case fails if any fails."""
    custom_methods: dict[str, CustomCrossRunMethodConfig] | None = None
    """Methods of the user's own: parsed, then refused (rec does not run them)."""

    @model_validator(mode="after")
    def _methods(self) -> MultiRunConfig:
        """ADK's checks of every rule, then rec's refusal of what it does not run."""
        if self.custom_methods:
            name = next(iter(self.custom_methods))
            raise invalid(
                "custom_methods",
                "custom_methods ({name}) is not run by rec, so its rules would be ignored",
                "Remove custom_methods and the rules naming it, or use a built-in method "
                f"({', '.join(BUILT_IN_METHODS)})",
                name=name,
            )
        for where, method, criterion, in_criteria in self._rules():
            _check_rule(where, method, criterion, in_criteria=in_criteria)
        return self

    def _rules(self) -> list[_Rule]:
        written = [
            ("cross_run_scoring", self.cross_run_scoring),
            *(
                (f"cross_run_scoring_by_metric[{metric!r}]", rule)
                for metric, rule in (self.cross_run_scoring_by_metric or {}).items()
            ),
        ]
        rules: list[_Rule] = [
            (where, rule, None, False)
            if isinstance(rule, str)
            else (where, rule.method, rule, False)
            for where, rule in written
        ]
        rules.extend(
            (f"cross_run_criteria[{index}]", criterion.method, criterion, True)
            for index, criterion in enumerate(self.cross_run_criteria or [])
        )
        return rules


def _check_rule(
    where: str, method: str, criterion: MultiRunCriterion | None, *, in_criteria: bool
) -> None:
    """ADK 2.15's ``MultiRunConfig._validate_methods`` for one rule, with rec's fixes."""
    if method not in BUILT_IN_METHODS:
        raise invalid(
            "unknown_method",
            "{where}: unknown method {method}",
            f"Use one of: {', '.join(BUILT_IN_METHODS)}",
            where=where,
            method=repr(method),
        )
    uses_scores, takes_k = BUILT_IN_METHODS[method]
    facts = {"where": where, "method": repr(method)}
    if uses_scores and criterion is not None:
        raise invalid(
            "scores_with_threshold",
            "{where}: {method} combines scores, so it is judged against the metric's "
            "threshold in criteria and cannot have a threshold of its own",
            "Write it as a plain name, or use a method that counts passing runs such as pass_rate",
            **facts,
        )
    if not uses_scores and criterion is None:
        raise invalid(
            "count_without_threshold",
            "{where}: {method} counts passing runs, so it needs a threshold of its own",
            f'Write {{"method": "{method}", "threshold": ...}} instead of the plain name',
            **facts,
        )
    if criterion is None:
        return
    if takes_k and not in_criteria:
        raise invalid(
            "pass_k_placement",
            "{where}: {method} is only supported in cross_run_criteria",
            "Move it to cross_run_criteria, where it counts the runs of the whole case",
            **facts,
        )
    if takes_k and not isinstance(criterion, PassKMultiRunCriterion):
        raise invalid("pass_k_without_k", "{where}: {method} needs k", 'Add "k": <runs>', **facts)
    if criterion.threshold is None and not takes_k:
        raise invalid(
            "no_threshold",
            "{where}: {method} needs a threshold",
            'Add "threshold": <0..1> (only pass_at_k and pass_hat_k may leave it out)',
            **facts,
        )
