"""One problem found in a file rec reads, and how a pydantic ``ValidationError`` becomes problems.

The models are the schema: a file is validated by its model (with ``extra="forbid"`` when
checking strictly), and every error pydantic reports becomes a :class:`Problem` that names
the JSON path as the file spells it (a key written in camelCase stays camelCase; a missing
key is named as the model names it), what is wrong in plain words, and the fix: "did you
mean" for an unknown key, the fix a model rule carries (``cassettes.invalid``), or what to
write instead of a wrongly typed value. What a file kind adds (ADK's own behaviour for an
unknown key) is a hook, ``describe_unknown``.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Tag, ValidationError
from pydantic.alias_generators import to_camel

from cassettes._errors import InputError, did_you_mean, one_line
from cassettes._validation import error_fix

__all__ = [
    "Problem",
    "UnknownKeyHook",
    "field_keys",
    "first_problem",
    "model_noun",
    "type_name",
    "validation_problems",
]


@dataclass(frozen=True)
class Problem:
    """A problem in a file: where it is, what is wrong and how to fix it."""

    path: str
    """The file."""
    where: str
    """JSON path inside it (``eval_cases[0].conversation[1].final_response``), or a line."""
    problem: str
    """What is wrong, one sentence without a trailing period."""
    fix: str
    """What to do about it."""
    severity: Literal["error", "note"] = "error"
    """``note`` for something worth knowing that is not wrong (a legacy format)."""

    def __str__(self) -> str:
        location = ":".join(part for part in (self.path, self.where) if part)
        label = "note: " if self.severity == "note" else ""
        return one_line(f"{location}: {label}{self.problem}. {self.fix}")


UnknownKeyHook = Callable[[type[BaseModel], str, tuple[Any, ...], str, str], tuple[str, str]]
"""``(model, key, loc, problem, fix) -> (problem, fix)``: a file kind's words for an unknown key."""


def type_name(value: object) -> str:
    """The JSON name of a value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def model_noun(model: type[BaseModel]) -> str:
    """How a message names a model: ``EvalCase`` -> "an eval case", ``Content`` -> "content"."""
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", model.__name__).lower()
    if words.rsplit(" ", 1)[-1] in ("content", "data", "metadata"):
        return words
    return ("an " if words[0] in "aeiou" else "a ") + words


def field_keys(model: type[BaseModel]) -> set[str]:
    """Every key that names a field of ``model``: its names and, where it has them, aliases."""
    keys = set(model.model_fields)
    generator = model.model_config.get("alias_generator")
    if generator is not None:
        keys |= {to_camel(name) for name in model.model_fields}
    return keys


def first_problem(problems: Sequence[Problem]) -> InputError:
    """The error a loader raises for a file with problems: the first, and how many more."""
    first = problems[0]
    more = f" (and {len(problems) - 1} more; run `rec check {first.path}`)" if problems[1:] else ""
    return InputError(first.problem + more, path=first.path, where=first.where, fix=first.fix)


# What a type error asks for: (in the problem, in the fix).
_EXPECTED = {
    "string_type": ("a string", "a valid string"),
    "int_type": ("a number", "a whole number"),
    "int_parsing": ("a number", "a whole number"),
    "int_from_float": ("a whole number", "a whole number"),
    "float_type": ("a number", "a number"),
    "float_parsing": ("a number", "a number"),
    "finite_number": ("a finite number", "a finite number"),
    "bool_type": ("true or false", "true or false"),
    "bool_parsing": ("true or false", "true or false"),
    "list_type": ("a list", "a list"),
    "tuple_type": ("a list", "a list"),
    "dict_type": ("an object", "an object"),
    "model_type": ("an object", "an object"),
    "model_attributes_type": ("an object", "an object"),
}

_MISSING = object()


@dataclass
class _Spot:
    """Where an error's location points in the document and in the models."""

    where: str
    model: type[BaseModel] | None
    """The model that holds the last key (None when a list or a free-form dict does)."""
    key: str | None
    annotation: Any
    """The type expected at the location, when known."""


def validation_problems(
    exc: ValidationError,
    *,
    path: str | Path,
    model: type[BaseModel] | Any,
    document: Any,
    describe_unknown: UnknownKeyHook | None = None,
) -> list[Problem]:
    """Every error of ``exc`` (raised validating ``document`` as ``model``) as a Problem.

    A misspelled required key is one problem, not two: the unknown key's "did you mean"
    names the missing one, so "missing required key" is left out for it.
    """
    explained = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        spot = _locate(model, document, loc)
        explained.append((error, loc, spot, *_explain(error, spot, loc, describe_unknown)))
    suggested = {
        (spot.where.rpartition(".")[0], match.group(1))
        for error, _, spot, _, fix in explained
        if error["type"] == "extra_forbidden" and (match := _SUGGESTION.search(fix))
    }
    problems: list[Problem] = []
    for error, _, spot, problem, fix in explained:
        if error["type"] == "missing" and (spot.where.rpartition(".")[0], spot.key) in suggested:
            continue
        found = Problem(str(path), spot.where or "(top level)", problem, fix)
        if found not in problems:
            problems.append(found)
    return problems


_SUGGESTION = re.compile(r'Did you mean "([^"]+)"')


def _explain(
    error: Any, spot: _Spot, loc: tuple[Any, ...], describe_unknown: UnknownKeyHook | None
) -> tuple[str, str]:
    kind = error["type"]
    if kind == "extra_forbidden" and spot.key is not None:
        container = spot.model
        allowed = sorted(container.model_fields) if container else []
        hint = did_you_mean(spot.key, allowed).strip()
        if not hint and container is not None:
            hint = did_you_mean(spot.key, sorted(field_keys(container) - set(allowed))).strip()
        what = model_noun(container) if container else "this object"
        problem = f'unknown key "{spot.key}" in {what}'
        fix = hint or f"Allowed keys: {', '.join(allowed)}"
        if describe_unknown is not None and container is not None:
            return describe_unknown(container, spot.key, loc, problem, fix)
        return problem, fix
    if kind == "missing" and spot.key is not None:
        return f'missing required key "{spot.key}"', f'Add "{spot.key}"'
    if kind in _EXPECTED:
        expected, wanted = _EXPECTED[kind]
        subject = ""
        if expected == "an object" and _is_model(spot.annotation):
            subject = model_noun(spot.annotation) + " "
        got = type_name(error["input"])
        if kind == "finite_number":
            got = str(error["input"])
        return f"{subject}must be {expected}, got {got}".strip(), f"Write {wanted} here"
    message = str(error["msg"]).removeprefix("Value error, ")
    return message, error_fix(error, "Fix that value")


def _locate(model: Any, document: Any, loc: tuple[Any, ...]) -> _Spot:
    annotation: Any = model
    value: Any = document
    parts: list[str] = []
    holder: type[BaseModel] | None = None
    key: str | None = None
    for item in loc:
        annotation, picked_member = _narrow(annotation, item)
        if picked_member:  # a union member's tag, not a key in the file
            continue
        if isinstance(item, int):
            parts.append(f"[{item}]")
            value = value[item] if isinstance(value, list) and 0 <= item < len(value) else _MISSING
            annotation = _element(annotation, item)
            holder, key = None, None
            continue
        item = str(item)
        if "[" in item:  # pydantic's own steps (``[key]``, ``function-after[...]``)
            continue
        if _is_model(annotation):
            name = _field_name(annotation, item)
            written = item
            if name is not None and not (isinstance(value, dict) and item in value):
                written = name  # a missing key: pydantic names it by alias
            holder, key = annotation, written
            parts.append(written)
            annotation = _field_annotation(annotation, name) if name else None
        else:
            holder, key = None, item
            parts.append(item)
            annotation = _dict_value(annotation)
        value = value.get(item, _MISSING) if isinstance(value, dict) else _MISSING
    where = "".join(p if p.startswith("[") else f".{p}" for p in parts).lstrip(".")
    return _Spot(where, holder, key, annotation)


def _narrow(annotation: Any, item: Any) -> tuple[Any, bool]:
    """``annotation`` without Optional/Annotated, and whether ``item`` picked a union member."""
    annotation = _unwrap(annotation)
    members = _union_members(annotation)
    for member in members if len(members) > 1 else []:
        if item in _tags(member):
            return _unwrap(member), True
    for member in members:  # a validator may name the subclass it validated with
        named = _subclass_named(_unwrap(member), item)
        if named is not None:
            return named, True
    return annotation, False


def _subclass_named(base: Any, name: Any) -> type[BaseModel] | None:
    if not _is_model(base) or not isinstance(name, str):
        return None
    subclass: type[BaseModel]
    for subclass in base.__subclasses__():
        if subclass.__name__ == name:
            return subclass
        found = _subclass_named(subclass, name)
        if found is not None:
            return found
    return None


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    members = _union_members(annotation)
    if len(members) == 1 and members[0] is not annotation:  # Optional[X] -> X
        return _unwrap(members[0])
    return annotation


def _union_members(annotation: Any) -> Sequence[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [m for m in typing.get_args(annotation) if m is not type(None)]
    return [annotation]


def _tags(member: Any) -> set[str]:
    """The names pydantic gives a union member in an error location."""
    names: set[str] = set()
    if typing.get_origin(member) is typing.Annotated:
        names |= {m.tag for m in typing.get_args(member)[1:] if isinstance(m, Tag)}
    base = _unwrap(member)
    if isinstance(base, type):
        names.add(base.__name__)
        if issubclass(base, BaseModel) and "kind" in base.model_fields:
            names |= {str(v) for v in typing.get_args(base.model_fields["kind"].annotation)}
    return names


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _field_name(model: type[BaseModel], key: str) -> str | None:
    if key in model.model_fields:
        return key
    for name, info in model.model_fields.items():
        if info.alias == key or to_camel(name) == key:
            return name
    return None


def _field_annotation(model: type[BaseModel], name: str) -> Any:
    if not model.__pydantic_complete__:
        model.model_rebuild()
    return model.model_fields[name].annotation


def _element(annotation: Any, index: int) -> Any:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is list and args:
        return args[0]
    if typing.get_origin(annotation) is tuple and index < len(args):
        return args[index]
    return None


def _dict_value(annotation: Any) -> Any:
    args = typing.get_args(annotation)
    return args[1] if typing.get_origin(annotation) is dict and len(args) == 2 else None
