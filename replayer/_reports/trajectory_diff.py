"""Expected vs actual tool calls, aligned for a side-by-side view, per match type.

The alignment follows the scorer's own rules (:mod:`replayer._scoring.trajectory`), so
what the report highlights is what made the metric fail:

- ``EXACT``: calls pair up by position; any unequal pair or leftover call fails.
- ``IN_ORDER``: the expected calls must appear in order among the actual ones; actual
  calls in between are allowed.
- ``ANY_ORDER`` / ``SUPERSET``: each expected call needs one equal actual call anywhere;
  other actual calls are allowed.
- ``SUBSET``: each actual call needs one equal expected call; expected calls never made
  are allowed.

An expected call that found no equal partner is shown beside an unmatched actual call of
the same tool when there is one, with the argument keys whose values differ.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cassettes._eval_config import MatchType, ToolArgRule
from cassettes._genai_types import FunctionCall
from replayer._scoring.trajectory import args_under_rule, calls_equal

__all__ = ["CallRow", "RowStatus", "align_trajectories"]

RowStatus = Literal["match", "differs", "missing", "extra", "allowed"]


@dataclass(frozen=True)
class CallRow:
    """One line of the side-by-side view."""

    expected: FunctionCall | None
    actual: FunctionCall | None
    expected_index: int | None
    actual_index: int | None
    status: RowStatus
    """``match`` equal calls; ``differs`` the same tool called with other args (see
    ``keys``) or another tool in its place (EXACT); ``missing`` an expected call nothing
    satisfied; ``extra`` an actual call the match type does not allow; ``allowed`` an
    unmatched call the match type tolerates."""
    keys: frozenset[str] = frozenset()
    """Argument keys whose values differ (``differs`` rows)."""


def _relevant(args: Any, rule: ToolArgRule | None) -> dict[str, Any]:
    under = args_under_rule(args, rule)
    return dict(under) if isinstance(under, dict) else {}


def _differing_keys(
    expected: FunctionCall,
    actual: FunctionCall,
    ignore_args: bool,
    tool_args: Mapping[str, ToolArgRule] | None,
) -> frozenset[str]:
    if ignore_args or expected.name != actual.name:
        return frozenset()
    rule = (tool_args or {}).get(expected.name or "")
    want, got = _relevant(expected.args, rule), _relevant(actual.args, rule)
    return frozenset(k for k in want.keys() | got.keys() if want.get(k, ...) != got.get(k, ...))


def _greedy(
    first: Sequence[FunctionCall], second: Sequence[FunctionCall], eq: Any
) -> dict[int, int]:
    """Index in ``first`` -> index in ``second``: each call of ``first`` takes the first
    free call of ``second`` that ``eq(call, other)`` accepts (the scorer's consumption)."""
    pairs: dict[int, int] = {}
    for index, call in enumerate(first):
        taken = set(pairs.values())
        partner = next(
            (i for i, other in enumerate(second) if i not in taken and eq(call, other)), None
        )
        if partner is not None:
            pairs[index] = partner
    return pairs


def _pairs(
    expected: Sequence[FunctionCall], actual: Sequence[FunctionCall], match_type: MatchType, eq: Any
) -> dict[int, int]:
    """expected index -> actual index of the equal calls the scorer pairs."""
    pairs: dict[int, int] = {}
    if match_type is MatchType.IN_ORDER:
        position = 0
        for index, call in enumerate(actual):
            if position < len(expected) and eq(call, expected[position]):
                pairs[position] = index
                position += 1
    elif match_type in (MatchType.ANY_ORDER, MatchType.SUPERSET):
        pairs = _greedy(expected, actual, lambda want, got: eq(got, want))
    elif match_type is MatchType.SUBSET:
        pairs = {e: a for a, e in _greedy(actual, expected, eq).items()}
    return pairs


def align_trajectories(
    expected: Sequence[FunctionCall],
    actual: Sequence[FunctionCall],
    match_type: MatchType = MatchType.EXACT,
    *,
    ignore_args: bool = False,
    tool_args: Mapping[str, ToolArgRule] | None = None,
) -> list[CallRow]:
    """The rows of the side-by-side view (see the module docstring)."""

    def eq(got: FunctionCall, want: FunctionCall) -> bool:
        return calls_equal(got, want, ignore_args=ignore_args, tool_args=tool_args)

    def differs(want: FunctionCall, got: FunctionCall, e_index: int, a_index: int) -> CallRow:
        keys = _differing_keys(want, got, ignore_args, tool_args)
        return CallRow(want, got, e_index, a_index, "differs", keys)

    if match_type is MatchType.EXACT:
        return _exact_rows(expected, actual, eq, differs)
    pairs = _pairs(expected, actual, match_type, eq)
    partner_of = {**pairs, **_beside(expected, actual, pairs)}
    subset = match_type is MatchType.SUBSET
    lone_expected: RowStatus = "allowed" if subset else "missing"
    lone_actual: RowStatus = "extra" if subset else "allowed"
    placed = set(partner_of.values())
    rows: list[CallRow] = []
    shown = 0  # actual calls before this index are placed or shown

    def lone_actual_before(limit: int) -> None:
        nonlocal shown
        for index in range(shown, limit):
            if index not in placed:
                rows.append(CallRow(None, actual[index], None, index, lone_actual))
        shown = max(shown, limit)

    for e_index, want in enumerate(expected):
        a_index = partner_of.get(e_index)
        if a_index is None:
            rows.append(CallRow(want, None, e_index, None, lone_expected))
            continue
        lone_actual_before(a_index)
        if e_index in pairs:
            rows.append(CallRow(want, actual[a_index], e_index, a_index, "match"))
        else:
            rows.append(differs(want, actual[a_index], e_index, a_index))
    lone_actual_before(len(actual))
    return rows


def _exact_rows(
    expected: Sequence[FunctionCall],
    actual: Sequence[FunctionCall],
    eq: Callable[[FunctionCall, FunctionCall], bool],
    differs: Callable[[FunctionCall, FunctionCall, int, int], CallRow],
) -> list[CallRow]:
    """EXACT: calls pair up by position."""
    rows: list[CallRow] = []
    for index in range(max(len(expected), len(actual))):
        want = expected[index] if index < len(expected) else None
        got = actual[index] if index < len(actual) else None
        if want is not None and got is not None:
            same = eq(got, want)
            rows.append(
                CallRow(want, got, index, index, "match")
                if same
                else differs(want, got, index, index)
            )
        elif want is not None:
            rows.append(CallRow(want, None, index, None, "missing"))
        else:
            rows.append(CallRow(None, got, None, index, "extra"))
    return rows


def _beside(
    expected: Sequence[FunctionCall], actual: Sequence[FunctionCall], pairs: dict[int, int]
) -> dict[int, int]:
    """expected index -> actual index: an unsatisfied call sits beside an unpaired call of
    the same tool, to show the args."""
    near: dict[int, int] = {}
    free = [i for i in range(len(actual)) if i not in pairs.values()]
    for e_index, want in enumerate(expected):
        if e_index in pairs:
            continue
        partner = next((i for i in free if actual[i].name == want.name), None)
        if partner is not None:
            near[e_index] = partner
            free.remove(partner)
    return near
