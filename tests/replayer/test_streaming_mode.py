"""Which streaming mode a case was recorded in (pure: the cassette's URLs and user turns)."""

from __future__ import annotations

import pytest

from cassettes._cassette import Exchange
from replayer._streaming_mode import recorded_streaming
from tests.factories import (
    gemini_request,
    gemini_stream,
    make_evalset,
    make_exchange,
)


def _call(text: str, *, stream: bool, history: tuple[str, ...] = ()) -> Exchange:
    body = gemini_request([*history, text] if history else text)
    if stream:
        return make_exchange(request_body=body, stream_chunks=gemini_stream("Hi there you"))
    return make_exchange(request_body=body)


@pytest.mark.parametrize(
    ("exchanges", "expected"),
    [
        pytest.param([_call("Hello", stream=True)], "sse", id="streamed"),
        pytest.param([_call("Hello", stream=False)], "none", id="unary"),
        pytest.param(
            [_call("Other", stream=False), _call("Hello", stream=True)],
            "sse",
            id="the-case-s-own-call-decides",
        ),
        pytest.param(
            [_call("Later turn", stream=True, history=("Hello", "Hi"))],
            "sse",
            id="found-by-its-first-user-turn",
        ),
        pytest.param(
            [_call("Hello", stream=False), _call("Hello", stream=True)],
            "none",
            id="the-first-call-decides",
        ),
        pytest.param([_call("Other", stream=True)], "sse", id="not-found-all-streamed"),
        pytest.param(
            [_call("Other", stream=True), _call("More", stream=False)],
            "none",
            id="not-found-mixed",
        ),
        pytest.param([], "none", id="no-recording"),
    ],
)
def test_recorded_streaming(exchanges: list[Exchange], expected: str) -> None:
    [case] = make_evalset(["Hello"]).eval_cases
    assert recorded_streaming(case, exchanges) == expected


def test_tools_own_calls_are_not_model_calls() -> None:
    [case] = make_evalset(["Hello"]).eval_cases
    tool = _call("Other", stream=False).model_copy(update={"origin": "tool"})
    assert recorded_streaming(case, [tool, _call("Other", stream=True)]) == "sse"


def test_the_cli_spells_out_the_same_choices() -> None:
    from rec._replay import _STREAMING
    from replayer._streaming_mode import STREAMING_CHOICES

    assert _STREAMING == STREAMING_CHOICES


def test_an_unknown_streaming_mode_is_an_input_error() -> None:
    from cassettes._errors import InputError
    from replayer._replay_target import ReplayOptions

    with pytest.raises(InputError, match="--streaming"):
        ReplayOptions(streaming="bidi")  # type: ignore[arg-type]
