"""Generate ``cassettes/_evalset_shape.py``: the EvalSet schema as plain data, for ``rec check``.

``rec check`` of a clean EvalSet must start in a blink, and importing pydantic and building
the EvalSet validator costs several times a bare ``python``. This script walks the core
schema pydantic builds for :class:`cassettes._evalset.EvalSet` and writes it as nested
tuples that :mod:`cassettes._evalset_quick` reads without pydantic. The walk refuses any
schema feature it does not know (a string length, a new validator), so a change to the
models that the quick check could get wrong fails here, not in a user's pre-commit hook.
``tests/cassettes/test_evalset_quick.py`` regenerates the data from the models and fails
when it differs::

    python tools/generate_evalset_shape.py          # rewrite cassettes/_evalset_shape.py
    python tools/generate_evalset_shape.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "cassettes" / "_evalset_shape.py"
COMMAND = "python tools/generate_evalset_shape.py"

CHECKS = {
    "EvalSet._unique_eval_ids": "unique_eval_ids",
    "EvalCase._exactly_one_conversation": "one_conversation",
    "Invocation._user_turn_can_be_sent": "sendable_user_turn",
}
"""The model validators the quick check knows, by qualified name, and its name for each."""
DISCRIMINATORS = {"_intermediate_shape": "intermediate_shape"}
"""The union discriminators the quick check knows, and its name for each."""

_PRELUDE = '''"""The EvalSet schema as plain data, read by the quick check (no pydantic).

Generated from the pydantic models of :mod:`cassettes._evalset` by ``{command}``; do not edit.

``SHAPES`` maps a model name to ``["model", fields, check]``: each field is ``[keys, node,
required]`` (``keys``: the spellings that name it), ``check`` the name of the model
validator's quick twin or null. A node is ``[kind, ...]``: ``any``, ``str``, ``bool``,
``int``, ``bytes`` (base64 text), ``none``, ``["float", ge, le]``, ``["nullable", node]``,
``["list", node]``, ``["dict", key, value]``, ``["tuple", nodes]``, ``["literal", values]``,
``["ref", model]``, ``["tagged", discriminator, {{tag: node}}]``.

The data is JSON text, not Python literals: one string constant compiles in no time where
a few hundred nested tuples cost tens of milliseconds whenever no ``.pyc`` is cached
(``PYTHONDONTWRITEBYTECODE``, read-only installs).
"""

# ruff: noqa: E501
from __future__ import annotations

import json
from typing import Any

__all__ = ["ROOT", "SHAPES"]

ROOT = {root!r}
SHAPES: dict[str, Any] = json.loads(
    r"""
{shapes}
"""
)
'''

_PLAIN = {"any", "str", "bool", "int", "bytes", "none"}
_QUIET_KEYS = {"type", "metadata", "ref"}


class _Walker:
    def __init__(self, definitions: list[dict[str, Any]]) -> None:
        self.by_ref = {d["ref"]: d for d in definitions}
        self.shapes: dict[str, Any] = {}
        self.classes: dict[str, type] = {}

    def _only(self, schema: dict[str, Any], *allowed: str) -> None:
        unknown = set(schema) - _QUIET_KEYS - set(allowed)
        if unknown:
            kind = schema["type"]
            raise SystemExit(f"unknown {kind} schema keys {sorted(unknown)}: teach {COMMAND}")

    def node(self, schema: dict[str, Any]) -> Any:  # noqa: C901
        kind = schema["type"]
        if kind in _PLAIN:
            self._only(schema)
            return (kind,)
        if kind == "float":
            self._only(schema, "ge", "le", "allow_inf_nan")
            return ("float", schema.get("ge"), schema.get("le"))
        if kind == "nullable":
            self._only(schema, "schema")
            return ("nullable", self.node(schema["schema"]))
        if kind == "default":
            self._only(schema, "schema", "default", "default_factory", "default_factory_takes_data")
            return self.node(schema["schema"])
        if kind == "list":
            self._only(schema, "items_schema")
            return ("list", self.node(schema.get("items_schema", {"type": "any"})))
        if kind == "dict":
            self._only(schema, "keys_schema", "values_schema")
            return (
                "dict",
                self.node(schema.get("keys_schema", {"type": "any"})),
                self.node(schema.get("values_schema", {"type": "any"})),
            )
        if kind == "tuple":
            self._only(schema, "items_schema")
            return ("tuple", tuple(self.node(item) for item in schema["items_schema"]))
        if kind == "literal":
            self._only(schema, "expected")
            return ("literal", tuple(schema["expected"]))
        if kind == "enum":
            self._only(schema, "cls", "members", "sub_type", "missing")
            values = tuple(member.value for member in schema["members"])
            if schema.get("sub_type") != "str" or not all(isinstance(v, str) for v in values):
                raise SystemExit(f"enum {schema['cls']} is not of strings: teach {COMMAND}")
            return ("literal", values)
        if kind == "definition-ref":
            self._only(schema, "schema_ref")
            return self.node(self.by_ref[schema["schema_ref"]])
        if kind == "tagged-union":
            self._only(
                schema,
                "choices",
                "discriminator",
                "custom_error_type",
                "custom_error_message",
                "custom_error_context",
            )
            name = DISCRIMINATORS.get(getattr(schema["discriminator"], "__name__", ""))
            if name is None:
                found = schema["discriminator"]
                raise SystemExit(f"unknown discriminator {found}: teach {COMMAND}")
            choices = {tag: self.node(choice) for tag, choice in schema["choices"].items()}
            return ("tagged", name, choices)
        if kind == "function-after":
            self._only(schema, "function", "schema")
            function = schema["function"]["function"]
            from cassettes._evalset import _CONTROL, _reportable
            from cassettes._evalset_quick import ID_CONTROL

            if function is _reportable and schema["schema"]["type"] == "str":
                self._only(schema["schema"])
                if ID_CONTROL.pattern != _CONTROL.pattern:
                    raise SystemExit(f"the id patterns differ: teach {COMMAND}")
                return ("id",)
            check = CHECKS.get(function.__qualname__)
            if check is None or schema["schema"]["type"] != "model":
                raise SystemExit(f"unknown validator {function.__qualname__}: teach {COMMAND}")
            return self.model(schema["schema"], check)
        if kind == "model":
            return self.model(schema, None)
        raise SystemExit(f"unknown schema type {kind!r}: teach {COMMAND}")

    def model(self, schema: dict[str, Any], check: str | None) -> Any:
        self._only(schema, "cls", "config", "custom_init", "root_model", "schema", "post_init")
        cls = schema["cls"]
        name = cls.__name__
        if self.classes.setdefault(name, cls) is not cls:
            raise SystemExit(f"two models are named {name}: teach {COMMAND}")
        if schema.get("custom_init") or schema.get("root_model") or schema.get("post_init"):
            raise SystemExit(f"{name} has a custom __init__ or is a root model: teach {COMMAND}")
        if name not in self.shapes:
            self.shapes[name] = None  # a model that holds itself refers to this entry
            config = schema.get("config", {})
            inner = schema["schema"]
            if inner["type"] != "model-fields" or inner.get("computed_fields"):
                raise SystemExit(f"{name}: unknown model fields schema: teach {COMMAND}")
            fields = []
            for field_name, field in inner["fields"].items():
                alias = field.get("validation_alias")
                if alias is not None and not isinstance(alias, str):
                    raise SystemExit(f"{name}.{field_name}: alias choices: teach {COMMAND}")
                keys = []
                if alias is not None and config.get("validate_by_alias", True):
                    keys.append(alias)
                by_name = alias is None or config.get("validate_by_name", False)
                if by_name and field_name not in keys:
                    keys.append(field_name)
                required = field["schema"]["type"] != "default"
                fields.append((tuple(keys), self.node(field["schema"]), required))
            self.shapes[name] = ("model", tuple(fields), check)
        return ("ref", name)


def shapes() -> tuple[str, dict[str, Any]]:
    """The root model's name and every model's shape, walked from the live EvalSet models."""
    from cassettes._evalset import EvalSet

    EvalSet.model_rebuild()
    schema = EvalSet.__pydantic_core_schema__
    definitions = schema.get("definitions", []) if schema["type"] == "definitions" else []
    walker = _Walker(definitions)
    root = walker.node(schema["schema"] if schema["type"] == "definitions" else schema)
    return root[1], walker.shapes


def _json_lines(found: dict[str, Any]) -> str:
    """The shapes as JSON with one field a line (readable in review, parsed in a blink)."""
    lines = ["{"]
    for i, (name, (kind, fields, check)) in enumerate(found.items()):
        lines.append(f"  {json.dumps(name)}: [{json.dumps(kind)}, [")
        lines += [
            f"    {json.dumps(f)}" + ("," if j < len(fields) - 1 else "")
            for j, f in enumerate(fields)
        ]
        lines.append(f"  ], {json.dumps(check)}]" + ("," if i < len(found) - 1 else ""))
    lines.append("}")
    text = "\n".join(lines)
    if json.loads(text) != json.loads(json.dumps(found)):
        raise SystemExit("the shape JSON does not read back as written")
    return text


def generate() -> str:
    """The text of ``cassettes/_evalset_shape.py``, formatted as ruff formats it."""
    root, found = shapes()
    shapes_json = _json_lines(found)
    if '"""' in shapes_json or "\\" in shapes_json:
        raise SystemExit(f"the shape JSON holds quotes or backslashes: teach {COMMAND}")
    text = _PRELUDE.format(command=COMMAND, root=root, shapes=shapes_json)
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    text = generate()
    if args.check:
        if TARGET.read_text(encoding="utf-8") != text:
            raise SystemExit(f"{TARGET} is stale: run `{COMMAND}`")
        return
    TARGET.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
