"""Miss explanations: the user learns which cassette, which recording, and what changed."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from cassettes._cassette import JsonBody, RecordedRequest
from cassettes._divergence import MISS_HTTP_STATUS, explain_miss, miss_error_body
from cassettes._errors import ReplayMiss
from cassettes._matching import MatchIndex, MatchRules
from rec.standin.replies import Reply, ScriptedResponder
from rec.standin.server import StandinGemini
from tests.cassettes.genai_requests import FAKE_KEY, SYSTEM, captured, exchange_for

CASSETTE = "recordings/weather.json"


def _body(name: str) -> Any:
    body = captured()[name].body
    assert isinstance(body, JsonBody)
    return json.loads(json.dumps(body.value))


def _changed(name: str, change: Any) -> RecordedRequest:
    body = _body(name)
    change(body)
    return captured()[name].model_copy(update={"body": JsonBody(value=body)})


def _grumpy(body: Any) -> None:
    body["systemInstruction"]["parts"][0]["text"] = SYSTEM.replace("helpful", "grumpy")


def _forecast(body: Any) -> None:
    body["contents"][2]["parts"][0]["functionResponse"]["response"]["forecast"] = "rain"


def _args(body: Any) -> None:
    body["contents"][1]["parts"][0]["functionCall"]["args"]["city"] = "Lyon"


def _add_tool(body: Any) -> None:
    body["tools"][0]["functionDeclarations"].insert(0, {"name": "get_news", "description": "News."})


def _drop_tool(body: Any) -> None:
    body["tools"][0]["functionDeclarations"].pop()


def _temperature(body: Any) -> None:
    body["generationConfig"]["temperature"] = 0.9


def _top_k(body: Any) -> None:
    body["generationConfig"]["topK"] = 40


def _longer(body: Any) -> None:
    body["contents"] += [
        {"role": "model", "parts": [{"text": "It is sunny."}]},
        {"role": "user", "parts": [{"text": "And tomorrow?"}]},
    ]


def _shorter(body: Any) -> None:
    del body["contents"][1:]


def _user_text(body: Any) -> None:
    body["contents"][0]["parts"][0]["text"] = "Weather in Lyon?"


def _edited(turn: str, edit: Any, expected: str, ident: str) -> Any:
    """A row: the recorded request of ``turn`` edited by ``edit``, and the diff line expected."""
    return pytest.param(turn, lambda: _changed(turn, edit), expected, id=ident)


@pytest.mark.parametrize(
    ("recorded", "request_", "expected"),
    [
        _edited(
            "second_turn",
            _grumpy,
            'systemInstruction changed: "You are a helpful assistant that answers questions '
            'about the weather." -> "You are a grumpy assistant that answers questions about '
            'the weather."',
            "system-instruction",
        ),
        _edited(
            "second_turn",
            _forecast,
            'contents[2].parts[0].functionResponse.response changed: {"city": "Paris", "forecast": '
            '"sunny"} -> {"city": "Paris", "forecast": "rain"}',
            "function-response",
        ),
        _edited(
            "second_turn",
            _args,
            'contents[1].parts[0].functionCall.args changed: {"city": "Paris"} -> {"city": "Lyon"}',
            "function-call-args",
        ),
        _edited(
            "first_turn",
            _add_tool,
            "tools[0].functionDeclarations: get_news added",
            "tool-added-not-shifted",
        ),
        _edited(
            "first_turn",
            _drop_tool,
            "tools[0].functionDeclarations: get_time removed",
            "tool-removed",
        ),
        _edited(
            "first_turn",
            _temperature,
            "generationConfig.temperature changed: 0.2 -> 0.9",
            "temperature",
        ),
        _edited("first_turn", _top_k, "generationConfig: topK added (40)", "config-added"),
        _edited(
            "second_turn",
            _longer,
            "contents: 2 turns added (the agent sent a longer history); first added: "
            'contents[3] model: text "It is sunny."',
            "longer-history",
        ),
        _edited(
            "second_turn",
            _shorter,
            "contents: 2 turns fewer (the agent sent a shorter history than recorded)",
            "shorter-history",
        ),
        _edited(
            "first_turn",
            _user_text,
            'contents[0].parts[0].text changed: "Weather in Paris?" -> "Weather in Lyon?"',
            "user-text",
        ),
        pytest.param(
            "first_turn",
            lambda: captured()["first_turn"].model_copy(
                update={"url": captured()["first_turn"].url.replace("2.0-flash", "2.5-pro")}
            ),
            "path changed: models/gemini-2.0-flash:generateContent -> "
            "models/gemini-2.5-pro:generateContent",
            id="model",
        ),
        pytest.param(
            "first_turn",
            lambda: captured()["stream"],
            "query: alt=sse added",
            id="stream-vs-unary",
        ),
        pytest.param(
            "first_turn",
            lambda: captured()["first_turn"].model_copy(update={"method": "GET", "body": None}),
            "method changed: POST -> GET",
            id="method",
        ),
    ],
)
def test_differences_read_like_the_request(recorded: str, request_: Any, expected: str) -> None:
    nearest = exchange_for(captured()[recorded], id=4)
    miss = explain_miss(request_(), nearest, cassette_path=CASSETTE)
    assert expected in miss.diff, miss.diff


def test_message_names_cassette_nearest_recording_and_fix() -> None:
    nearest = exchange_for(captured()["second_turn"], id=7)
    miss = explain_miss(_changed("second_turn", _grumpy), nearest, cassette_path=CASSETTE)
    text = str(miss)
    assert text.startswith(f"{CASSETTE}:exchanges[7]: no recording matches POST /v1beta/models/")
    assert "nearest is exchanges[7] (POST /v1beta/models/gemini-2.0-flash:generateContent)" in text
    assert "rec start" in text and "--record-missing" in text
    assert "loosen matching with --ignore PATH (here: --ignore systemInstruction)" in text
    assert text.splitlines()[1].startswith("  systemInstruction changed:")
    assert miss.where == "exchanges[7]" and miss.path == CASSETTE
    assert isinstance(miss, AssertionError)


def test_long_values_are_cut_around_the_change() -> None:
    long_a = "Preamble. " * 40 + "The answer is blue." + " Trailer." * 40
    long_b = long_a.replace("blue", "red")
    recorded = _changed("first_turn", lambda b: b["contents"][0]["parts"][0].update(text=long_a))
    request = _changed("first_turn", lambda b: b["contents"][0]["parts"][0].update(text=long_b))
    miss = explain_miss(request, exchange_for(recorded), cassette_path=CASSETTE)
    (line,) = miss.diff
    assert len(line) < 240
    assert "blue" in line and "red" in line


def test_secrets_are_masked() -> None:
    recorded = _changed("first_turn", lambda b: b["contents"][0]["parts"][0].update(text="hello"))
    request = _changed(
        "first_turn", lambda b: b["contents"][0]["parts"][0].update(text=f"my key {FAKE_KEY}")
    )
    request = request.model_copy(update={"url": f"{request.url}?key={FAKE_KEY}"})
    miss = explain_miss(request, exchange_for(recorded), cassette_path=CASSETTE)
    assert FAKE_KEY not in str(miss)
    assert FAKE_KEY not in json.dumps(miss_error_body(miss))
    assert "AIza…(redacted)" in str(miss)


def test_ignore_paths_hide_their_differences() -> None:
    request = _changed("second_turn", lambda b: (_grumpy(b), _temperature(b)))
    rules = MatchRules(ignore_paths=("systemInstruction",))
    miss = explain_miss(request, exchange_for(captured()["second_turn"]), rules=rules)
    assert miss.diff == ["generationConfig.temperature changed: 0.2 -> 0.9"]


def test_many_differences_are_capped() -> None:
    def many(body: Any) -> None:
        body["generationConfig"].update({f"k{i:02d}": i for i in range(20)})

    miss = explain_miss(
        _changed("first_turn", many), exchange_for(captured()["first_turn"]), max_lines=5
    )
    assert len(miss.diff) == 6
    assert miss.diff[-1] == "... and 15 more differences"


def test_no_recording_at_all() -> None:
    miss = explain_miss(captured()["first_turn"], None, cassette_path=CASSETTE)
    assert str(miss).startswith(f"{CASSETTE}: no recording matches POST /v1beta/models/")
    assert "the cassette has no recordings" in str(miss)
    assert miss.diff == []


def test_miss_survives_pickling_for_xdist() -> None:
    miss = explain_miss(_changed("second_turn", _grumpy), exchange_for(captured()["second_turn"]))
    again = pickle.loads(pickle.dumps(miss))
    assert str(again) == str(miss) and again.diff == miss.diff


def test_index_nearest_feeds_the_explanation() -> None:
    """The replay path as the proxy runs it: lookup misses, nearest, explain."""
    names = ("first_turn", "second_turn", "no_tools")
    index = MatchIndex([exchange_for(captured()[n], id=i) for i, n in enumerate(names)])
    request = _changed("second_turn", _forecast)
    assert index.lookup(request) is None
    miss = explain_miss(request, index.nearest(request), cassette_path=CASSETTE)
    assert miss.where == "exchanges[1]"
    assert any(
        line.startswith("contents[2].parts[0].functionResponse.response changed")
        for line in miss.diff
    )


def test_error_body_is_the_google_envelope() -> None:
    miss = ReplayMiss("no recording matches POST /v1/x", path=CASSETTE, diff=["a changed: 1 -> 2"])
    assert miss_error_body(miss) == {
        "error": {"code": 404, "message": str(miss), "status": "NOT_FOUND"}
    }


@pytest.mark.parametrize(
    "stream", [pytest.param(False, id="unary"), pytest.param(True, id="stream")]
)
def test_real_client_raises_the_miss_at_once_even_with_adk_retries(stream: bool) -> None:
    """google-genai raises ClientError with the explanation, and ADK's retry list skips it."""
    from google import genai
    from google.genai import errors, types

    miss = explain_miss(_changed("second_turn", _grumpy), exchange_for(captured()["second_turn"]))
    reply = Reply(error=miss_error_body(miss))
    with StandinGemini(ScriptedResponder([reply], repeat_last=True)) as api:
        retry = types.HttpRetryOptions(
            attempts=3, initial_delay=0.01, http_status_codes=[408, 429, 500, 502, 503, 504]
        )
        client = genai.Client(
            api_key=FAKE_KEY, http_options=types.HttpOptions(base_url=api.url, retry_options=retry)
        )
        with pytest.raises(errors.ClientError) as caught:
            if stream:
                for _ in client.models.generate_content_stream(
                    model="gemini-2.0-flash", contents="hi"
                ):
                    pass
            else:
                client.models.generate_content(model="gemini-2.0-flash", contents="hi")
        client.close()
        assert len(api.requests) == 1
    assert caught.value.code == MISS_HTTP_STATUS
    assert "systemInstruction changed" in str(caught.value)
