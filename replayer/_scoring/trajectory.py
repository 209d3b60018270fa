"""Tool-trajectory scores: ADK's ``tool_trajectory_avg_score`` and rec's extra trajectory metrics.

ADK (``trajectory_evaluator.py``): a call equals another iff the names are equal and
(``ignore_args`` or the args are equal by Python ``==`` on the decoded JSON, so ``1 == 1.0``
and ``True == 1``). Up to ADK 2.14 a call's missing args (``None``) differ from ``{}``; from
ADK 2.15 they are equal (``args or {}``, ``_are_tool_calls_equal``). rec follows the
google-adk installed, and the newest rule where none is. Each invocation scores 1.0 or 0.0.

rec adds ``SUBSET`` / ``SUPERSET`` match types and per-tool argument rules (for
``tool_trajectory_rules_score``) and a partial-credit F1 (``tool_trajectory_f1``). These
never feed ADK's metric.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cassettes._eval_enums import MatchType

if TYPE_CHECKING:
    from cassettes._eval_config import ToolArgRule
    from replayer._scoring.views import CallView

__all__ = [
    "args_under_rule",
    "calls_equal",
    "trajectory_f1",
    "trajectory_matches",
]


def args_under_rule(args: Any, rule: ToolArgRule | None) -> Any:
    """The args a call is compared on under a tool's rule (``only`` or ``ignore`` keys)."""
    if rule is None or not isinstance(args, dict):
        return args
    if rule.only is not None:
        return {k: v for k, v in args.items() if k in rule.only}
    return {k: v for k, v in args.items() if k not in rule.ignore}


@functools.cache
def absent_args_equal_empty() -> bool:
    """True iff the installed google-adk compares a call's missing args equal to ``{}``
    (2.15 and later), or no google-adk is installed (the newest rule)."""
    from replayer._compat import installed_adk_version

    installed = installed_adk_version()
    found = re.match(r"(\d+)\.(\d+)", installed or "")
    return found is None or (int(found[1]), int(found[2])) >= (2, 15)


def _args(args: Any) -> Any:
    """A call's args as ADK compares them."""
    return (args or {}) if absent_args_equal_empty() else args


def calls_equal(
    actual: CallView,
    expected: CallView,
    *,
    ignore_args: bool = False,
    tool_args: Mapping[str, ToolArgRule] | None = None,
) -> bool:
    """ADK's call equality, plus optional per-tool argument rules (rec metrics only)."""
    if actual.name != expected.name:
        return False
    if ignore_args:
        return True
    if tool_args:
        rule = tool_args.get(actual.name or "")
        return bool(
            args_under_rule(_args(actual.args), rule) == args_under_rule(_args(expected.args), rule)
        )
    return bool(_args(actual.args) == _args(expected.args))


def _exact(actual: Sequence[Any], expected: Sequence[Any], eq: Any) -> bool:
    if len(actual) != len(expected):
        return False
    return all(eq(a, e) for a, e in zip(actual, expected, strict=False))


def _in_order(actual: Sequence[Any], expected: Sequence[Any], eq: Any) -> bool:
    if not expected:
        return True
    position = 0
    for call in actual:
        if eq(call, expected[position]):
            position += 1
            if position == len(expected):
                return True
    return False


def _consume_each(needles: Sequence[Any], haystack: Sequence[Any], eq: Any) -> bool:
    """Each needle takes the first unused matching haystack item (ADK's ANY_ORDER greedy)."""
    pool = list(haystack)
    for needle in needles:
        for index, item in enumerate(pool):
            if eq(item, needle):
                pool.pop(index)
                break
        else:
            return False
    return True


def trajectory_matches(
    actual: Sequence[CallView],
    expected: Sequence[CallView],
    match_type: MatchType,
    *,
    ignore_args: bool = False,
    tool_args: Mapping[str, ToolArgRule] | None = None,
) -> bool:
    """Whether the actual calls satisfy the expected ones under ``match_type``.

    An empty expected list passes IN_ORDER/ANY_ORDER/SUPERSET always and EXACT only if
    nothing was called; SUBSET passes iff every actual call was expected.
    """

    def eq(a: CallView, e: CallView) -> bool:
        return calls_equal(a, e, ignore_args=ignore_args, tool_args=tool_args)

    if match_type is MatchType.EXACT:
        return _exact(actual, expected, eq)
    if match_type is MatchType.IN_ORDER:
        return _in_order(actual, expected, eq)
    if match_type in (MatchType.ANY_ORDER, MatchType.SUPERSET):
        return _consume_each(expected, actual, eq)
    if match_type is MatchType.SUBSET:
        return _consume_each(actual, expected, lambda e, a: eq(a, e))
    raise AssertionError(f"unhandled match type {match_type}")


def trajectory_f1(
    actual: Sequence[CallView],
    expected: Sequence[CallView],
    *,
    ignore_args: bool = False,
    tool_args: Mapping[str, ToolArgRule] | None = None,
) -> float:
    """Partial credit: F1 of the calls matched one-to-one (order ignored).

    Both lists empty score 1.0 (nothing was expected and nothing was called).
    """
    if not actual and not expected:
        return 1.0
    pool = list(actual)
    matched = 0
    for want in expected:
        for index, got in enumerate(pool):
            if calls_equal(got, want, ignore_args=ignore_args, tool_args=tool_args):
                pool.pop(index)
                matched += 1
                break
    if matched == 0:
        return 0.0
    precision = matched / len(actual)
    recall = matched / len(expected)
    return 2 * precision * recall / (precision + recall)
