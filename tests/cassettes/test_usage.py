"""Token kinds are counted the Gemini way for Gemini, OpenAI and Anthropic responses."""

from __future__ import annotations

from typing import Any

import pytest

from cassettes._cassette import JsonBody, SseBody, SseEvent
from cassettes._usage import call_figures
from replayer._prices import shipped_prices
from tests.factories import make_exchange


def _with_body(body: Any, url_model: str = "gemini-2.0-flash") -> Any:
    exchange = make_exchange(model=url_model)
    exchange.response.body = body
    return exchange


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            JsonBody(value={"usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 4,
                            "thoughtsTokenCount": 2, "cachedContentTokenCount": 5}}),
            {"prompt": 9, "candidates": 4, "thoughts": 2, "cached": 5},
            id="gemini",
        ),
        pytest.param(
            JsonBody(value={"usage": {"prompt_tokens": 9, "completion_tokens": 6,
                            "completion_tokens_details": {"reasoning_tokens": 2},
                            "prompt_tokens_details": {"cached_tokens": 5}}}),
            {"prompt": 9, "candidates": 4, "thoughts": 2, "cached": 5},
            id="openai",
        ),
        pytest.param(
            JsonBody(value={"usage": {"input_tokens": 3, "output_tokens": 4,
                            "cache_read_input_tokens": 5, "cache_creation_input_tokens": 1}}),
            {"prompt": 9, "candidates": 4, "thoughts": 0, "cached": 5},
            id="anthropic",
        ),
        pytest.param(
            SseBody(events=[
                SseEvent(offset_ms=50, data={"type": "message_start", "message": {
                    "usage": {"input_tokens": 9, "output_tokens": 1}}}),
                SseEvent(offset_ms=90, data={"type": "message_delta",
                                             "usage": {"output_tokens": 4}}),
            ]),
            {"prompt": 9, "candidates": 4, "thoughts": 0, "cached": 0},
            id="anthropic-stream",
        ),
    ],
)  # fmt: skip
def test_token_kinds_count_alike(body: Any, expected: dict[str, int]) -> None:
    assert call_figures(_with_body(body)).tokens == expected


def test_a_stream_first_chunk_is_its_first_event_offset() -> None:
    body = SseBody(events=[SseEvent(offset_ms=1200, data={}), SseEvent(offset_ms=1900, data={})])
    figures = call_figures(_with_body(body))
    assert figures.first_chunk_seconds == pytest.approx(1.2)
    assert not figures.has_usage


@pytest.mark.parametrize(
    ("model", "priced"),
    [
        pytest.param("gemini-2.0-flash-001", True, id="version-suffix"),
        pytest.param("claude-sonnet-4-5-20250929", True, id="dated"),
        pytest.param("gpt-4o-2024-08-06", True, id="dated-dashes"),
        pytest.param("gemini-2.0-flash-thinking", False, id="other-model"),
        pytest.param("made-up-model", False, id="unknown"),
    ],
)
def test_prices_found_by_name_or_version(model: str, priced: bool) -> None:
    tokens = {"prompt": 1, "candidates": 1, "thoughts": 0, "cached": 0}
    assert (shipped_prices().cost(model, tokens) is not None) is priced
