"""The cassette writer's indent-2 JSON is the standard library's, byte for byte."""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import Cassette, JsonBody, dump_cassette
from cassettes._cassette_writer import save_cassette
from cassettes._json_text import dump_model_indent2, dump_model_indent2_bytes, dumps_indent2
from tests.factories import make_exchange

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


def _floats() -> list[float]:
    rng = random.Random(7)
    values = [0.0, -0.0, 5e-324, 1.7976931348623157e308, 1.0, 100.0, 1e15, 1e16, 1e-4, 1e-5]
    for exponent in range(-320, 308):
        values += [rng.random() * 10.0**exponent, -rng.random() * 10.0**exponent]
    values += [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(2000)]
    return [v for v in values if math.isfinite(v)]


MODEL_SHAPES: list[Any] = [
    *SHAPES[:11],
    _floats(),
    {"k": _floats()[:50], "nested": [{"x": 1e-9}, [2.5e-05, [7e22]]]},
    # number-like text inside strings stays as it is
    {"text": '": 1e-9\n  0.00001\n', "t2": "  1e-9", "t3": '\\": 1e-09'},
    {"none": None, "list": [None, {"a": None}]},
    [float("nan"), float("inf")],
    {"surrogate": "\ud800"},
]


@pytest.mark.parametrize("value", MODEL_SHAPES, ids=range(len(MODEL_SHAPES)))
def test_a_models_indent2_text_is_its_json_dump_through_the_standard_library(value: Any) -> None:
    model = JsonBody(value=value)
    expected = dumps_indent2(model.model_dump(mode="json", exclude_none=True))
    assert dump_model_indent2(model) == expected


@pytest.mark.parametrize("value", MODEL_SHAPES, ids=range(len(MODEL_SHAPES)))
def test_a_models_indent2_bytes_are_its_indent2_text_in_utf8(value: Any) -> None:
    model = JsonBody(value=value)
    try:
        expected = dump_model_indent2(model).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: refused as encoding the text refuses it
        with pytest.raises(UnicodeEncodeError):
            dump_model_indent2_bytes(model)
        return
    assert dump_model_indent2_bytes(model) == expected


def _realistic_cassette() -> Cassette:
    """Unary and streamed exchanges whose bodies hold big integers, floats pydantic-core
    spells apart from ``repr``, non-ASCII text and escapes."""
    odd = {
        "big": 10**40,
        "negative": -(2**70),
        "floats": [1e-9, 2.5e-05, 0.1, 1e16, -0.0],
        "text": 'é 日本 😀 \u2028 tab \t quote " nl \n ctl \x01',
    }
    exchanges = [make_exchange(0, request_body={"contents": [], "extra": odd})]
    exchanges.append(make_exchange(1, response_body={"candidates": [], "usage": odd}))
    exchanges.append(make_exchange(2, stream_chunks=[{"text": "日本"}, odd, {"n": 10**30}]))
    exchanges.append(make_exchange(3, stream_chunks=[{"a": 1}], complete=False))
    return Cassette(name="realistic é", upstream="https://example.invalid", exchanges=exchanges)


def test_a_saved_cassette_is_the_standard_librarys_indent2_text(tmp_path: Path) -> None:
    cassette = _realistic_cassette()
    reference = json.dumps(
        cassette.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False
    )
    written = save_cassette(cassette, tmp_path / "r.cassette.json").read_bytes()
    assert written == (reference + "\n").encode("utf-8")
    assert written == dump_cassette(cassette).encode("utf-8")
