"""Conversation extraction: real traffic recorded through the proxy, then pure edge cases.

The end-to-end tests drive the real google-genai client and a real ADK Runner (the travel
agent: tools, session state, a sub-agent reached by ``transfer_to_agent``) against the
stand-in Gemini server through ``rec.record``; the EvalSet rec writes is compared with
ADK's own conversion of the same session (``convert_events_to_eval_invocations``).
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

from cassettes._cassette import load_cassette
from cassettes._evalset import (
    Invocation,
    InvocationEvents,
    invocation_tool_calls,
    invocation_tool_responses,
    load_evalset,
)
from cassettes._extraction import (
    Conversation,
    evalset_from_exchanges,
    extract_conversations,
    is_genuine_user_content,
)
from cassettes._genai_types import Content
from recorder._api import record
from tests.agents.travel_brain import CONVERSATION
from tests.factories import (
    function_call_content,
    function_response_content,
    gemini_request,
    gemini_response,
    gemini_stream,
    make_exchange,
    model_content,
    parts_summary,
    user_content,
)

MODEL = "gemini-2.0-flash"
STATE = {"user_name": "Ada", "home_city": "Paris"}


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather forecast for a city."""
    return {"city": city, "sky": "sunny"}


def get_time(city: str) -> dict[str, Any]:
    """Get the local time in a city."""
    return {"city": city, "time": "12:00"}


def _text(content: Content | None) -> str:
    return "".join(p.text or "" for p in (content.parts or [])) if content else ""


def _calls(invocation: Any) -> list[tuple[str, dict[str, Any] | None]]:
    return [(c.name, c.args) for c in invocation_tool_calls(invocation)]


def _recorded(tmp_path: Path, name: str = "r") -> list[Conversation]:
    cassette = load_cassette(tmp_path / f"{name}.cassette.json")
    return extract_conversations(cassette.exchanges)


# -- real google-genai traffic through the recording proxy ---------------------------------


def test_single_turn(standin, fake_api_key, tmp_path):
    with record(tmp_path, name="r", upstream=standin.url):
        client = genai.Client()  # keep a reference: a dropped Client closes its transport
        reply = client.models.generate_content(model=MODEL, contents="hi there")
    [conversation] = _recorded(tmp_path)
    [invocation] = conversation.invocations
    assert _text(invocation.user_content) == "hi there"
    assert _text(invocation.final_response) == reply.text
    [event] = invocation.intermediate_data.invocation_events
    assert event.content is None  # the final reply lives in final_response, as in ADK
    assert event.model_version == reply.model_version
    assert event.usage_metadata.total_token_count == reply.usage_metadata.total_token_count


def test_multi_turn_chat(standin, fake_api_key, tmp_path):
    with record(tmp_path, name="r", upstream=standin.url):
        client = genai.Client()
        chat = client.chats.create(model=MODEL)
        first = chat.send_message("hi there")
        second = chat.send_message("tell me more")
    [conversation] = _recorded(tmp_path)
    assert [_text(i.user_content) for i in conversation.invocations] == ["hi there", "tell me more"]
    assert [_text(i.final_response) for i in conversation.invocations] == [first.text, second.text]


def test_afc_with_parallel_calls(standin, fake_api_key, tmp_path):
    config = types.GenerateContentConfig(tools=[get_weather, get_time])
    with record(tmp_path, name="r", upstream=standin.url):
        client = genai.Client()
        reply = client.models.generate_content(
            model=MODEL, contents="weather and time in Paris please", config=config
        )
    [conversation] = _recorded(tmp_path)
    [invocation] = conversation.invocations
    assert _calls(invocation) == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"city": "Paris"}),
    ]
    responses = invocation_tool_responses(invocation)
    assert [(r.name, r.response) for r in responses] == [
        ("get_weather", {"result": get_weather("Paris")}),
        ("get_time", {"result": get_time("Paris")}),
    ]
    assert _text(invocation.final_response) == reply.text
    authors = [e.author for e in invocation.intermediate_data.invocation_events]
    assert authors == ["model", "model", "model"]


def test_streaming_chunks_are_merged(standin, fake_api_key, tmp_path):
    with record(tmp_path, name="r", upstream=standin.url):
        client = genai.Client()
        chunks = list(client.models.generate_content_stream(model=MODEL, contents="hi there"))
    assert len(chunks) > 1
    [conversation] = _recorded(tmp_path)
    [invocation] = conversation.invocations
    assert _text(invocation.final_response) == "".join(c.text for c in chunks)
    assert len(invocation.final_response.parts) == 1


def test_streaming_afc(standin, fake_api_key, tmp_path):
    config = types.GenerateContentConfig(tools=[get_weather])
    with record(tmp_path, name="r", upstream=standin.url):
        client = genai.Client()
        chunks = list(
            client.models.generate_content_stream(
                model=MODEL, contents="weather in Rome?", config=config
            )
        )
    [conversation] = _recorded(tmp_path)
    [invocation] = conversation.invocations
    assert _calls(invocation) == [("get_weather", {"city": "Rome"})]
    assert _text(invocation.final_response) == "".join(c.text or "" for c in chunks[-3:])


def test_two_concurrent_conversations_separate(standin, fake_api_key, tmp_path):
    async def chat(client: genai.Client, texts: list[str]) -> list[str]:
        session = client.aio.chats.create(model=MODEL)
        replies = []
        for text in texts:
            replies.append((await session.send_message(text)).text)
            await asyncio.sleep(0)
        return replies

    async def both() -> tuple[list[str], list[str], list[str]]:
        client = genai.Client()
        return await asyncio.gather(
            chat(client, ["hi there", "first follow-up", "first again"]),
            chat(client, ["hi there", "second follow-up", "second again"]),
            chat(client, ["hello from three", "third follow-up"]),
        )

    with record(tmp_path, name="r", upstream=standin.url):
        results = asyncio.run(both())
    conversations = _recorded(tmp_path)
    got = sorted([_text(i.user_content) for i in c.invocations] for c in conversations)
    assert got == sorted(
        [
            ["hi there", "first follow-up", "first again"],
            ["hi there", "second follow-up", "second again"],
            ["hello from three", "third follow-up"],
        ]
    )
    by_first = {tuple(_text(i.user_content) for i in c.invocations): c for c in conversations}
    for texts, replies in zip(
        (
            ("hi there", "first follow-up", "first again"),
            ("hi there", "second follow-up", "second again"),
            ("hello from three", "third follow-up"),
        ),
        results,
        strict=True,
    ):
        assert [_text(i.final_response) for i in by_first[texts].invocations] == replies


# -- a real ADK agent with tools, state and a sub-agent --------------------------------------


async def _run_travel(turns: tuple[str, ...], *, streaming: bool = False) -> Any:
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.runners import InMemoryRunner

    from tests.agents.travel.agent import root_agent

    runner = InMemoryRunner(agent=root_agent, app_name="travel")
    session = await runner.session_service.create_session(
        app_name="travel", user_id="user", state=dict(STATE)
    )
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
        events = runner.run_async(
            user_id="user", session_id=session.id, new_message=message, run_config=config
        )
        async for _ in events:
            pass
    done = await runner.session_service.get_session(
        app_name="travel", user_id="user", session_id=session.id
    )
    await runner.close()
    return done


def _comparable(invocation: Any) -> dict[str, Any]:
    data = invocation.intermediate_data
    events = [
        (
            e.author,
            parts_summary(e.content),
            e.model_version,
            e.usage_metadata.total_token_count if e.usage_metadata else None,
        )
        for e in data.invocation_events
    ]
    return {
        "user": _text(invocation.user_content),
        "final": _text(invocation.final_response),
        "events": events,
    }


@pytest.fixture(scope="module")
def travel_recording(tmp_path_factory, standin):
    """The four-turn travel conversation, run by ADK's Runner and recorded through the proxy."""
    out = tmp_path_factory.mktemp("travel")
    with pytest.MonkeyPatch.context() as patch:
        for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GEMINI_BASE_URL"):
            patch.delenv(name, raising=False)
        patch.setenv("GOOGLE_API_KEY", "AIzaFAKE-rec-test-key-00000000000000000")
        patch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
        with record(out, name="travel", upstream=standin.url, app_name="travel"):
            session = asyncio.run(_run_travel(CONVERSATION))
    return out, session


def test_adk_agent_evalset_matches_adks_own_conversion(travel_recording):
    from google.adk.evaluation.eval_case import get_all_tool_calls, get_all_tool_responses
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    out, session = travel_recording
    text = (out / "travel.evalset.json").read_text(encoding="utf-8")
    adk_set = AdkEvalSet.model_validate_json(text)  # what rec writes loads in ADK
    [case] = adk_set.eval_cases
    assert case.session_input.app_name == "travel"
    assert json.loads((out / "test_config.json").read_text())["criteria"] == {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 0.8,
    }
    expected = EvaluationGenerator.convert_events_to_eval_invocations(session.events)
    ours = load_evalset(out / "travel.evalset.json").eval_cases[0].conversation
    assert [_text(i.user_content) for i in ours] == list(CONVERSATION)
    assert [_comparable(i) for i in ours] == [_comparable(i) for i in expected]
    # ADK's scorer reads calls from all authors, transfer_to_agent included
    for mine, theirs in zip(case.conversation, expected, strict=True):
        assert [(c.name, c.args) for c in get_all_tool_calls(mine.intermediate_data)] == [
            (c.name, c.args) for c in get_all_tool_calls(theirs.intermediate_data)
        ]
        assert [(r.name, r.response) for r in get_all_tool_responses(mine.intermediate_data)] == [
            (r.name, r.response) for r in get_all_tool_responses(theirs.intermediate_data)
        ]
    all_calls = [c.name for i in ours for c in invocation_tool_calls(i)]
    assert "transfer_to_agent" in all_calls and "book_hotel" in all_calls


def test_adk_agent_streaming_sse_matches_adk(standin, tmp_path, monkeypatch):
    """ADK in SSE mode: partial chunks recorded, the merged reply extracted like ADK's."""
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaFAKE-rec-test-key-00000000000000000")
    monkeypatch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
    with record(tmp_path, name="sse", upstream=standin.url, app_name="travel"):
        session = asyncio.run(_run_travel(CONVERSATION[:3], streaming=True))
    cassette = load_cassette(tmp_path / "sse.cassette.json")
    assert any("streamGenerateContent" in e.request.url for e in cassette.exchanges)
    [conversation] = extract_conversations(cassette.exchanges)
    expected = EvaluationGenerator.convert_events_to_eval_invocations(session.events)
    assert [_comparable(i) for i in conversation.invocations] == [_comparable(i) for i in expected]


def test_adk_agent_authors_and_rewritten_history(travel_recording):
    out, _ = travel_recording
    cassette = load_cassette(out / "travel.cassette.json")
    [conversation] = extract_conversations(cassette.exchanges)
    assert conversation.agents == ["travel_agent", "booking_agent"]
    # the sub-agent's requests carry "For context:" rewrites, which are not user turns
    rewritten = [
        c
        for e in cassette.exchanges
        if e.origin is None  # the model's exchanges, not convert_currency's own call
        for c in e.request.body.value["contents"]
        if any(str(p.get("text", "")).startswith("For context:") for p in c.get("parts", []))
    ]
    assert rewritten and not any(is_genuine_user_content(c) for c in rewritten)
    assert len(conversation.invocations) == len(CONVERSATION)


def test_recording_evalset_loads_in_rec_and_has_slug_id(travel_recording):
    out, _ = travel_recording
    evalset = load_evalset(out / "travel.evalset.json")
    assert evalset.eval_set_id == "travel"
    assert evalset.eval_cases[0].eval_id == "what_s_the_weather_in_rome"


def test_adk_eval_passes_on_the_recorded_evalset(travel_recording, standin, tmp_path, monkeypatch):
    """ADK's own evaluator, with the stand-in as the model, passes the case rec wrote."""
    from google.adk.evaluation.agent_evaluator import AgentEvaluator
    from google.adk.evaluation.eval_config import EvalConfig
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    from cassettes._eval_config import DEFAULT_EVAL_CONFIG, dump_eval_config
    from recorder._importers.recording import write_recording_evalset

    out, _ = travel_recording
    cassette = load_cassette(out / "travel.cassette.json")
    # the traffic does not show the starting state; the ADK plugin path would supply it
    written = write_recording_evalset(
        cassette, tmp_path, name="travel", app_name="travel", initial_state=STATE
    )
    adk_set = AdkEvalSet.model_validate_json(written.read_text(encoding="utf-8"))
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaFAKE-rec-test-key-00000000000000000")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", standin.url)
    monkeypatch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
    asyncio.run(
        AgentEvaluator.evaluate_eval_set(
            agent_module="tests.agents.travel",
            eval_set=adk_set,
            eval_config=EvalConfig.model_validate_json(dump_eval_config(DEFAULT_EVAL_CONFIG)),
            num_runs=1,
            print_detailed_results=False,
        )
    )  # raises AssertionError when a metric fails


# -- pure edge cases -------------------------------------------------------------------------


def _exchange(i: int, contents: list[Any], response: Any = None, **options: Any) -> Any:
    return make_exchange(
        i,
        request_body=gemini_request(contents, **options.pop("request", {})),
        response_body=response,
        **options,
    )


def _no_arg_response(sent_args: bool) -> dict:
    call = {"name": "now", "args": {}} if sent_args else {"name": "now"}
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"functionCall": call}]},
                "finishReason": "STOP",
            }
        ]
    }


@pytest.mark.parametrize(
    ("sent_args", "expected_args", "written"),
    [
        pytest.param(True, {}, {"name": "now", "args": {}}, id="model-sent-empty-args"),
        pytest.param(False, None, {"name": "now"}, id="model-sent-no-args"),
    ],
)
def test_call_without_args_keeps_what_the_model_sent(
    sent_args: bool, expected_args: object, written: dict
) -> None:
    # ADK's scorer compares args with ==, and ADK records what the model sent, so the
    # expectation must too: {} stays {}, absent stays absent.
    exchanges = [
        _exchange(0, ["what time is it?"], _no_arg_response(sent_args)),
        _exchange(
            1,
            [
                user_content("what time is it?"),
                _no_arg_response(sent_args)["candidates"][0]["content"],
                function_response_content(("now", {"time": "noon"})),
            ],
            gemini_response("It is noon."),
        ),
    ]
    evalset = evalset_from_exchanges(exchanges, eval_set_id="s")
    [call] = invocation_tool_calls(evalset.eval_cases[0].conversation[0])
    assert call.name == "now" and call.args == expected_args
    dumped = json.loads(evalset.model_dump_json(exclude_none=True))
    event = dumped["eval_cases"][0]["conversation"][0]["intermediate_data"]["invocation_events"][0]
    assert event["content"]["parts"][0]["function_call"] == written


@pytest.mark.parametrize(
    ("exchange", "kept"),
    [
        pytest.param(_exchange(0, ["hi"], gemini_response("yo")), True, id="generate"),
        pytest.param(make_exchange(0, stream_chunks=gemini_stream("a b c")), True, id="stream"),
        pytest.param(
            make_exchange(
                0,
                base_url="https://us-central1-aiplatform.googleapis.com",
                version="v1beta1/projects/p/locations/l/publishers/google",
            ),
            True,
            id="vertex",
        ),
        pytest.param(
            make_exchange(0, status=429, response_body={"error": {"code": 429}}), False, id="error"
        ),
        pytest.param(make_exchange(0, rpc="countTokens"), False, id="count-tokens"),
        pytest.param(
            make_exchange(
                0,
                stream_chunks=[gemini_response("a", finish_reason=None), {"error": {"code": 500}}],
            ),
            False,
            id="error-mid-stream",
        ),
    ],
)
def test_which_exchanges_are_model_turns(exchange, kept):
    assert bool(extract_conversations([exchange])) is kept


@pytest.mark.parametrize(
    ("content", "genuine"),
    [
        pytest.param(user_content("hello"), True, id="user-text"),
        pytest.param({"parts": [{"text": "hello"}]}, True, id="no-role"),
        pytest.param(model_content("hello"), False, id="model"),
        pytest.param(function_response_content(("f", {})), False, id="function-response"),
        pytest.param(user_content("For context: [a] said: hi"), False, id="for-context"),
        pytest.param({"role": "user", "parts": []}, False, id="empty"),
    ],
)
def test_genuine_user_content(content, genuine):
    assert is_genuine_user_content(content) is genuine


def test_identical_openings_recorded_concurrently_stay_apart():
    hello = gemini_response("Hello!")
    exchanges = [
        _exchange(0, ["hi"], hello),
        _exchange(1, ["hi"], hello),
        _exchange(2, ["hi", "Hello!", "one"], gemini_response("1")),
        _exchange(3, ["hi", "Hello!", "two"], gemini_response("2")),
    ]
    conversations = extract_conversations(exchanges)
    assert [c.exchange_ids for c in conversations] == [[0, 2], [1, 3]]


def test_eval_ids_are_unique_slugs():
    exchanges = [
        _exchange(0, ["Hi, there!"], gemini_response("a")),
        _exchange(1, ["Hi, there!"], gemini_response("b")),
        _exchange(2, ["¿¡"], gemini_response("c")),
    ]
    ids = [c.eval_id for c in evalset_from_exchanges(exchanges, eval_set_id="s").eval_cases]
    assert ids == ["hi_there", "hi_there_2", "case"]


def test_threading_cost_is_linear_in_request_size():
    """100 turns of one chat thread into one conversation quickly (no pairwise scans)."""
    contents: list[Any] = []
    exchanges = []
    for i in range(100):
        contents = [*contents, user_content(f"question {i}")]
        exchanges.append(_exchange(i, list(contents), gemini_response(f"answer {i}")))
        contents = [*contents, model_content(f"answer {i}")]
    [conversation] = extract_conversations(exchanges)
    assert len(conversation.invocations) == 100
    assert isinstance(conversation.invocations[-1], Invocation)
    assert isinstance(conversation.invocations[-1].intermediate_data, InvocationEvents)


def test_each_content_is_put_in_canonical_form_once(monkeypatch):
    """Every request re-sends the chat so far; each user turn and each reply is put in its
    canonical form once (a reply when it is received, not again when it is re-sent)."""
    from cassettes import _conversations

    read: list[Any] = []
    canonical = _conversations._canonical

    def counted(content: dict[str, Any]) -> str:
        read.append(content)
        return canonical(content)

    monkeypatch.setattr(_conversations, "_canonical", counted)
    contents: list[Any] = []
    exchanges = []
    for i in range(20):
        contents = [*contents, {"parts": [{"text": f"question {i}"}], "role": "user"}]
        exchanges.append(_exchange(i, list(contents), gemini_response(f"answer {i}")))
        # re-sent as google-genai spells it (keys in order), which is how the reply dumps
        contents = [*contents, {"parts": [{"text": f"answer {i}"}], "role": "model"}]
    [conversation] = extract_conversations(exchanges)
    assert len(conversation.invocations) == 20
    assert len(read) == 2 * 20


# -- session shapes from traffic alone (pure; tests/recorder/test_session_shapes.py records them)


def _calling(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return gemini_response(function_calls=[(name, args)])


@pytest.mark.parametrize(
    ("inner_text", "conversations"),
    [
        pytest.param("Rome", 1, id="opened-from-the-call's-request"),
        pytest.param('{"request": "Rome"}', 1, id="opened-from-the-args-as-json"),
        pytest.param("Paris", 2, id="another-session-meanwhile"),
    ],
)
def test_a_conversation_run_by_an_outstanding_call_is_folded_into_it(inner_text, conversations):
    call = function_call_content(("researcher", {"request": "Rome"}))
    answered = function_response_content(("researcher", {"result": "fact"}))
    exchanges = [
        _exchange(0, ["plan"], _calling("researcher", {"request": "Rome"})),
        _exchange(1, [inner_text], gemini_response("fact")),
        _exchange(2, ["plan", call, answered], gemini_response("planned")),
    ]
    found = extract_conversations(exchanges)
    assert len(found) == conversations
    if conversations == 1:
        [parent] = found
        assert [c.exchange_ids for c in parent.nested] == [[1]]
        assert _calls(parent.invocations[0]) == [("researcher", {"request": "Rome"})]


def test_a_call_answered_before_the_other_conversation_ends_does_not_adopt_it():
    call = function_call_content(("researcher", {"request": "Rome"}))
    answered = function_response_content(("researcher", {"result": "fact"}))
    exchanges = [
        _exchange(0, ["plan"], _calling("researcher", {"request": "Rome"})),
        _exchange(1, ["Rome"], gemini_response("fact")),
        _exchange(2, ["plan", call, answered], gemini_response("planned")),
        _exchange(3, ["Rome", "fact", "more"], gemini_response("more facts")),
    ]
    assert len(extract_conversations(exchanges)) == 2


def test_a_turn_no_model_call_answered_is_read_back_from_the_next_request():
    exchanges = [
        _exchange(0, ["weather?"], gemini_response("sunny")),
        _exchange(
            1, ["weather?", "sunny", "password?", "I cannot.", "rain?"], gemini_response("no")
        ),
    ]
    [conversation] = extract_conversations(exchanges)
    assert [(_text(i.user_content), _text(i.final_response)) for i in conversation.invocations] == [
        ("weather?", "sunny"),
        ("password?", "I cannot."),
        ("rain?", "no"),
    ]
    guarded = conversation.invocations[1]
    assert [e.content for e in guarded.intermediate_data.invocation_events] == [None]


def test_a_transcript_only_request_joins_the_conversation_it_quotes():
    quoted = user_content("For context:\n[gatherer] said: Rome is old")
    exchanges = [
        _exchange(0, ["tell me about Rome"], gemini_response("Rome is old")),
        _exchange(1, [quoted], gemini_response("Summary: old")),
    ]
    [conversation] = extract_conversations(exchanges)
    [invocation] = conversation.invocations
    assert _text(invocation.user_content) == "tell me about Rome"
    assert _text(invocation.final_response) == "Summary: old"


def test_a_long_running_tools_resume_ends_the_case_before_it(caplog):
    call = function_call_content(("ask_for_approval", {"amount": 50}))
    pending = function_response_content(("ask_for_approval", {"status": "pending"}))
    approved = function_response_content(("ask_for_approval", {"approved": True}))
    exchanges = [
        _exchange(0, ["reimburse"], _calling("ask_for_approval", {"amount": 50})),
        _exchange(1, ["reimburse", call, pending], gemini_response("pending")),
        _exchange(2, ["reimburse", call, approved], _calling("reimburse", {"amount": 50})),
    ]
    with caplog.at_level("WARNING", logger="evalfiles"):
        [conversation] = extract_conversations(exchanges)
    [invocation] = conversation.invocations
    assert _text(invocation.final_response) == "pending"
    assert _calls(invocation) == [("ask_for_approval", {"amount": 50})]
    assert "resumes a long-running tool" in caplog.text and "exchange 2" in caplog.text


def test_a_reply_no_model_call_gave_after_a_transfer_is_read_back_from_the_next_request():
    """A sub-agent's before_agent_callback answers: the next request quotes what it said."""
    transfer = function_call_content(("transfer_to_agent", {"agent_name": "desk"}))
    said = {  # ADK's rewrite of another agent's turn: a header part, then what it said
        "role": "user",
        "parts": [{"text": "For context:"}, {"text": "[desk] said: The desk is closed."}],
    }
    exchanges = [
        _exchange(0, ["account?"], _calling("transfer_to_agent", {"agent_name": "desk"})),
        _exchange(
            1, ["account?", transfer, said, user_content("weather?")], gemini_response("sunny")
        ),
    ]
    [conversation] = extract_conversations(exchanges)
    first, second = conversation.invocations
    assert _text(first.final_response) == "The desk is closed."
    assert _text(second.final_response) == "sunny"


def test_conversations_with_large_inline_data_thread_by_their_own_image() -> None:
    # Two sessions send the same words with different large images; each second request
    # carries its own image in the history and must continue its own conversation.
    images = [base64.b64encode(bytes([n]) * 30_000).decode() for n in (1, 2)]

    def picture(data: str) -> dict[str, Any]:
        return {
            "role": "user",
            "parts": [
                {"text": "what is this?"},
                {"inlineData": {"mimeType": "image/png", "data": data}},
            ],
        }

    firsts = [
        _exchange(i, [picture(data)], gemini_response("a cat")) for i, data in enumerate(images)
    ]
    seconds = [
        _exchange(
            2 + i,
            [picture(data), model_content("a cat"), user_content("sure?")],
            gemini_response(f"yes {i}"),
        )
        for i, data in enumerate(images)
    ]
    conversations = extract_conversations([*firsts, *seconds])
    assert sorted(c.exchange_ids for c in conversations) == [[0, 2], [1, 3]]
