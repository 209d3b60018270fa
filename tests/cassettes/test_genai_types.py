"""The lean google-genai types in ``cassettes._genai_types`` stay google-genai's, exactly.

The file is generated from the installed google-genai (``tools/generate_genai_types.py``);
these tests regenerate it and compare, and check that every model validates, rejects and
serialises (bytes, enums, aliases) as google-genai's does, and that every EvalSet rec reads
round-trips byte for byte as ADK's own models (built on google-genai) write it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pydantic
import pytest
from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet
from google.genai import types as genai_types

from cassettes import _genai_types
from cassettes._evalset import dump_evalset, load_evalset, parse_evalset
from tests.factories import full_value, make_evalset, make_full_evalset
from tests.script_loading import load_script

ROOT = Path(__file__).resolve().parents[2]
LEAN_MODELS = [
    name
    for name in _genai_types.__all__
    if isinstance(getattr(_genai_types, name), type)
    and issubclass(getattr(_genai_types, name), pydantic.BaseModel)
]
LEAN_ENUMS = sorted(set(_genai_types.__all__) - set(LEAN_MODELS))


def _generator() -> Any:
    return load_script(ROOT / "tools" / "generate_genai_types.py")


def test_generated_file_matches_the_installed_google_genai():
    """Drift fails here: regenerate with ``python tools/generate_genai_types.py``."""
    expected = _generator().generate()
    current = (ROOT / "cassettes" / "_genai_types.py").read_text(encoding="utf-8")
    version = re.compile(r"google-genai \d[\w.]*")
    assert version.sub("google-genai X", current) == version.sub("google-genai X", expected), (
        "cassettes/_genai_types.py is stale: run `python tools/generate_genai_types.py`"
    )


def test_eval_files_import_no_google_genai():
    code = (
        "import sys\n"
        "from cassettes._evalset import load_evalset\n"
        "from cassettes._checking import check_paths\n"
        "print(sorted(m for m in sys.modules if m.startswith(('google.genai', 'google.adk'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("name", LEAN_MODELS)
def test_fields_and_config_are_google_genais(name):
    lean, real = getattr(_genai_types, name), getattr(genai_types, name)
    lean.model_rebuild(), real.model_rebuild()  # both defer building until first use
    assert list(lean.model_fields) == list(real.model_fields)
    for key in ("extra", "populate_by_name", "ser_json_bytes", "val_json_bytes", "from_attributes"):
        assert lean.model_config.get(key) == real.model_config.get(key), key
    assert [f.alias for f in lean.model_fields.values()] == [
        f.alias for f in real.model_fields.values()
    ]


@pytest.mark.parametrize("name", LEAN_MODELS)
def test_every_field_validates_and_serialises_like_google_genai(name):
    lean, real = getattr(_genai_types, name), getattr(genai_types, name)
    data = full_value(real)
    ours, theirs = lean.model_validate(data), real.model_validate(data)
    for options in (
        {},
        {"exclude_none": True},
        {"by_alias": True},
        {"exclude_none": True, "exclude_defaults": True, "indent": 2},
    ):
        assert ours.model_dump_json(**options) == theirs.model_dump_json(**options), options
    assert ours.model_dump(mode="json") == theirs.model_dump(mode="json")
    # camelCase JSON in (what the wire and ADK's session JSON carry), base64 bytes included.
    wire = theirs.model_dump_json(by_alias=True, exclude_none=True)
    assert (
        lean.model_validate_json(wire).model_dump_json()
        == real.model_validate_json(wire).model_dump_json()
    )
    # At the boundary, converting either way gives equal objects.
    assert real.model_validate(ours.model_dump(exclude_none=True)) == theirs
    assert lean.model_validate(theirs.model_dump(exclude_none=True)) == ours


@pytest.mark.parametrize(
    ("name", "data"),
    [
        pytest.param("Part", {"txt": "hi"}, id="unknown-key"),
        pytest.param("Part", {"text": 5}, id="wrong-type"),
        pytest.param("Part", {"thought_signature": "not base64!"}, id="bad-base64"),
        pytest.param("Content", {"parts": {"text": "hi"}}, id="parts-object"),
        pytest.param("FunctionCall", {"name": "f", "args": []}, id="args-list"),
        pytest.param("PartialArg", {"null_value": "NONE"}, id="literal"),
        pytest.param("ModalityTokenCount", {"token_count": "many"}, id="int-string"),
    ],
)
def test_rejects_what_google_genai_rejects(name, data):
    lean, real = getattr(_genai_types, name), getattr(genai_types, name)
    with pytest.raises(pydantic.ValidationError) as ours:
        lean.model_validate(data)
    with pytest.raises(pydantic.ValidationError) as theirs:
        real.model_validate(data)
    assert [(e["type"], e["loc"]) for e in ours.value.errors()] == [
        (e["type"], e["loc"]) for e in theirs.value.errors()
    ]


@pytest.mark.parametrize("name", LEAN_ENUMS)
def test_enums_are_case_insensitive_and_keep_unknown_values_like_google_genai(name):
    lean, real = getattr(_genai_types, name), getattr(genai_types, name)
    assert [m.value for m in lean] == [m.value for m in real]
    member = list(real)[-1].value
    assert lean(member.lower()).value == real(member.lower()).value == member
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert lean("SOMETHING_NEW").value == real("SOMETHING_NEW").value == "SOMETHING_NEW"
    assert [str(w.message) for w in caught] == [f"SOMETHING_NEW is not a valid {name}"] * 2


# -- EvalSets round-trip exactly as ADK's models write them ---------------------------------


def _adk_dump(text: str) -> str:
    adk = AdkEvalSet.model_validate_json(text)
    return adk.model_dump_json(indent=2, exclude_none=True, exclude_defaults=True) + "\n"


def _evalset_texts() -> list[Any]:
    examples = sorted((ROOT / "examples").rglob("*.evalset.json"))
    params = [
        pytest.param(p.read_text(encoding="utf-8"), id=str(p.relative_to(ROOT))) for p in examples
    ]
    built = {"factory": make_evalset(["hi", "bye"]), "full": make_full_evalset()}
    params += [pytest.param(dump_evalset(e), id=name) for name, e in built.items()]
    return params


@pytest.mark.parametrize("text", _evalset_texts())
def test_evalsets_round_trip_byte_identically_through_lean_and_google_genai_models(text):
    ours = dump_evalset(parse_evalset(text))
    assert ours == text
    assert ours == _adk_dump(text)


def test_bytes_are_read_and_written_as_google_genai_does(tmp_path):
    """Standard and URL-safe base64 both load; bytes are written URL-safe, as ADK writes."""
    raw = {"role": "model", "parts": [{"text": "x", "thoughtSignature": "+/8A"}]}
    document = {
        "eval_set_id": "s",
        "eval_cases": [{"eval_id": "a", "conversation": [{"user_content": raw}]}],
    }
    path = tmp_path / "b.evalset.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    loaded = load_evalset(path)
    assert loaded.eval_cases[0].conversation[0].user_content.parts[0].thought_signature == (
        b"\xfb\xff\x00"
    )
    assert dump_evalset(loaded) == _adk_dump(json.dumps(document))
    assert '"thought_signature": "-_8A"' in dump_evalset(loaded)
