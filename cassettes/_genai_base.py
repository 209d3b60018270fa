"""The two bases of the generated lean google-genai types (``_genai_types.py``).

Hand-written because they are behaviour, not schema: google-genai's ``_common.BaseModel``
configuration and its ``CaseInSensitiveEnum``. ``tests/evalfiles/test_genai_types.py``
checks both against google-genai's own.
"""

from __future__ import annotations

import enum
import warnings
from typing import Any

import pydantic
from pydantic.alias_generators import to_camel

__all__ = ["CaseInsensitiveEnum", "GenaiModel"]


class CaseInsensitiveEnum(str, enum.Enum):
    """google-genai's ``CaseInSensitiveEnum``: any case loads; an unknown value warns and loads."""

    @classmethod
    def _missing_(cls, value: Any) -> Any:
        if not isinstance(value, str):
            # google-genai's raises AttributeError here (no .upper()), which pydantic does
            # not catch; no member is a ValueError, reported as the field's error
            return None
        try:
            return cls[value.upper()]
        except KeyError:
            try:
                return cls[value.lower()]
            except KeyError:
                warnings.warn(f"{value} is not a valid {cls.__name__}", stacklevel=2)
                try:
                    unknown = super().__new__(cls, value)
                    unknown._name_ = str(value)
                    unknown._value_ = value
                    return unknown
                except Exception:  # noqa: BLE001 - google-genai's behaviour
                    return None


class GenaiModel(pydantic.BaseModel):
    """google-genai's ``_common.BaseModel`` configuration: camelCase aliases, strict keys,
    base64 bytes, built on first use."""

    model_config = pydantic.ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        from_attributes=True,
        protected_namespaces=(),
        extra="forbid",
        arbitrary_types_allowed=True,
        ser_json_bytes="base64",
        val_json_bytes="base64",
        defer_build=True,
    )
