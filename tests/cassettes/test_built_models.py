"""Models made without validation from values of their fields' types equal validated ones."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from cassettes import _genai_types as genai_types
from cassettes._built_models import built
from cassettes._evalset import InvocationEvent
from replayer._reports.timeline import ModelCallStep, ToolCallStep

_USAGE = genai_types.GenerateContentResponseUsageMetadata(prompt_token_count=3)
_CONTENT = genai_types.Content(role="model", parts=[genai_types.Part(text="hi")])


@pytest.mark.parametrize(
    ("model", "fields", "given"),
    [
        pytest.param(
            InvocationEvent,
            {
                "author": "agent",
                "content": _CONTENT,
                "grounding_metadata": None,
                "usage_metadata": _USAGE,
                "model_version": "m",
            },
            ("author", "content", "usage_metadata", "model_version"),
            id="event",
        ),
        pytest.param(
            ToolCallStep, {"name": "f", "args": {"a": [1]}, "response": None}, None, id="tool"
        ),
        pytest.param(
            ModelCallStep,
            {
                "exchange_id": 4,
                "model": "gemini",
                "method": "generateContent",
                "streamed": True,
                "agent": None,
                "latency_ms": 1.5,
                "first_chunk_ms": 0.5,
                "prompt_tokens": 1,
                "candidates_tokens": None,
                "total_tokens": 2,
                "text": "t",
                "tool_calls": [],
            },
            None,
            id="model-call",
        ),
    ],
)
def test_built_is_what_validation_of_the_same_arguments_makes(
    model: type[BaseModel], fields: dict[str, Any], given: tuple[str, ...] | None
) -> None:
    arguments = {name: fields[name] for name in given or fields}
    validated = model(**arguments)
    made = built(model, dict(fields), given)
    assert made == validated
    assert made.model_fields_set == validated.model_fields_set
    assert made.model_dump_json(exclude_unset=True) == validated.model_dump_json(exclude_unset=True)
    assert made.model_dump_json() == validated.model_dump_json()
    assert list(made.__dict__) == list(model.model_fields)
