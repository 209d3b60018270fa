"""Generate ``cassettes/_genai_types.py``: lean copies of the google-genai types EvalSets hold.

``rec check`` and every other reader of EvalSets must not pay for importing
``google.genai.types`` (hundreds of models). google-genai stays the single source: this
script walks the models reachable from :data:`ROOTS` and writes the same fields in the same
order, the same aliases (camelCase in, snake_case names), the same ``extra="forbid"``, the
same base64 bytes handling and the same case-insensitive enums, without docstrings or helper
methods. ``tests/cassettes/test_genai_types.py`` regenerates the file from the installed
google-genai and fails when it differs, so an upgrade that changes these types fails CI until
the file is regenerated::

    python tools/generate_genai_types.py          # rewrite cassettes/_genai_types.py
    python tools/generate_genai_types.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import enum
import inspect
import json
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pydantic
from google import genai
from google.genai import _common
from google.genai import types as genai_types

ROOTS = (
    "Content",
    "Part",
    "FunctionCall",
    "FunctionResponse",
    "Blob",
    "FileData",
    "GroundingMetadata",
    "GenerateContentResponseUsageMetadata",
)
"""The types rec's EvalSet models hold; everything they reach is generated too."""

TARGET = Path(__file__).resolve().parents[1] / "cassettes" / "_genai_types.py"
COMMAND = "python tools/generate_genai_types.py"

_SCALARS = {str: "str", int: "int", float: "float", bool: "bool", bytes: "bytes"}

_PRELUDE = '''"""google-genai's data types that EvalSets hold, as lean pydantic models.

Generated from google-genai {version} by ``{command}``; do not edit.

Same fields, aliases, ``extra="forbid"``, base64 bytes and case-insensitive enums as
``google.genai.types``, so EvalSets validate and serialise exactly as with google-genai,
without importing it (hundreds of models, most of a second). Where the runtime needs
google-genai's own objects (ADK's Runner and evaluators), convert at that boundary:
``types.Content.model_validate(lean.model_dump(exclude_none=True))``.
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, Literal

from cassettes._genai_base import CaseInsensitiveEnum, GenaiModel

__all__ = {names}
'''

_EXPECTED_CONFIG = {
    "alias_generator",
    "populate_by_name",
    "from_attributes",
    "protected_namespaces",
    "extra",
    "arbitrary_types_allowed",
    "ser_json_bytes",
    "val_json_bytes",
    "ignored_types",
    "defer_build",
}
"""google-genai's config keys ``cassettes/_genai_base.py`` reproduces (a new one stops here)."""


def _closure() -> tuple[dict[str, type[pydantic.BaseModel]], dict[str, type[enum.Enum]]]:  # noqa: C901
    models: dict[str, type[pydantic.BaseModel]] = {}
    enums: dict[str, type[enum.Enum]] = {}

    def visit_annotation(annotation: Any) -> None:
        if typing.get_origin(annotation) is not None:
            for arg in typing.get_args(annotation):
                visit_annotation(arg)
        elif isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
            visit_model(annotation)
        elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            if not issubclass(annotation, _common.CaseInSensitiveEnum):
                raise SystemExit(f"{annotation.__name__}: not a CaseInSensitiveEnum")
            enums[annotation.__name__] = annotation

    def visit_model(model: type[pydantic.BaseModel]) -> None:
        if model.__name__ in models:
            return
        if model.__bases__ != (_common.BaseModel,):
            raise SystemExit(f"{model.__name__}: unexpected bases {model.__bases__}")
        if model.model_config != _common.BaseModel.model_config:
            raise SystemExit(f"{model.__name__}: has its own model_config")
        decorators = model.__pydantic_decorators__
        validators = set(decorators.field_validators) | set(decorators.model_validators)
        serializers = set(decorators.field_serializers) | set(decorators.model_serializers)
        if validators - {"_check_field_type_mismatches"} or serializers:
            raise SystemExit(f"{model.__name__}: validators or serializers to reproduce")
        models[model.__name__] = model
        for field in model.model_fields.values():
            visit_annotation(field.annotation)

    if set(_common.BaseModel.model_config) != _EXPECTED_CONFIG:
        raise SystemExit("google-genai's BaseModel config changed: update cassettes/_genai_base.py")
    for root in ROOTS:
        visit_model(getattr(genai_types, root))
    return models, enums


def _render(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is type(None):
        return "None"
    if annotation is Any:
        return "Any"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_render(arg) for arg in args)
    if origin is typing.Literal:
        return f"Literal[{', '.join(json.dumps(arg) for arg in args)}]"
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_render(arg) for arg in args)}]"
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if isinstance(annotation, type) and issubclass(annotation, (pydantic.BaseModel, enum.Enum)):
        return annotation.__name__
    raise SystemExit(f"unsupported annotation {annotation!r}: teach the generator")


def _summary(cls: type) -> str:
    doc = inspect.cleandoc(cls.__doc__ or cls.__name__).split("\n\n")[0]
    line = " ".join(doc.split()).replace("\\", "\\\\").replace('"', "'")
    return line if line.endswith(".") else line + "."


def generate() -> str:
    """The module text for the installed google-genai."""
    models, enums = _closure()
    out = [
        _PRELUDE.format(
            version=genai.__version__, command=COMMAND, names=json.dumps(sorted([*models, *enums]))
        )
    ]
    for name in sorted(enums):
        out += [
            "",
            f"class {name}(CaseInsensitiveEnum):",
            f'    """{_summary(enums[name])}"""',
            "",
        ]
        for member, value in enums[name].__members__.items():
            out.append(f"    {member} = {json.dumps(value.value)}")
        out.append("")
    for name in sorted(models):
        model = models[name]
        out += ["", f"class {name}(GenaiModel):", f'    """{_summary(model)}"""', ""]
        for field_name, field in model.model_fields.items():
            if field.default is not None or field.default_factory is not None:
                raise SystemExit(f"{name}.{field_name}: a default other than None")
            out.append(f"    {field_name}: {_render(field.annotation)} = None")
        out.append("")
    return _formatted("\n".join(out))


def _formatted(text: str) -> str:
    """The text as ``ruff format`` leaves it (the repository's formatter; CI checks it)."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate cassettes/_genai_types.py")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    parser.add_argument("--stdout", action="store_true", help="print instead of writing")
    options = parser.parse_args(argv)
    text = generate()
    if options.stdout:
        sys.stdout.write(text)
    elif options.check:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} is out of date: run `{COMMAND}`", file=sys.stderr)
            return 1
    else:
        TARGET.write_text(text, encoding="utf-8")
        print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
