"""The canonical JSON that keys conversation contents is exactly ``json.dumps``'s."""

from __future__ import annotations

import json

import pytest

from cassettes._conversations import _CANONICAL_JSON, _SORTED_JSON


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"role": "user", "parts": [{"text": "hi"}]}, id="content"),
        pytest.param(
            {"b": {"z": 1, "a": [2, {"y": None, "c": True}]}, "a": "é\u2028\x00"}, id="nested"
        ),
        pytest.param(
            [0.1, 1e-310, 1.7976931348623157e308, -0.0, 10**30, float("nan")], id="numbers"
        ),
        pytest.param({"\ud800": "lone", 'quote"': "back\\slash"}, id="escapes"),
        pytest.param("just a string", id="string"),
        pytest.param([], id="empty"),
    ],
)
def test_the_keys_are_json_dumps_sorted(value: object) -> None:
    assert _CANONICAL_JSON(value) == json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    assert _SORTED_JSON(value) == json.dumps(value, sort_keys=True, ensure_ascii=False)
