"""One problem found by ``rec check``, and the walker that collects them over a JSON document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic.alias_generators import to_camel

from cassettes import did_you_mean

__all__ = ["Problem", "Walker", "type_name"]


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
        return f"{location}: {label}{self.problem}. {self.fix}"


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


def _expected(types: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "a number", float: "a number", list: "a list", dict: "an object"}
    options = types if isinstance(types, tuple) else (types,)
    return " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in options))


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


@dataclass
class Walker:
    """Collects problems while walking one document."""

    path: str
    problems: list[Problem] = field(default_factory=list)

    def error(self, where: str, problem: str, fix: str) -> None:
        self.problems.append(Problem(self.path, where or "(top level)", problem, fix))

    def note(self, where: str, problem: str, fix: str) -> None:
        self.problems.append(Problem(self.path, where or "(top level)", problem, fix, "note"))

    @staticmethod
    def canonical(key: str, allowed: set[str], camel_ok: bool = True) -> str | None:
        """The snake_case field a key names, or None when it names none."""
        if key in allowed:
            return key
        if camel_ok:
            for name in allowed:
                if to_camel(name) == key:
                    return name
        return None

    def get(self, obj: dict[str, Any], snake: str, camel_ok: bool = True) -> Any:
        if snake in obj:
            return obj[snake]
        return obj.get(to_camel(snake)) if camel_ok else None

    def key_of(self, obj: dict[str, Any], snake: str) -> str:
        return snake if snake in obj or to_camel(snake) not in obj else to_camel(snake)

    def unknown_key(
        self,
        where: str,
        key: str,
        allowed: set[str],
        *,
        what: str,
        camel_ok: bool = True,
        adk_rejects: bool = False,
    ) -> None:
        hint = did_you_mean(key, sorted(allowed)).strip()
        if not hint and camel_ok:
            hint = did_you_mean(key, sorted(to_camel(a) for a in allowed)).strip()
        detail = " (ADK silently ignores it)"
        if adk_rejects:
            detail = " (ADK rejects the file, reporting a legacy-format error instead)"
        elif not camel_ok and key != key.lower():
            detail = " (keys here are snake_case only; ADK silently ignores this one)"
        self.error(
            _join(where, key),
            f'unknown key "{key}" in {what}{detail}',
            hint or f"Allowed keys: {', '.join(sorted(allowed))}",
        )

    def obj(self, value: object, where: str, what: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.error(
                where, f"{what} must be an object, got {type_name(value)}", "Write a JSON object"
            )
            return None
        return value

    def keys(
        self,
        value: object,
        where: str,
        allowed: set[str],
        *,
        what: str,
        camel_ok: bool = True,
        adk_rejects: bool = False,
    ) -> dict[str, Any] | None:
        obj = self.obj(value, where, what)
        if obj is None:
            return None
        for key in obj:
            if self.canonical(key, allowed, camel_ok) is None:
                self.unknown_key(
                    where, key, allowed, what=what, camel_ok=camel_ok, adk_rejects=adk_rejects
                )
        return obj

    def _typed(self, value: object, where: str, types: type | tuple[type, ...]) -> Any:
        options = types if isinstance(types, tuple) else (types,)
        if isinstance(value, bool) and bool not in options:
            ok = False
        else:
            ok = isinstance(value, options)
        if not ok:
            self.error(
                where,
                f"must be {_expected(types)}, got {type_name(value)}",
                f"Write {_expected(types)} here",
            )
            return None
        return value

    def require(
        self,
        obj: dict[str, Any],
        where: str,
        snake: str,
        types: type | tuple[type, ...],
        camel_ok: bool = True,
    ) -> Any:
        present = snake in obj or (camel_ok and to_camel(snake) in obj)
        if not present:
            self.error(_join(where, snake), f'missing required key "{snake}"', f'Add "{snake}"')
            return None
        key = self.key_of(obj, snake) if camel_ok else snake
        value = obj[key]
        if value is None:
            self.error(_join(where, key), "must not be null", f"Write {_expected(types)} here")
            return None
        return self._typed(value, _join(where, key), types)

    def optional(
        self,
        obj: dict[str, Any],
        where: str,
        snake: str,
        types: type | tuple[type, ...],
        camel_ok: bool = True,
    ) -> Any:
        value = self.get(obj, snake, camel_ok)
        if value is None:
            return None
        key = self.key_of(obj, snake) if camel_ok else snake
        return self._typed(value, _join(where, key), types)
