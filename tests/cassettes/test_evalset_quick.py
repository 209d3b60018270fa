"""The quick EvalSet check (``rec check`` without pydantic) says "clean" only when it is.

:func:`cassettes._evalset_quick.certainly_clean` is one-sided: True must mean the strict
check (:func:`cassettes._checking.check_document`, pydantic's models) reports no problem and
no note (nor a warning). Every mutant of real EvalSets below is judged by both; the quick check may
send a clean file on to the strict check, never wave a broken one through.
"""

from __future__ import annotations

import copy
import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from cassettes._checking import check_document, check_file
from cassettes._evalset import dump_evalset
from cassettes._evalset_quick import certainly_clean, clean_evalset_file
from tests.factories import make_evalset, make_full_evalset, make_invocation
from tests.script_loading import load_script

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_EVALSETS = sorted(ROOT.glob("examples/*/*/*.evalset.json"))

_EVENTS_CASE = {
    "eval_id": "events",
    "conversation": [
        {
            "invocation_id": "e-1",
            "user_content": {"role": "user", "parts": [{"text": "Turn on the lights"}]},
            "final_response": {
                "role": "model",
                "parts": [{"text": "Done.", "thought_signature": "c2lnbmF0dXJl"}],
            },
            "intermediate_data": {
                "invocation_events": [
                    {
                        "author": "home_agent",
                        "content": {
                            "role": "model",
                            "parts": [
                                {
                                    "function_call": {
                                        "id": "c1",
                                        "name": "set_lights",
                                        "args": {"on": True},
                                    },
                                    "thoughtSignature": "QUJD",
                                }
                            ],
                        },
                        "usage_metadata": {
                            "prompt_token_count": 12,
                            "candidates_token_count": 3,
                            "traffic_type": "ON_DEMAND",
                        },
                        "model_version": "gemini-2.5-flash",
                    },
                    {
                        "author": "home_agent",
                        "content": {
                            "role": "user",
                            "parts": [
                                {
                                    "functionResponse": {
                                        "id": "c1",
                                        "name": "set_lights",
                                        "response": {"ok": True},
                                    }
                                }
                            ],
                        },
                    },
                ]
            },
            "creation_timestamp": 1764800000.5,
            "duration": 1.25,
        }
    ],
    "session_input": {"app_name": "home", "user_id": "u", "state": {"n": 1}},
    "creationTimestamp": 1764800000,
    "final_session_state": {},
}


def _seeds() -> list[Any]:
    invocation = make_invocation(
        "What's the weather in Paris?",
        final_text="Sunny and 21 degrees in Paris.",
        tool_calls=[("get_weather", {"city": "Paris"}), ("get_time", None)],
        tool_responses=[("get_weather", {"forecast": "sunny"}), ("get_time", {"t": 12})],
    )
    built = json.loads(dump_evalset(make_evalset([[invocation, make_invocation("Thanks")], "Hi"])))
    events = {"eval_set_id": "home", "eval_cases": [_EVENTS_CASE]}
    full = [
        json.loads(make_full_evalset().model_dump_json(exclude_none=True, by_alias=by_alias))
        for by_alias in (False, True)
    ]
    examples = [json.loads(path.read_text(encoding="utf-8")) for path in EXAMPLE_EVALSETS]
    return [built, events, *full, *examples]


_ODD_VALUES: list[Any] = [
    None,
    "",
    " ",
    "x",
    "user",
    "ON_DEMAND",
    "on_demand",
    "QQ",
    "QQ==",
    "!!!",
    "AHJlY__-",
    "AHJlY_/-",
    "QQ=",
    0,
    -1,
    1,
    1.5,
    -0.5,
    10**20,
    2**63,
    1e300,
    float("nan"),
    float("inf"),
    True,
    False,
    [],
    [None],
    ["x", []],
    {},
    {"text": "hi"},
    {"colour": 1},
]


def _nodes(value: Any, out: list[Any]) -> list[Any]:
    if isinstance(value, dict):
        out.append(value)
        for item in value.values():
            _nodes(item, out)
    elif isinstance(value, list):
        out.append(value)
        for item in value:
            _nodes(item, out)
    return out


def _other_spelling(key: str) -> str:
    if "_" in key:
        head, *rest = key.split("_")
        return head + "".join(word.title() for word in rest)
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def _mutate(document: Any, rng: random.Random) -> Any:
    mutant = copy.deepcopy(document)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        node = rng.choice(_nodes(mutant, []))
        if isinstance(node, dict):
            action = rng.randrange(6)
            key = rng.choice(list(node)) if node else None
            if key is None or action == 0:
                added = rng.choice(
                    ["colour", "text", "eval_id", "role", "parts", "conversation_scenario"]
                    + ["function_response", "functionResponse", "invocation_events"]
                )
                node[added] = copy.deepcopy(rng.choice(_ODD_VALUES))
            elif action == 1:
                del node[key]
            elif action == 2:
                node[_other_spelling(key)] = node.pop(key)
            elif action == 3:
                node[_other_spelling(key)] = copy.deepcopy(node[key])
            elif action == 4 and isinstance(node[key], str):
                node[key] = rng.choice([node[key].upper(), node[key].lower(), node[key] + "="])
            else:
                node[key] = copy.deepcopy(rng.choice(_ODD_VALUES))
        elif node:
            action = rng.randrange(3)
            if action == 0:
                node.clear()
            elif action == 1:
                node.append(copy.deepcopy(rng.choice(node)))
            else:
                node[rng.randrange(len(node))] = copy.deepcopy(rng.choice(_ODD_VALUES))
    return mutant


def test_real_eval_sets_are_told_clean_without_pydantic(tmp_path: Path) -> None:
    """Every seed (the examples' recorded eval sets, both intermediate shapes) is clean to
    both checks: the quick one does the work for real files, not only for toy ones."""
    for index, seed in enumerate(_seeds()):
        assert check_document(seed, path="seed.evalset.json") == [], index
        scenario = any("conversation_scenario" in case for case in seed["eval_cases"])
        # a user-simulator scenario has rules of its own: the strict check reads it
        assert certainly_clean(seed) is not scenario, index
        if scenario:
            continue
        file = tmp_path / f"seed{index}.evalset.json"
        file.write_text(json.dumps(seed), encoding="utf-8")
        assert clean_evalset_file(file)
        assert check_file(file) == []


def test_clean_means_the_strict_check_finds_nothing() -> None:
    rng = random.Random(20261204)
    seeds = _seeds()
    told_clean = strict_clean = 0
    for _ in range(4000):
        mutant = _mutate(rng.choice(seeds), rng)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")  # an enum value of no member warns and loads
            problems = check_document(mutant, path="mutant.evalset.json")
        if certainly_clean(mutant):
            told_clean += 1
            assert (problems, warned) == ([], []), json.dumps(mutant)[:3000]
        strict_clean += not problems
    assert told_clean > 100  # the mutants span both answers
    assert strict_clean > told_clean - 1
    assert 4000 - strict_clean > 1000


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("test_config.json", {"eval_set_id": "s", "eval_cases": []}),
        ("a.cassette.json", {"eval_set_id": "s", "eval_cases": []}),
        ("a.evalset.json", '{"eval_set_id": "s", "eval_cases": [}'),
    ],
)
def test_other_files_go_to_the_strict_check(name: str, body: object, tmp_path: Path) -> None:
    file = tmp_path / name
    file.write_text(body if isinstance(body, str) else json.dumps(body), encoding="utf-8")
    assert not clean_evalset_file(file)


def test_generated_shape_matches_the_models() -> None:
    """Drift fails here: regenerate with ``python tools/generate_evalset_shape.py``."""
    module = load_script(ROOT / "tools" / "generate_evalset_shape.py")
    current = (ROOT / "cassettes" / "_evalset_shape.py").read_text(encoding="utf-8")
    assert current == module.generate(), (
        "cassettes/_evalset_shape.py is stale: run `python tools/generate_evalset_shape.py`"
    )
