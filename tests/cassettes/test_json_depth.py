"""How deep a JSON text nests, read from its text (``cassettes._exact_json``)."""

from __future__ import annotations

import json
import random
from typing import Any

from cassettes._exact_json import MAX_JSON_DEPTH, exact_json, nests_too_deep


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    return 0


def test_the_depth_read_from_the_text_is_the_parsed_values_around_the_limit() -> None:
    """Brackets inside strings and keys, escaped quotes, empty containers, indentation:
    the text says too deep exactly when the parsed value nests past the limit."""
    rng = random.Random(3)
    leaves: list[Any] = ['a]"}{[', 1, 2.5, None, '\\"]', [], {}, "[[[[", "}}}}", "é[ü]\\"]

    def nested(depth: int) -> Any:
        if depth == 0:
            return rng.choice(leaves)
        kids = [nested(depth - 1), *(rng.choice(leaves) for _ in range(rng.randint(0, 2)))]
        rng.shuffle(kids)
        return {f"{i}{{]": kid for i, kid in enumerate(kids)} if rng.random() < 0.5 else kids

    deep = 0
    for _ in range(1500):
        value = nested(rng.randint(MAX_JSON_DEPTH - 4, MAX_JSON_DEPTH + 4))
        text = json.dumps(value, indent=rng.choice([None, 1]))
        too_deep = _depth(value) > MAX_JSON_DEPTH
        deep += too_deep
        assert nests_too_deep(text, value) is too_deep
        assert nests_too_deep(text.encode(), value) is too_deep
        assert exact_json(text)[0] is not too_deep
    assert 100 < deep < 1400
