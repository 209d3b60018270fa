"""The cassette writer's indent-2 JSON is the standard library's, byte for byte."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cassettes._json_text import dumps_indent2

SHAPES: list[Any] = [
    {},
    [],
    "plain",
    3,
    None,
    {"empty": {}, "none": [], "nested": [[], {}, [[{}]]]},
    [1.5, 1e16, -0.0, 1e-7, 10**40, -(10**40), True, False, None],
    {"text": 'quote " backslash \\ tab \t nl \n ctl \x01 \x7f é 日本 \u2028 😀'},
    {"é key \n": "v", "": ""},
    (1, (2, 3)),
    {"exchanges": [{"id": 0, "request": {"body": {"kind": "json", "value": {"a": [1, 2]}}}}]},
    # left to json.dumps itself: non-string keys, non-finite numbers
    {1: "one", None: 2, 2.5: True},
    [float("nan"), float("inf"), float("-inf")],
]


@pytest.mark.parametrize("value", SHAPES, ids=range(len(SHAPES)))
def test_indent2_text_is_the_standard_librarys(value: Any) -> None:
    assert dumps_indent2(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_what_json_refuses_is_refused_the_same_way() -> None:
    with pytest.raises(TypeError):
        dumps_indent2({"bytes": b"x"})
