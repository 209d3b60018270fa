"""Factories for test data: Gemini bodies, cassette exchanges, invocations, EvalSets.

Build test data here rather than pasting JSON into tests. Every factory has defaults that
give a valid, realistic object, and keyword options to change what a test is about::

    body = gemini_request("What's the weather in Paris?", tools=["get_weather"])
    exchange = make_exchange(request_body=body, response_body=gemini_response(text="Sunny"))
    cassette = make_cassette([exchange])
    evalset = make_evalset([[make_invocation("hi", final_text="Hello!")]])
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import json
import re
import socket
import textwrap
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pydantic

from cassettes._cassette import (
    Cassette,
    Exchange,
    JsonBody,
    RecordedRequest,
    RecordedResponse,
    SseBody,
    SseEvent,
    load_cassette,
)
from cassettes._cassette_writer import save_cassette
from cassettes._evalset import (
    EvalCase,
    EvalSet,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    SessionInput,
)
from cassettes._genai_types import (
    Content,
    FunctionCall,
    FunctionResponse,
    GenerateContentResponseUsageMetadata,
    GroundingMetadata,
    Part,
)
from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest

__all__ = [
    "FAKE_API_KEY",
    "adk_session_document",
    "GEMINI_API",
    "MODEL",
    "full_value",
    "function_call_content",
    "function_response_content",
    "gemini_request",
    "gemini_response",
    "gemini_stream",
    "legacy_cases_document",
    "make_cassette",
    "make_evalset",
    "make_exchange",
    "make_full_evalset",
    "make_invocation",
    "model_content",
    "usage_reply",
    "user_content",
]

GEMINI_API = "https://generativelanguage.googleapis.com"
"""The real Gemini API base URL (as recorded in cassettes; never contacted in tests)."""
MODEL = "gemini-2.0-flash"
"""The default model name."""
USER_AGENT = "google-genai-sdk/2.34.0 gl-python/3.11.7"

# -- Gemini JSON bodies --------------------------------------------------------------------


def reversed_keys(value: Any) -> Any:
    """The same JSON with every object's keys in reverse order (the same request to the
    matcher, spelled otherwise)."""
    if isinstance(value, dict):
        return {k: reversed_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(v) for v in value]
    return value


def user_content(text: str) -> dict[str, Any]:
    """A user turn with one text part."""
    return {"role": "user", "parts": [{"text": text}]}


def model_content(text: str) -> dict[str, Any]:
    """A model turn with one text part."""
    return {"role": "model", "parts": [{"text": text}]}


def function_call_content(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A model turn calling functions: ``function_call_content(("f", {"x": 1}))``."""
    return {
        "role": "model",
        "parts": [{"functionCall": {"name": name, "args": args}} for name, args in calls],
    }


def function_response_content(*responses: tuple[str, Any]) -> dict[str, Any]:
    """A user turn carrying function responses: ``(name, response_dict)``."""
    return {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": name, "response": response}}
            for name, response in responses
        ],
    }


def _declaration(tool: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(tool, dict):
        return tool
    return {
        "name": tool,
        "description": f"{tool.replace('_', ' ').capitalize()}.",
        "parameters_json_schema": {
            "type": "object",
            "properties": {"city": {"type": "string", "title": "City"}},
            "required": ["city"],
            "title": f"{tool}Params",
        },
    }


def gemini_request(
    contents: str | Sequence[str | dict[str, Any]] = "Hello",
    *,
    tools: Sequence[str | dict[str, Any]] | None = None,
    system_instruction: str | None = None,
    generation_config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A generateContent request body, as google-genai sends it.

    Args:
        contents: a user text, or a list of texts (alternating user/model, starting with
            user) and content dicts.
        tools: function names (declared with one ``city`` string parameter) or declaration
            dicts.
        system_instruction: text of the system instruction.
        generation_config: the ``generationConfig`` object (google-genai sends ``{}`` for
            any config).
    """
    items = [contents] if isinstance(contents, str) else list(contents)
    built = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            built.append(user_content(item) if i % 2 == 0 else model_content(item))
        else:
            built.append(item)
    body: dict[str, Any] = {"contents": built}
    if system_instruction is not None:
        body["systemInstruction"] = {"parts": [{"text": system_instruction}], "role": "user"}
    if tools:
        body["tools"] = [{"functionDeclarations": [_declaration(t) for t in tools]}]
    if generation_config is not None:
        body["generationConfig"] = generation_config
    return body


def gemini_response(
    text: str | None = None,
    *,
    function_calls: Sequence[tuple[str, dict[str, Any]]] | None = None,
    finish_reason: str | None = "STOP",
    model_version: str = MODEL,
    response_id: str = "standin-response-0001",
    prompt_tokens: int = 10,
) -> dict[str, Any]:
    """A GenerateContentResponse body with text and/or function calls.

    ``finish_reason=None`` leaves it out (a non-final stream chunk).
    """
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"text": text})
    for name, args in function_calls or ():
        parts.append({"functionCall": {"name": name, "args": args}})
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish_reason is not None:
        candidate["finishReason"] = finish_reason
    produced = len((text or "").split()) + len(function_calls or ())
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": produced,
            "totalTokenCount": prompt_tokens + produced,
        },
        "modelVersion": model_version,
        "responseId": response_id,
    }


def gemini_stream(text: str, *, chunks: int = 3, **options: Any) -> list[dict[str, Any]]:
    """Stream chunks whose texts join to ``text``; only the last has ``finishReason``."""
    words = text.split(" ")
    size = max(1, -(-len(words) // chunks))
    pieces = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    pieces = [p + (" " if i < len(pieces) - 1 else "") for i, p in enumerate(pieces)]
    return [
        gemini_response(piece, finish_reason="STOP" if i == len(pieces) - 1 else None, **options)
        for i, piece in enumerate(pieces)
    ]


def echo_model(request: StandinRequest) -> Reply | None:
    """A stand-in responder: ``echo <the last turn's text>`` to ``generateContent``, nothing
    else."""
    if request.rpc != "generateContent":
        return None
    return Reply.text(f"echo {request.contents[-1]['parts'][0]['text']}")


def hello_model(request: StandinRequest) -> Reply | None:
    """A stand-in responder: "hello" to ``generateContent``, "one two three four" in three
    chunks to ``streamGenerateContent``, nothing else."""
    if request.rpc == "streamGenerateContent":
        return Reply.text("one two three four", chunks=3)
    if request.rpc == "generateContent":
        return Reply.text("hello")
    return None


def usage_reply(*parts: dict[str, Any], usage: dict[str, int]) -> Reply:
    """A stand-in reply: one model turn of ``parts`` that reports ``usage`` as its
    ``usageMetadata`` (for a reply without one the stand-in makes one up)."""
    content = {"role": "model", "parts": list(parts)}
    chunk = {"candidates": [{"content": content, "finishReason": "STOP"}], "usageMetadata": usage}
    return Reply(chunks=(chunk,))


# -- cassettes -----------------------------------------------------------------------------


def make_exchange(
    id: int = 0,
    *,
    request_body: dict[str, Any] | None = None,
    response_body: Any = None,
    stream_chunks: Sequence[Any] | None = None,
    offsets_ms: Sequence[float] | None = None,
    complete: bool = True,
    status: int = 200,
    model: str = MODEL,
    rpc: str | None = None,
    version: str = "v1beta",
    base_url: str = GEMINI_API,
    request_headers: dict[str, str] | None = None,
    recorded_at: str = "2025-01-01T12:00:00.000000+00:00",
    duration_ms: float = 120.0,
) -> Exchange:
    """One recorded exchange (already redacted, as rec stores it).

    Args:
        id: position in the cassette.
        request_body: the JSON request (default: ``gemini_request("Question <id>")``).
        response_body: the unary JSON response (default: a text answer).
        stream_chunks: make it a ``streamGenerateContent`` exchange with these events.
        offsets_ms: event offsets (default 100 ms apart).
        complete: False records a stream that was cut.
        status: HTTP status (pass an error envelope as ``response_body`` with it).
        rpc: defaults to generateContent, or streamGenerateContent with ``stream_chunks``.
    """
    stream = stream_chunks is not None
    rpc = rpc or ("streamGenerateContent" if stream else "generateContent")
    url = f"{base_url}/{version}/models/{model}:{rpc}" + ("?alt=sse" if stream else "")
    headers = {"content-type": "application/json", "user-agent": USER_AGENT}
    headers["x-goog-api-client"] = USER_AGENT
    request = RecordedRequest(
        method="POST",
        url=url,
        headers=request_headers if request_headers is not None else headers,
        body=JsonBody(value=request_body or gemini_request(f"Question {id}")),
    )
    if stream_chunks is not None:
        offsets = list(offsets_ms or [100.0 * (i + 1) for i in range(len(stream_chunks))])
        pairs = zip(offsets, stream_chunks, strict=True)
        events = [SseEvent(offset_ms=offset, data=chunk) for offset, chunk in pairs]
        body: Any = SseBody(complete=complete, events=events)
        content_type = "text/event-stream"
    else:
        body = JsonBody(value=response_body or gemini_response(f"Answer {id}"))
        content_type = "application/json; charset=UTF-8"
    response = RecordedResponse(status=status, headers={"content-type": content_type}, body=body)
    return Exchange(
        id=id,
        recorded_at=recorded_at,
        duration_ms=duration_ms,
        client={"google-genai-sdk": "2.34.0", "gl-python": "3.11.7"},
        request=request,
        response=response,
    )


def make_cassette(
    exchanges: Iterable[Exchange] | int = 1,
    *,
    name: str = "test",
    upstream: str = GEMINI_API,
) -> Cassette:
    """A cassette of the given exchanges, or of N distinct question/answer exchanges.

    Exchange ids are renumbered in order.
    """
    if isinstance(exchanges, int):
        items = [make_exchange(i) for i in range(exchanges)]
    else:
        items = [e.model_copy(update={"id": i}) for i, e in enumerate(exchanges)]
    return Cassette(name=name, upstream=upstream, exchanges=items)


def add_stale_exchange(path: Path, *, model: str = "gemini-stale") -> None:
    """Append to the cassette at ``path`` a copy of its first exchange for another model
    (a recording no run asks for: record mode must drop it, replay must leave it unused)."""
    cassette = load_cassette(path)
    first = cassette.exchanges[0]
    stale = first.model_copy(
        update={
            "id": max(e.id for e in cassette.exchanges) + 1,
            "request": first.request.model_copy(
                update={"url": re.sub(r"/models/[^:]+:", f"/models/{model}:", first.request.url)}
            ),
        }
    )
    save_cassette(cassette.model_copy(update={"exchanges": [*cassette.exchanges, stale]}), path)


# -- EvalSets ------------------------------------------------------------------------------


def make_invocation(
    user_text: str = "Hello",
    *,
    final_text: str | None = "Hello! How can I help?",
    tool_calls: Sequence[tuple[str, dict[str, Any] | None]] = (),
    tool_responses: Sequence[tuple[str, dict[str, Any]]] = (),
    invocation_id: str | None = None,
) -> Invocation:
    """One invocation (the ``tool_uses``/``tool_responses`` shape).

    A call given ``None`` args has no ``args`` (ADK's convention for a no-argument call).
    """
    digest = hashlib.sha256(json.dumps([user_text, final_text]).encode()).hexdigest()[:8]
    return Invocation(
        invocation_id=invocation_id or f"e-{digest}",
        user_content=Content(role="user", parts=[Part(text=user_text)]),
        final_response=(
            Content(role="model", parts=[Part(text=final_text)]) if final_text is not None else None
        ),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name=n, args=a) for n, a in tool_calls],
            tool_responses=[FunctionResponse(name=n, response=r) for n, r in tool_responses],
        ),
    )


def make_evalset(
    cases: Sequence[Sequence[Invocation] | str] = ("Hello",),
    *,
    eval_set_id: str = "travel_set",
    app_name: str = "travel",
    user_id: str = "test_user",
    state: dict[str, Any] | None = None,
) -> EvalSet:
    """An EvalSet with one case per item (a list of invocations, or one user text).

    Case ids are ``case_<n>``; every case gets a ``session_input`` with ``state``.
    """
    built = []
    for i, case in enumerate(cases):
        conversation = [make_invocation(case)] if isinstance(case, str) else list(case)
        built.append(
            EvalCase(
                eval_id=f"case_{i}",
                conversation=conversation,
                session_input=SessionInput(
                    app_name=app_name, user_id=user_id, state=dict(state or {})
                ),
            )
        )
    return EvalSet(eval_set_id=eval_set_id, eval_cases=built)


# -- google-genai-shaped values --------------------------------------------------------------


def full_value(model: type[pydantic.BaseModel], *, depth: int = 8) -> dict[str, Any]:
    """Python-mode data for ``model`` with every field set, nested models included.

    Works for google-genai's models and rec's lean copies alike (same field names): bytes
    are real bytes (a thought signature, inline data), enums take their last member, lists
    hold one item, free-form dicts hold nested JSON.
    """
    hints = typing.get_type_hints(model)
    return {name: _full(hints[name], name, depth) for name in model.model_fields}


def _full(annotation: Any, name: str, depth: int) -> Any:
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        return _full(args[0], name, depth)
    if origin is typing.Literal:
        return args[0]
    if origin is list:
        return [_full(args[0], name, depth)]
    if origin is dict:
        return {"city": "Paris", "n": [1, 2.5, None, True, {"deep": "é"}]}
    if annotation is Any:
        return {"any": 1}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return list(annotation)[-1].value
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return full_value(annotation, depth=depth - 1) if depth > 0 else {}
    samples = {str: f"{name} é", int: 7, float: 0.25, bool: True, bytes: b"\x00rec\xff\xfe"}
    return samples[annotation]


def make_full_evalset() -> EvalSet:
    """An EvalSet that sets every field of every google-genai type it holds (both shapes)."""
    content = Content.model_validate(full_value(Content))
    event = InvocationEvent(
        author="weather_agent",
        content=content,
        grounding_metadata=GroundingMetadata.model_validate(full_value(GroundingMetadata)),
        usage_metadata=GenerateContentResponseUsageMetadata.model_validate(
            full_value(GenerateContentResponseUsageMetadata)
        ),
        model_version="gemini-2.0-flash",
    )
    thinking = Content(
        role="model", parts=[Part(text="Sunny.", thought_signature=b"\xfb\xff\x00sig")]
    )
    # A user turn holding a function response cannot run (a long-running tool's resume):
    # every field of it is set in the event's content instead.
    said = content.model_copy(deep=True)
    for part in said.parts or []:
        part.function_response = None
    events = Invocation(
        user_content=said,
        final_response=thinking,
        intermediate_data=InvocationEvents(invocation_events=[event]),
    )
    trajectory = make_invocation("hi", tool_calls=[("now", None), ("weather", {"city": "Oslo"})])
    session = SessionInput(app_name="a", user_id="u", state={"k": [1]})
    return EvalSet(
        eval_set_id="full",
        eval_cases=[
            EvalCase(eval_id="events", conversation=[events], session_input=session),
            EvalCase(eval_id="trajectory", conversation=[trajectory]),
        ],
    )


# -- ADK's own files -----------------------------------------------------------------------------


def legacy_cases_document() -> list[dict[str, Any]]:
    """A legacy eval file in the list-of-cases shape (``[{name, data, initial_session}]``)."""
    turn = {
        "query": "What's the weather in Rome?",
        "expected_tool_use": [{"tool_name": "get_weather", "tool_input": {"city": "Rome"}}],
        "expected_intermediate_agent_responses": [{"author": "weather_agent", "text": "Checking"}],
        "reference": "It is cloudy in Rome.",
    }
    session = {"state": {"unit": "celsius"}, "app_name": "travel", "user_id": "ada"}
    return [
        {"name": "weather", "data": [turn], "initial_session": session},
        {"name": "bare", "data": [{"query": "Thanks!", "reference": "You're welcome."}]},
    ]


def adk_session_document(
    turns: Sequence[tuple[str, str]] = (("Weather in Rome?", "Cloudy."),),
    *,
    session_id: str = "s-1",
) -> dict[str, Any]:
    """An ADK ``Session`` as ADK's API server returns it (camelCase): per turn, the user's
    event, a model call to ``get_weather``, its response and the final reply."""
    events: list[dict[str, Any]] = []
    for number, (question, answer) in enumerate(turns):
        invocation = f"e-{number}"
        call = {"id": f"adk-{number}", "name": "get_weather", "args": {"city": "Rome"}}
        reply = {"id": f"adk-{number}", "name": "get_weather", "response": {"sky": "cloudy"}}
        for author, content in (
            ("user", user_content(question)),
            ("weather_agent", {"role": "model", "parts": [{"functionCall": call}]}),
            ("weather_agent", {"role": "user", "parts": [{"functionResponse": reply}]}),
            ("weather_agent", model_content(answer)),
        ):
            events.append(
                {
                    "invocationId": invocation,
                    "author": author,
                    "content": content,
                    "actions": {"stateDelta": {"turns": number + 1}},
                    "timestamp": 1_750_000_000.0 + len(events),
                    "usageMetadata": {"promptTokenCount": 10, "totalTokenCount": 12},
                }
            )
    return {
        "id": session_id,
        "appName": "travel",
        "userId": "ada",
        "state": {"unit": "celsius", "turns": len(turns)},
        "events": events,
        "lastUpdateTime": 1_750_000_100.0,
    }


def a2a_call(
    method: str,
    text: str = "When does the museum open?",
    *,
    run: str = "run-1",
    rest: bool = False,
) -> dict[str, Any]:
    """A request body a caller sends to a remote A2A agent, with the ids of run ``run``.

    ``method``: a2a-sdk 0.3's ``message/send`` / ``message/stream`` / ``tasks/get`` (parts
    with ``kind``, role ``user``) or 1.x's ``SendMessage`` / ``SendStreamingMessage`` /
    ``GetTask`` (parts without ``kind``, role ``ROLE_USER``); ``rest`` gives the HTTP+JSON
    binding's body (the message without the JSON-RPC envelope).
    """
    legacy = "/" in method
    part: dict[str, Any] = {"kind": "text", "text": text} if legacy else {"text": text}
    message = {
        "messageId": f"{run}-message",
        "contextId": f"{run}-context",
        "taskId": f"{run}-task",
        "role": "user" if legacy else "ROLE_USER",
        "parts": [part],
    }
    if method in ("tasks/get", "GetTask"):
        params: dict[str, Any] = {"id": f"{run}-task", "historyLength": 2}
    else:
        params = {"message": message, "configuration": {"blocking": True}}
    if rest:
        return params
    return {"jsonrpc": "2.0", "id": f"{run}-rpc", "method": method, "params": params}


def a2a_exchange(
    body: dict[str, Any], *, url: str = "http://127.0.0.1:9/", reply: str = "Nine to five"
) -> Exchange:
    """A recorded call to a remote A2A agent (a tool exchange) answering ``reply``."""
    result = {"kind": "message", "role": "agent", "parts": [{"kind": "text", "text": reply}]}
    return Exchange(
        id=0,
        recorded_at="2025-01-01T12:00:00.000000+00:00",
        duration_ms=12.0,
        origin="tool",
        request=RecordedRequest(
            method="POST",
            url=url,
            headers={"content-type": "application/json"},
            body=JsonBody(value=body),
        ),
        response=RecordedResponse(
            status=200,
            headers={"content-type": "application/json"},
            body=JsonBody(value={"jsonrpc": "2.0", "id": body.get("id"), "result": result}),
        ),
    )


@contextlib.contextmanager
def counting_listener(url: str) -> Iterator[Callable[[], int]]:
    """A listener on a stopped upstream's port; yields a count of the connections it got."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", urlsplit(url).port or 0))
    listener.listen(16)
    listener.setblocking(False)
    seen: list[socket.socket] = []

    def count() -> int:
        with contextlib.suppress(BlockingIOError):
            while True:
                seen.append(listener.accept()[0])
        return len(seen)

    try:
        yield count
    finally:
        for connection in seen:
            connection.close()
        listener.close()


UNRECORDED_CALL = (
    'client.models.generate_content(model="gemini-2.0-flash", contents="unrecorded")\n'
)
"""A model call no one-exchange recording of :func:`make_cassette` holds."""


def rec_fixture_test(pytester: Any, module: str, test: str, calls: str) -> Path:
    """A test module ``module`` for ``pytester``: test function ``test`` takes the ``rec``
    fixture on a one-exchange recording "weather" and runs ``calls`` (indented source, with
    ``client``, a google-genai client, in scope). Returns the recording's path."""
    recordings = Path(pytester.path) / "recordings" / module
    recordings.mkdir(parents=True)
    cassette = recordings / "weather.cassette.json"
    save_cassette(make_cassette(1), cassette)
    source = (
        "import pytest\n"
        "from google import genai\n\n"
        '@pytest.mark.rec(recording="weather")\n'
        f"def {test}(rec):\n"
        "    client = genai.Client()\n"
    )
    pytester.makepyfile(
        **{module: source + textwrap.indent(textwrap.dedent(calls).lstrip("\n"), "    ")}
    )
    return cassette


def adc_file(path: Path, token: str) -> Path:
    """What `gcloud auth application-default login` leaves behind, holding the fake
    access ``token`` (valid for centuries, so no refresh is tried)."""
    adc = {
        "type": "authorized_user",
        "client_id": "id",
        "client_secret": "secret",
        "refresh_token": "refresh",
        "token": token,
        "expiry": "2999-01-01T00:00:00Z",
    }
    path.write_text(json.dumps(adc))
    return path


def cli_replay(*args: str) -> tuple[int, str]:
    """``rec replay ARGS`` in this process (click's runner): its exit code and output."""
    from click.testing import CliRunner

    from rec.cli import cli

    result = CliRunner().invoke(cli, ["replay", *args], catch_exceptions=False)
    return result.exit_code, result.output


def parts_summary(content: Any) -> list[tuple[Any, ...]]:
    """A content's parts as comparable tuples: a call's name and args, a response's name
    and value, or a text."""
    return [
        (p.function_call.name, p.function_call.args)
        if p.function_call
        else ("response", p.function_response.name, p.function_response.response)
        if p.function_response
        else ("text", p.text)
        for p in (content.parts if content else [])
    ]


class ConnectionCounter:
    """Listens on 127.0.0.1:``port`` (a free one by default) and counts the connections it
    accepts, closing each; :attr:`url` is ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, port: int = 0) -> None:
        import threading

        self.connections = 0
        self._socket = socket.socket()
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", port))
        self._socket.listen(16)
        self._socket.settimeout(0.2)
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._socket.close()

    def __enter__(self) -> ConnectionCounter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
