"""The structural JSON diff a miss is explained with reports what deepdiff reports (the
kinds, paths and values of ``DeepDiff(old, new, view="tree", threshold_to_diff_deeper=0)``),
without importing it."""

from __future__ import annotations

from typing import Any

from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from cassettes._json_diff import KINDS, JsonChange, json_changes

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.5, 1.0, 2.5]),
    st.sampled_from(["", "a", "b", "city"]),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.sampled_from(["p", "q", "r", "s"]), inner, max_size=4),
    ),
    max_leaves=15,
)


def _deepdiff(old: Any, new: Any) -> list[JsonChange]:
    tree = DeepDiff(old, new, view="tree", verbose_level=2, threshold_to_diff_deeper=0)
    found = []
    for kind in KINDS:
        for level in tree.get(kind, []):
            path = list(level.path(output_format="list"))
            before = None if kind.endswith("added") else level.t1
            after = None if kind.endswith("removed") else level.t2
            found.append(JsonChange(kind, path, before, after))
    return found


@settings(max_examples=400, deadline=None)
@given(_json, _json)
def test_the_changes_of_unrelated_values_are_deepdiffs(old: Any, new: Any) -> None:
    assert json_changes(old, new) == _deepdiff(old, new)


@settings(max_examples=400, deadline=None)
@given(_json, st.data())
def test_the_changes_of_an_edited_value_are_deepdiffs(old: Any, data: st.DataObject) -> None:
    """Most requests differ little from their nearest recording: a value edited in place."""
    new = data.draw(_edited(old))
    assert json_changes(old, new) == _deepdiff(old, new)


@st.composite
def _edited(draw: st.DrawFn, value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: draw(_edited(v)) for k, v in value.items() if draw(st.integers(0, 5))}
        if draw(st.booleans()):
            out[draw(st.sampled_from(["p", "q", "t"]))] = draw(_scalars)
        return out
    if isinstance(value, list):
        out_list = [draw(_edited(v)) for v in value]
        if draw(st.booleans()):
            out_list.insert(draw(st.integers(0, len(out_list))), draw(_scalars))
        if out_list and draw(st.booleans()):
            out_list.pop(draw(st.integers(0, len(out_list) - 1)))
        return out_list
    return draw(_scalars) if draw(st.integers(0, 3)) == 0 else value


def test_a_name_inserted_in_a_list_of_names_is_one_addition() -> None:
    old = {"required": ["city", "date"]}
    new = {"required": ["city", "country", "date"]}
    assert json_changes(old, new) == [
        JsonChange("iterable_item_added", ["required", 1], None, "country")
    ]


def test_changes_come_grouped_by_kind_and_in_the_order_met() -> None:
    old = {"b": 1, "a": {"x": "one", "gone": True}, "list": [{"k": 1}, {"k": 2}]}
    new = {"a": {"x": "two", "new": None}, "b": 1.0, "list": [{"k": 1}], "added": []}
    assert [(c.kind, c.path) for c in json_changes(old, new)] == [
        ("type_changes", ["b"]),
        ("values_changed", ["a", "x"]),
        ("dictionary_item_added", ["added"]),
        ("dictionary_item_added", ["a", "new"]),
        ("dictionary_item_removed", ["a", "gone"]),
        ("iterable_item_removed", ["list", 1]),
    ]
