"""Pydantic models made from values already of their fields' types, without validation.

``BaseModel.model_construct`` walks the model's fields in Python to fill defaults and
aliases (about 4 us for a dozen fields); a caller that passes every field, in the model's
order, needs none of that. :func:`built` sets what ``model_construct`` sets (the fields, the
fields set, no extra, no private values) in about 1 us. Used where one report or one
extraction makes thousands of small models (``rec show``'s steps, an EvalSet's events).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["built"]

_M = TypeVar("_M", bound=BaseModel)

_setattr = object.__setattr__


def built(model: type[_M], fields: dict[str, Any], given: Iterable[str] | None = None) -> _M:
    """``model.model_construct(given, **fields)``: ``fields`` holds every field of ``model``
    (by name, in its order, each of its type); ``given`` names the fields set (all of
    ``fields`` when None), as validation of the same keyword arguments would record them."""
    made = model.__new__(model)
    _setattr(made, "__dict__", fields)
    _setattr(made, "__pydantic_fields_set__", set(fields if given is None else given))
    _setattr(made, "__pydantic_extra__", None)
    _setattr(made, "__pydantic_private__", None)
    return made
