"""OpenAI and Anthropic calls: keyed on their endpoint, issued ids by order, misses in their terms,
and read as conversations by the traffic-only EvalSet."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from cassettes._cassette import (
    Exchange,
    JsonBody,
    RecordedRequest,
    RecordedResponse,
    SseBody,
    SseEvent,
)
from cassettes._divergence import explain_miss
from cassettes._evalset import invocation_tool_calls, invocation_tool_responses
from cassettes._extraction import evalset_from_exchanges
from cassettes._matching import MatchIndex
from cassettes._providers import canonical_ids, provider_route

SYSTEM = "You are a weather assistant."


@pytest.mark.parametrize(
    ("path", "route"),
    [
        pytest.param("/v1/chat/completions", "/openai/chat/completions", id="openai-upstream"),
        pytest.param(
            "/api/v1/chat/completions", "/openai/chat/completions", id="prefixed-upstream"
        ),
        pytest.param("/openai/chat/completions", "/openai/chat/completions", id="openai-mount"),
        pytest.param("/v1/messages", "/anthropic/v1/messages", id="anthropic-upstream"),
        pytest.param("/anthropic/v1/messages", "/anthropic/v1/messages", id="anthropic-mount"),
        pytest.param("/v1beta/models/m:generateContent", None, id="gemini"),
        pytest.param("/rates/latest", None, id="a-tool-api"),
    ],
)
def test_provider_route(path: str, route: str | None) -> None:
    assert provider_route(path) == route


def test_issued_ids_keep_their_links_by_order() -> None:
    body = {
        "messages": [
            {"role": "assistant", "tool_calls": [{"id": "call_X", "type": "function"}]},
            {"role": "tool", "tool_call_id": "call_X", "content": "{}"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_Y"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_Y"}]},
        ]
    }
    again = json.loads(json.dumps(body).replace("call_X", "call_Z").replace("toolu_Y", "toolu_W"))
    assert canonical_ids(body) == canonical_ids(again)
    messages = canonical_ids(body)["messages"]
    assert messages[0]["tool_calls"][0]["id"] == messages[1]["tool_call_id"] == "id#0"
    assert messages[2]["content"][0]["id"] == messages[3]["content"][0]["tool_use_id"] == "id#1"


def _openai_body(
    question: str = "Weather in Rome?", *, call_id: str = "call_abc"
) -> dict[str, Any]:
    return {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": question},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": '{"sky": "cloudy"}'},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
    }


def _exchange(url: str, body: dict[str, Any], answer: Any, *, id: int = 0) -> Exchange:
    return Exchange(
        id=id,
        recorded_at=f"2026-01-01T12:00:0{id}.000000+00:00",
        request=RecordedRequest(method="POST", url=url, body=JsonBody(value=body)),
        response=RecordedResponse(status=200, body=answer),
    )


def _completion(text: str | None, calls: list[tuple[str, dict[str, Any]]] = ()) -> JsonBody:  # type: ignore[assignment]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for n, (name, args) in enumerate(calls)
        ]
    return JsonBody(
        value={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        }
    )


def _replayed(path: str, body: dict[str, Any]) -> RecordedRequest:
    return RecordedRequest(method="POST", url="http://rec.replay" + path, body=JsonBody(value=body))


def test_a_mount_request_replays_a_recording_of_any_base_url() -> None:
    recorded = _exchange(
        "http://127.0.0.1:8000/v1/chat/completions", _openai_body(), _completion("ok")
    )
    index = MatchIndex([recorded])
    assert index.lookup(_replayed("/openai/chat/completions", _openai_body())) is recorded


def test_other_tool_call_ids_still_match() -> None:
    recorded = _exchange(
        "https://api.openai.com/v1/chat/completions", _openai_body(), _completion("ok")
    )
    index = MatchIndex([recorded])
    request = _replayed("/openai/chat/completions", _openai_body(call_id="call_other"))
    assert index.lookup(request) is recorded


@pytest.mark.parametrize(
    ("change", "said"),
    [
        pytest.param(
            lambda b: b["messages"][3].update(content='{"sky": "rain"}'),
            "messages[3].content changed",
            id="tool-result",
        ),
        pytest.param(
            lambda b: b["tools"][0]["function"].update(description="Forecasts."),
            "tools[0]",
            id="tools",
        ),
        pytest.param(
            lambda b: b["messages"][0].update(content="Be terse."),
            "messages[0].content changed",
            id="system",
        ),
    ],
)
def test_a_miss_is_explained_in_openai_terms(change: Any, said: str) -> None:
    recorded = _exchange(
        "https://api.openai.com/v1/chat/completions", _openai_body(), _completion("ok")
    )
    index = MatchIndex([recorded])
    body = copy.deepcopy(_openai_body())
    change(body)
    request = _replayed("/openai/chat/completions", body)
    assert index.lookup(request) is None
    miss = explain_miss(request, index.nearest(request), cassette_path="weather.cassette.json")
    assert said in str(miss)


def _openai_conversation() -> list[Exchange]:
    first = {
        "model": "gpt-4o-mini",
        "messages": _openai_body()["messages"][:2],
        "tools": _openai_body()["tools"],
    }
    return [
        _exchange(
            "http://127.0.0.1:8000/v1/chat/completions",
            first,
            _completion(None, [("get_weather", {"city": "Rome"})]),
        ),
        _exchange(
            "http://127.0.0.1:8000/v1/chat/completions",
            _openai_body(call_id="call_0"),
            _completion("Cloudy in Rome."),
            id=1,
        ),
    ]


def _single_invocation(exchanges: list[Exchange]) -> Any:
    evalset = evalset_from_exchanges(exchanges, eval_set_id="weather", app_name="weather")
    assert len(evalset.eval_cases) == 1
    (invocation,) = evalset.eval_cases[0].conversation or []
    return invocation


def _assert_one_weather_call(invocation: Any) -> None:
    calls = [(c.name, c.args) for c in invocation_tool_calls(invocation)]
    assert calls == [("get_weather", {"city": "Rome"})]
    responses = [(r.name, r.response) for r in invocation_tool_responses(invocation)]
    assert responses == [("get_weather", {"sky": "cloudy"})]


def test_the_traffic_evalset_reads_openai_bodies() -> None:
    invocation = _single_invocation(_openai_conversation())
    assert invocation.user_content.parts[0].text == "Weather in Rome?"
    assert invocation.final_response.parts[0].text == "Cloudy in Rome."
    _assert_one_weather_call(invocation)


def test_the_traffic_evalset_reads_a_streamed_openai_answer() -> None:
    exchanges = _openai_conversation()
    events = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Cloudy "}}]},
        {"choices": [{"index": 0, "delta": {"content": "in Rome."}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    stream = SseBody(
        line_ending="\n",
        events=[SseEvent(offset_ms=i, data=e) for i, e in enumerate(events)]
        + [SseEvent(offset_ms=9, lines=["data: [DONE]"])],
    )
    exchanges[1] = exchanges[1].model_copy(
        update={"response": RecordedResponse(status=200, body=stream)}
    )
    invocation = _single_invocation(exchanges)
    assert invocation.final_response.parts[0].text == "Cloudy in Rome."


def test_the_traffic_evalset_reads_anthropic_bodies() -> None:
    url = "https://api.anthropic.com/v1/messages"
    asked = {"role": "user", "content": "Weather in Rome?"}
    called = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Rome"}}
        ],
    }
    answered = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"sky": "cloudy"}'}
        ],
    }

    def message(*blocks: dict[str, Any]) -> JsonBody:
        return JsonBody(
            value={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4",
                "content": list(blocks),
                "usage": {"input_tokens": 10, "output_tokens": 3},
            }
        )

    exchanges = [
        _exchange(
            url,
            {"model": "claude-sonnet-4", "system": SYSTEM, "messages": [asked]},
            message(called["content"][0]),
        ),
        _exchange(
            url,
            {"model": "claude-sonnet-4", "system": SYSTEM, "messages": [asked, called, answered]},
            message({"type": "text", "text": "Cloudy in Rome."}),
            id=1,
        ),
    ]
    invocation = _single_invocation(exchanges)
    assert invocation.user_content.parts[0].text == "Weather in Rome?"
    assert invocation.final_response.parts[0].text == "Cloudy in Rome."
    _assert_one_weather_call(invocation)
