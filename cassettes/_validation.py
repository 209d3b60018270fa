"""Validation rules that read well, for every pydantic model of a file rec reads.

A rule a model enforces beyond types (a status code in range, a threshold that is a finite
number) raises :func:`invalid`: a pydantic error that carries its fix, so the message that
reaches the user names the place, the problem and what to do. A part of a document that a
model validates separately (one criterion per metric) re-raises its errors under its own
place with :func:`nested_errors`, so every problem in the file is still reported at once.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

__all__ = ["Base64Text", "Milliseconds", "error_fix", "invalid", "nested_errors"]

MAX_MS = 7 * 24 * 3600 * 1000.0
Milliseconds = Annotated[float, Field(ge=0, le=MAX_MS, allow_inf_nan=False)]
"""A time within a recording, in milliseconds (at most a week: ``serve --realtime`` waits
that long)."""


def invalid(kind: str, problem: str, fix: str, **facts: Any) -> PydanticCustomError:
    """A validation error for a broken rule: ``raise invalid(...)`` inside a validator.

    Args:
        kind: the error type (``snake_case``), for code that tells errors apart.
        problem: what is wrong, one sentence without a trailing period; ``{name}`` places
            are filled from ``facts`` (so a value from the file is never read as a template).
        fix: what to do about it.
        facts: values named in ``problem``.
    """
    return PydanticCustomError(kind, problem, {**facts, "fix": fix})


def error_fix(error: Any, default: str) -> str:
    """The fix an error from :func:`invalid` carries, else ``default``."""
    context = error.get("ctx") or {}
    fix = context.get("fix")
    return fix if isinstance(fix, str) else default


def nested_errors(exc: ValidationError, prefix: tuple[str | int, ...]) -> list[InitErrorDetails]:
    """The errors of ``exc`` under ``prefix``, for ``ValidationError.from_exception_data``."""
    nested: list[InitErrorDetails] = []
    for error in exc.errors():
        context = error.get("ctx")
        # pydantic's own error types carry a documentation URL; custom ones do not.
        kind: Any = (
            error["type"]
            if "url" in error
            else PydanticCustomError(error["type"], error["msg"], context)
        )
        details: InitErrorDetails = {
            "type": kind,
            "loc": (*prefix, *error["loc"]),
            "input": error["input"],
        }
        if context is not None and "url" in error:
            details["ctx"] = context
        nested.append(details)
    return nested


def _decodes(value: str) -> str:
    try:
        b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(
            "base64",
            "not valid base64, so replay could not send these bytes",
            "Restore the file from version control, or re-record it",
        ) from None
    return value


Base64Text = Annotated[str, AfterValidator(_decodes)]
"""Bytes stored as standard base64 text that replay decodes and sends."""
