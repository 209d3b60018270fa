"""What changed between two JSON values, path by path (to explain a replay miss).

A small structural diff of parsed JSON (dicts, lists, strings, numbers, booleans, None),
reporting what a miss's explanation needs: values changed (or changed type), keys added or
removed, list items added or removed. It reads like ``deepdiff.DeepDiff(old, new,
threshold_to_diff_deeper=0)``: changes come grouped by kind in :data:`KINDS` order, each
kind's in the order the walk meets them (a dict's added and removed keys before its common
keys, in the new value's order); lists are compared item by item, and a list of scalars
by its longest matching runs (``difflib``) when that reports fewer changes. It imports
nothing beyond the standard library: deepdiff loads numpy, pandas and pyarrow when they
are installed, which a long-running ``rec serve`` would carry after its first miss.
"""

from __future__ import annotations

import difflib
from itertools import zip_longest
from typing import Any, NamedTuple

__all__ = ["KINDS", "JsonChange", "json_changes"]

KINDS = (
    "type_changes",
    "values_changed",
    "dictionary_item_added",
    "dictionary_item_removed",
    "iterable_item_added",
    "iterable_item_removed",
)
"""The kinds of change, in the order :func:`json_changes` reports them."""

_MOVED = "iterable_item_moved"
"""An equal item at another index of a list: counted when choosing how to compare a list,
never reported."""

_SCALARS = (str, int, float, bool, type(None))


class JsonChange(NamedTuple):
    """One difference: its kind (one of :data:`KINDS`), where (keys and list indexes from
    the root), and the value before and after (None for the side it is absent from)."""

    kind: str
    path: list[Any]
    old: Any
    new: Any


_Found = dict[str, list[JsonChange]]


def json_changes(old: Any, new: Any) -> list[JsonChange]:
    """Every difference from ``old`` to ``new``, grouped by kind in :data:`KINDS` order."""
    found: _Found = {}
    _walk(old, new, [], found)
    return [change for kind in KINDS for change in found.get(kind, [])]


def _add(found: _Found, kind: str, path: list[Any], old: Any, new: Any) -> None:
    found.setdefault(kind, []).append(JsonChange(kind, path, old, new))


def _walk(old: Any, new: Any, path: list[Any], found: _Found) -> None:
    if old is new:
        return
    if type(old) is not type(new):
        _add(found, "type_changes", path, old, new)
    elif isinstance(old, dict):
        _walk_dict(old, new, path, found)
    elif isinstance(old, list):
        _walk_list(old, new, path, found)
    elif old != new:
        _add(found, "values_changed", path, old, new)


def _walk_dict(old: dict[Any, Any], new: dict[Any, Any], path: list[Any], found: _Found) -> None:
    for key in new:
        if key not in old:
            _add(found, "dictionary_item_added", [*path, key], None, new[key])
    for key in old:
        if key not in new:
            _add(found, "dictionary_item_removed", [*path, key], old[key], None)
    for key in new:
        if key in old:
            _walk(old[key], new[key], [*path, key], found)


def _walk_list(old: list[Any], new: list[Any], path: list[Any], found: _Found) -> None:
    if not (_all_scalars(old) and _all_scalars(new)):
        _pairwise(old, new, path, found, 0, 0)
        return
    runs: _Found = {}
    _by_runs(old, new, path, runs)
    if _count(runs) > 1:
        pairs: _Found = {}
        _pairwise(old, new, path, pairs, 0, 0)
        if _count(runs) >= _count(pairs):
            runs = pairs
    _merge_same_index(runs)
    for kind, changes in runs.items():
        found.setdefault(kind, []).extend(changes)


def _all_scalars(items: list[Any]) -> bool:
    return all(isinstance(item, _SCALARS) for item in items)


def _count(found: _Found) -> int:
    return sum(len(changes) for changes in found.values())


def _pairwise(
    old: list[Any], new: list[Any], path: list[Any], found: _Found, old_at: int, new_at: int
) -> None:
    """Compare ``old`` and ``new`` item by item; their first items sit at ``old_at`` and
    ``new_at`` of the lists being compared (an item is named by its index in ``old``)."""
    missing = object()
    for offset, (before, after) in enumerate(zip_longest(old, new, fillvalue=missing)):
        where = [*path, old_at + offset]
        if after is missing:
            _add(found, "iterable_item_removed", where, before, None)
        elif before is missing:
            _add(found, "iterable_item_added", [*path, new_at + offset], None, after)
        elif old_at != new_at and before == after:
            _add(found, _MOVED, where, before, after)
        else:
            _walk(before, after, where, found)


def _by_runs(old: list[Any], new: list[Any], path: list[Any], found: _Found) -> None:
    """Compare two lists of scalars by their longest matching runs."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, old_from, old_to, new_from, new_to in matcher.get_opcodes():
        if tag == "replace":
            _pairwise(old[old_from:old_to], new[new_from:new_to], path, found, old_from, new_from)
        elif tag == "delete":
            for index in range(old_from, old_to):
                _add(found, "iterable_item_removed", [*path, index], old[index], None)
        elif tag == "insert":
            for index in range(new_from, new_to):
                _add(found, "iterable_item_added", [*path, index], None, new[index])


def _merge_same_index(found: _Found) -> None:
    """An item removed and another added at the same index is that item changed."""
    added = {tuple(change.path): change for change in found.get("iterable_item_added", [])}
    removed = found.get("iterable_item_removed", [])
    same = [change for change in removed if tuple(change.path) in added]
    for change in same:
        after = added.pop(tuple(change.path))
        found["iterable_item_added"].remove(after)
        removed.remove(change)
        _add(found, "values_changed", change.path, change.old, after.new)
