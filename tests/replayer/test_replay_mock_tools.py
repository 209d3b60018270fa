"""Mock-mode tool responses: matched by name + args, then call order, then the recording."""

from __future__ import annotations

from typing import Any

import pytest

from replayer._mock_tools import (
    RecordedToolCall,
    ToolNotRecorded,
    ToolResponseBook,
    recorded_tool_calls,
)
from tests.factories import make_invocation

WEATHER_PARIS = RecordedToolCall("get_weather", {"city": "Paris"}, {"sky": "sunny"})
WEATHER_ROME = RecordedToolCall("get_weather", {"city": "Rome"}, {"sky": "cloudy"})
FLIGHTS = RecordedToolCall("find_flights", {"origin": "Paris"}, {"flights": []})
POOL_TOKYO = RecordedToolCall("get_weather", {"city": "Tokyo"}, {"sky": "rain"})


@pytest.mark.parametrize(
    ("recorded", "calls", "expected"),
    [
        pytest.param(
            [WEATHER_PARIS], [("get_weather", {"city": "Paris"})], [{"sky": "sunny"}], id="exact"
        ),
        pytest.param(
            [WEATHER_PARIS, WEATHER_ROME],
            [("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Paris"})],
            [{"sky": "cloudy"}, {"sky": "sunny"}],
            id="by-args-not-order",
        ),
        pytest.param(
            [WEATHER_PARIS, FLIGHTS],
            [("get_weather", {"city": "Lyon"})],
            [{"sky": "sunny"}],
            id="falls-back-to-call-order-of-that-tool",
        ),
        pytest.param(
            [FLIGHTS],
            [("get_weather", {"city": "Tokyo"})],
            [{"sky": "rain"}],
            id="falls-back-to-the-recording",
        ),
        pytest.param(
            [WEATHER_PARIS],
            [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Paris"})],
            [{"sky": "sunny"}, None],
            id="each-recorded-call-answers-once",
        ),
    ],
)
def test_answers(
    recorded: list[RecordedToolCall], calls: list[tuple[str, dict[str, Any]]], expected: list[Any]
) -> None:
    book = ToolResponseBook([recorded], pool=[POOL_TOKYO])
    book.start_invocation(0)
    for (name, args), want in zip(calls, expected, strict=False):
        if want is None:
            with pytest.raises(ToolNotRecorded):
                book.answer(name, args)
        else:
            assert book.answer(name, args) == want


def test_unrecorded_call_names_tool_args_and_what_was_recorded() -> None:
    book = ToolResponseBook([[FLIGHTS]], label="travel.evalset.json case c1")
    book.start_invocation(0)
    with pytest.raises(ToolNotRecorded) as caught:
        book.answer("book_hotel", {"city": "Rome", "nights": 3})
    message = str(caught.value)
    assert 'book_hotel(city="Rome", nights=3)' in message
    assert 'find_flights(origin="Paris")' in message
    assert "--live-tools" in message


def test_invocation_pairs_calls_with_responses_in_order() -> None:
    invocation = make_invocation(
        "weather in Paris and Rome?",
        tool_calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        tool_responses=[("get_weather", {"sky": "sunny"}), ("get_weather", {"sky": "cloudy"})],
    )
    assert recorded_tool_calls(invocation) == [
        RecordedToolCall("get_weather", {"city": "Paris"}, {"sky": "sunny"}),
        RecordedToolCall("get_weather", {"city": "Rome"}, {"sky": "cloudy"}),
    ]


def test_the_recording_pool_holds_every_recorded_call_once(tmp_path: Any) -> None:
    # Read straight from the requests' contents: the same calls and responses as the
    # conversations an EvalSet is built from, each (name, args) once.
    from cassettes._cassette import load_cassette
    from cassettes._extraction import evalset_from_exchanges
    from replayer._mock_tools import recording_tool_calls
    from tests.agents.travel_recording import record_travel

    conversations = [
        ("What's the weather in Paris?", "Find flights from Paris to Rome on 2025-05-01"),
        ("What's the weather in Rome?", "What's the weather in Paris?"),
    ]
    record_travel(tmp_path, conversations)
    cassette = load_cassette(tmp_path / "travel.cassette.json")
    pool = recording_tool_calls([cassette])
    rebuilt = evalset_from_exchanges(cassette.exchanges, eval_set_id="pool")
    expected = [
        call
        for case in rebuilt.eval_cases
        for invocation in case.conversation or []
        for call in recorded_tool_calls(invocation)
    ]

    def key(call: RecordedToolCall) -> tuple[str, str, str]:
        import json

        return (call.name, json.dumps(call.args, sort_keys=True), json.dumps(call.response))

    assert len(expected) > len(pool) >= 3, expected  # Paris's weather was asked twice
    assert sorted(map(key, pool)) == sorted(set(map(key, expected)))
