"""A miss in a large recording costs about what it costs in a small one: the nearest
recording is found by reading the few the side index says are likeliest (no exchange
parsed into a model but the nearest)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from cassettes._cassette import (
    JsonBody,
    LazyExchanges,
    RecordedRequest,
    load_cassette,
)
from cassettes._cassette_writer import save_cassette
from cassettes._matching import MatchIndex
from replayer._replay_api import replay
from tests.factories import (
    GEMINI_API,
    MODEL,
    function_call_content,
    function_response_content,
    gemini_request,
    make_cassette,
    make_exchange,
    model_content,
)
from tests.rec_process import probe_serve

_COUNT = 400


def _turns(i: int) -> list[str]:
    return [f"Question {i}", f"Answer {i}", "And then?"]


def _contents(texts: list[str]) -> list[types.Content]:
    roles = ("user", "model") * len(texts)
    return [
        types.Content(role=role, parts=[types.Part(text=text)])
        for role, text in zip(roles, texts, strict=False)
    ]


@pytest.fixture
def conversations(tmp_path: Path) -> Path:
    """400 conversations that differ only in their first turn: all in one bucket (the same
    route, number of turns and last turn), each an exchange the miss could be nearest to."""
    path = tmp_path / "many.cassette.json"
    exchanges = [make_exchange(i, request_body=gemini_request(_turns(i))) for i in range(_COUNT)]
    save_cassette(make_cassette(exchanges), path)
    return path


def _miss(path: Path, contents: list[types.Content], config: types.GenerateContentConfig) -> str:
    """The miss's message, and a check that it parsed at most the nearest recording."""
    with replay(path) as replaying:
        (loaded,) = replaying.handler.cassettes
        lazy = loaded.cassette.exchanges
        assert isinstance(lazy, LazyExchanges)
        client = genai.Client()
        with pytest.raises(genai_errors.APIError):
            client.models.generate_content(model=MODEL, contents=contents, config=config)
        parses = lazy.parses()
    (miss,) = replaying.misses
    assert parses <= 2, f"a miss parsed {parses} of {_COUNT} exchanges"
    return str(miss)


def test_a_changed_instruction_names_its_conversation_parsing_only_it(
    conversations: Path, loopback_only: object
) -> None:
    config = types.GenerateContentConfig(system_instruction="You are a grumpy assistant")
    message = _miss(conversations, _contents(_turns(321)), config)
    assert "nearest is exchanges[321]" in message
    assert "systemInstruction" in message


def test_a_longer_history_names_its_conversation_parsing_only_it(
    conversations: Path, loopback_only: object
) -> None:
    """Another number of turns and another last turn: not in the recording's bucket, found
    as the same conversation (its first user turn)."""
    texts = [*_turns(77), "Answer 77b", "And after that?"]
    message = _miss(conversations, _contents(texts), types.GenerateContentConfig())
    assert "nearest is exchanges[77]" in message
    assert "contents: 2 turns added" in message


def test_a_miss_in_rec_serve_names_the_nearest(tmp_path: Path) -> None:
    cassette = tmp_path / "served.cassette.json"
    save_cassette(make_cassette(3), cassette)
    missed: list[urllib.error.HTTPError] = []

    def ask(url: str) -> None:
        body = json.dumps(gemini_request("Question 99")).encode()
        asked = urllib.request.Request(
            f"{url}/v1beta/models/{MODEL}:generateContent",
            data=body,
            headers={"content-type": "application/json"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with pytest.raises(urllib.error.HTTPError) as raised:
            opener.open(asked)
        missed.append(raised.value)

    result = probe_serve(cassette, tmp_path, ask)
    (miss,) = missed
    assert miss.code == 404
    explained = miss.read().decode()
    assert "nearest is exchanges[" in explained and "Question 99" in explained
    assert "cassettes" in {m.split(".")[0] for m in result["modules"]}


def _history(conversation: int, turns: int) -> list[str | dict[str, Any]]:
    """A conversation's first ``turns`` turns: questions, a tool call and its result, answers."""
    said: list[str | dict[str, Any]] = []
    for step in range(turns):
        if step % 4 == 0:
            said.append(f"Conversation {conversation % 40}, question {step // 4}")
        elif step % 4 == 1:
            said.append(function_call_content(("get_weather", {"city": f"City {step}"})))
        elif step % 4 == 2:
            said.append(function_response_content(("get_weather", {"result": "sunny"})))
        else:
            said.append(model_content(f"It is sunny ({conversation})"))
    return said


def _recorded(conversation: int, turns: int) -> dict[str, Any]:
    return gemini_request(
        _history(conversation, turns),
        tools=["get_weather"] if conversation % 3 else None,
        system_instruction=f"You are agent {conversation % 5}",
    )


_MISSES = {
    "instruction changed": lambda: {**_recorded(57, 5), "systemInstruction": "grumpy"},
    "history longer": lambda: _recorded(130, 8),
    "a tool result changed": lambda: gemini_request(
        [*_history(12, 2), function_response_content(("get_weather", {"result": "rain"}))],
        tools=["get_weather"],
        system_instruction="You are agent 2",
    ),
    "first question new": lambda: gemini_request(
        ["A question never asked", *_history(5, 3)[1:]], system_instruction="You are agent 0"
    ),
    "first question new, another agent": lambda: gemini_request(
        ["A question never asked", *_history(5, 5)[1:]],
        tools=["get_weather"],
        system_instruction="You are agent 3",
    ),
    "no such conversation": lambda: gemini_request("Hello there"),
    "a tool added": lambda: {**_recorded(88, 3), "tools": [{"functionDeclarations": []}]},
}


@pytest.mark.parametrize("name", sorted(_MISSES))
def test_a_lazily_loaded_cassette_names_the_nearest_eager_loading_names(
    name: str, tmp_path: Path
) -> None:
    """Reading only the likeliest recordings finds the recording a full comparison of every
    one finds, over 160 conversations of 1 to 8 turns (40 opening questions, each asked 4
    times: conversations that share their opening)."""
    exchanges = [
        make_exchange(0, request_body=_recorded(conversation, turns))
        for conversation in range(160)
        for turns in (1, 3, 5, 7)
        if (conversation + turns) % 3
    ]
    path = tmp_path / "mixed.cassette.json"
    save_cassette(make_cassette(exchanges), path)
    request = RecordedRequest(
        method="POST",
        url=f"{GEMINI_API}/v1beta/models/{MODEL}:generateContent",
        body=JsonBody(value=_MISSES[name]()),
    )
    _nearest_as_eager_names(path, request)


def _nearest_as_eager_names(path: Path, request: RecordedRequest) -> int:
    """The id of the recording a miss of ``request`` names in the lazily loaded cassette at
    ``path``, checked to be the one eager loading names, with at most one exchange parsed."""
    lazy = load_cassette(path, lazy=True).exchanges
    assert isinstance(lazy, LazyExchanges)
    eager_index, lazy_index = MatchIndex(load_cassette(path).exchanges), MatchIndex(lazy)
    assert eager_index.lookup(request) is None and lazy_index.lookup(request) is None
    eager, found = eager_index.nearest(request), lazy_index.nearest(request)
    assert eager is not None and found is not None
    assert found.id == eager.id
    assert lazy.parses() <= 1
    return found.id


def _chat(conversation: int, turns: int) -> dict[str, Any]:
    """An OpenAI chat request: a system message first, then the conversation's turns."""
    said = [
        {"role": "user" if step % 2 == 0 else "assistant", "content": f"{conversation}: {step}"}
        for step in range(turns)
    ]
    system = {"role": "system", "content": "You are terse"}
    return {"model": "gpt-4o", "messages": [system, *said]}


def test_a_conversation_opened_by_a_system_message_names_the_nearest_eager_loading_names(
    tmp_path: Path,
) -> None:
    """A history that opens with a system message shares it with every other conversation:
    a miss then reads beyond its own conversation, as eager loading compares every one."""
    url = "https://api.openai.com/v1/chat/completions"
    exchanges = []
    for conversation in range(60):
        for turns in (1, 3, 5):
            recorded = make_exchange(0, request_body=_chat(conversation, turns))
            request = recorded.request.model_copy(update={"url": url})
            exchanges.append(recorded.model_copy(update={"request": request}))
    path = tmp_path / "chat.cassette.json"
    save_cassette(make_cassette(exchanges), path)
    asked = _chat(41, 3)
    asked["messages"][-1]["content"] = "something else"
    request = RecordedRequest(method="POST", url=url, body=JsonBody(value=asked))
    assert _nearest_as_eager_names(path, request) == 41 * 3 + 1
