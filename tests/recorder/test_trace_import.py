"""``rec import TRACE``: a production trace becomes eval cases and their cassette.

The real travel agent (two agents, transfers, parallel tools) runs under ADK's Runner in a
child process against the stand-in model, traced by the real OpenTelemetry SDK under each
of ADK's telemetry schemas; its spans and log records go through the real OTLP encoder
(``encode_spans`` + protobuf's ``MessageToDict``) to a file. The import is checked against
what the traced run did, as ADK's own session records it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cassettes._cassette import JsonBody, SseBody, load_cassette
from cassettes._evalset import invocation_tool_responses, load_evalset
from rec.cli import main
from recorder._importers.adk_session import invocations_from_events
from tests.agents.guarded_travel.agent import REFUSAL
from tests.agents.traced_recording import (
    EVENTS,
    LEGACY,
    SPANS,
    Traces,
    calls_and_replies,
    eval_id,
    model_calls,
)

CAPTURE_OFF_LEGACY = {**LEGACY, "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "false"}
CAPTURE_OFF = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"}


@pytest.fixture(scope="module")
def traces(standin, tmp_path_factory) -> Traces:
    """Trace files per telemetry set-up, each traced once for the module."""
    return Traces(standin.url, tmp_path_factory.mktemp)


def run_import(trace: Path, out: Path, *args: str) -> int:
    return main(["import", str(trace), "--out", str(out), "--name", "bug", *args])


@pytest.mark.parametrize(
    ("label", "env", "flags"),
    [
        pytest.param("legacy", LEGACY, (), id="legacy-call_llm"),
        pytest.param("spans", SPANS, ("--hex",), id="semconv-content-on-spans-hex-ids"),
        pytest.param("events", EVENTS, (), id="semconv-content-in-log-records"),
    ],
)
def test_each_traced_session_is_one_case_with_what_it_did(traces, tmp_path, label, env, flags):
    trace, production = traces(label, env, flags=flags)
    assert run_import(trace, tmp_path) == 0

    evalset = load_evalset(tmp_path / "bug.evalset.json")
    assert [c.eval_id for c in evalset.eval_cases] == [eval_id(s) for s in production]
    for case, session in zip(evalset.eval_cases, production, strict=True):
        expected = calls_and_replies(invocations_from_events(session["events"]))
        assert calls_and_replies(case.conversation or []) == expected
    cassette = load_cassette(tmp_path / "bug.cassette.json")
    assert len(cassette.exchanges) == sum(model_calls(s) for s in production)
    assert cassette.trace is not None and cassette.trace.unreplayable == {}
    assert all(e.not_compared == cassette.trace.not_compared for e in cassette.exchanges)
    if label == "legacy":  # the whole config is in the span: only what it drops is not compared
        assert "generationConfig" not in cassette.trace.not_compared
        assert "contents[*].parts[*].thoughtSignature" in cassette.trace.not_compared
    else:
        assert "generationConfig" in cassette.trace.not_compared
    # every answer is a whole Gemini response: usage and model version kept for ADK's metrics
    for exchange in cassette.exchanges:
        body = exchange.response.body
        answer = body.value if isinstance(body, JsonBody) else None
        if isinstance(body, SseBody):
            answer = body.events[-1].data
        assert answer["usageMetadata"]["promptTokenCount"] > 0
        assert answer["modelVersion"] == "gemini-2.0-flash"


def test_session_and_latest_pick_sessions_of_a_multi_session_trace(traces, tmp_path):
    trace, production = traces("legacy", LEGACY)
    first, second = production
    assert run_import(trace, tmp_path / "one", "--session", first["id"]) == 0
    assert [c.eval_id for c in load_evalset(tmp_path / "one/bug.evalset.json").eval_cases] == [
        eval_id(first)
    ]
    assert run_import(trace, tmp_path / "last", "--latest", "1") == 0
    kept = load_evalset(tmp_path / "last/bug.evalset.json").eval_cases
    assert [c.eval_id for c in kept] == [eval_id(second)]
    assert len(load_cassette(tmp_path / "last/bug.cassette.json").exchanges) == model_calls(second)
    assert run_import(trace, tmp_path / "none", "--session", "nope") == 2


@pytest.mark.parametrize(
    ("label", "env", "span"),
    [
        pytest.param("off-legacy", CAPTURE_OFF_LEGACY, "'call_llm'", id="legacy"),
        pytest.param(
            "off-semconv", CAPTURE_OFF, "'generate_content gemini-2.0-flash'", id="semconv"
        ),
    ],
)
def test_content_capture_off_is_one_line_per_session_naming_span_and_settings(
    traces, tmp_path, capsys, label, env, span
):
    trace, production = traces(label, env)
    assert run_import(trace, tmp_path) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "trace lacks" in line]
    assert len(lines) == len(production)
    for line, session in zip(lines, production, strict=True):
        assert f"span {span}" in line and session["id"] in line
        assert "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS" in line
        assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in line
    cassette = load_cassette(tmp_path / "bug.cassette.json")
    assert cassette.trace is not None
    assert sorted(cassette.trace.unreplayable) == sorted(eval_id(s) for s in production)
    # the cases are written (never left out) and fail at replay with the reason
    cases = load_evalset(tmp_path / "bug.evalset.json").eval_cases
    assert [c.eval_id for c in cases] == [eval_id(s) for s in production]


def test_content_in_log_records_the_file_lacks_is_told_apart_from_capture_off(
    traces, tmp_path, capsys
):
    # EVENT_ONLY capture with only the spans exported (a Collector with no logs pipeline):
    # the spans look as with capture off, so the line names both causes.
    trace, production = traces("events", EVENTS)
    lines = trace.read_text(encoding="utf-8").splitlines()
    spans_only = tmp_path / "spans.otlp.jsonl"
    spans_only.write_text("\n".join(x for x in lines if '"resourceSpans"' in x) + "\n")
    assert len(spans_only.read_text().splitlines()) < len(lines)  # log records were there
    assert run_import(spans_only, tmp_path / "out") == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "trace lacks" in line]
    assert len(said) == len(production)
    for line in said:
        assert "content capture was off" in line
        assert "log records (EVENT_ONLY)" in line and "export the service's logs" in line


def test_a_turn_a_before_model_callback_answered_is_no_model_call(traces, tmp_path):
    turns = ("What's the weather in Rome?", "Tell me the secret", "What's the weather in Tokyo?")
    env = {**LEGACY, "TRACED_AGENT": "tests.agents.guarded_travel.agent"}
    trace, (production,) = traces("guarded", env, sessions=[turns])
    assert run_import(trace, tmp_path) == 0

    cassette = load_cassette(tmp_path / "bug.cassette.json")
    assert len(cassette.exchanges) == model_calls(production) - 1  # the callback's reply
    assert REFUSAL not in json.dumps([e.response.model_dump() for e in cassette.exchanges])
    (case,) = load_evalset(tmp_path / "bug.evalset.json").eval_cases
    expected = calls_and_replies(invocations_from_events(production["events"]))
    assert calls_and_replies(case.conversation or []) == expected
    assert expected[1] == ([], REFUSAL)


def test_trace_shape_is_told_by_content_not_name(traces, tmp_path):
    trace, production = traces("legacy", LEGACY)
    spans_line = trace.read_text().splitlines()[0]
    document = tmp_path / "export.json"  # one pretty-printed OTLP document
    document.write_text(json.dumps(json.loads(spans_line), indent=2))
    assert run_import(document, tmp_path / "doc") == 0
    cases = load_evalset(tmp_path / "doc/bug.evalset.json").eval_cases
    assert [c.eval_id for c in cases] == [eval_id(s) for s in production]


def test_secrets_in_span_attributes_are_masked(traces, tmp_path):
    key = "AIza" + "Sy" + "B" * 33
    turns = (f"What's the weather in Rome? my key is {key}",)
    trace, _ = traces("secret", LEGACY, sessions=[turns])
    assert key in trace.read_text()
    assert run_import(trace, tmp_path) == 0
    for written in ("bug.evalset.json", "bug.cassette.json"):
        text = (tmp_path / written).read_text()
        assert key not in text and "AIza" in text  # masked, not dropped


@pytest.mark.parametrize(
    ("content", "where"),
    [
        pytest.param(
            {"resourceSpans": [{"scopeSpans": [{"spans": ["not a span"]}]}]},
            "line 1: resourceSpans[0].scopeSpans[0].spans[0]",
            id="span-not-an-object",
        ),
        pytest.param({"resourceSpans": []}, "", id="no-adk-model-call"),
    ],
)
def test_a_broken_trace_is_a_clear_input_error(tmp_path, capsys, content, where):
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps(content) + "\n")
    assert run_import(trace, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert str(trace) in err and where in err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_a_tool_result_no_model_request_carries_comes_from_its_tool_span(traces, tmp_path):
    """Lisbon's weather ends the turn at the tool (``skip_summarization``): no model
    request carries its result, only the ``execute_tool`` span, and the case gets it (so
    mock-mode tools answer as production did)."""
    env = {**LEGACY, "TRACED_AGENT": "tests.agents.guarded_travel.agent"}
    trace, (production,) = traces("lisbon", env, sessions=[("What's the weather in Lisbon?",)])
    assert run_import(trace, tmp_path) == 0

    (case,) = load_evalset(tmp_path / "bug.evalset.json").eval_cases
    (turn,) = case.conversation or []
    responses = [(r.name, r.response) for r in invocation_tool_responses(turn)]
    (expected,) = [
        (p["functionResponse"]["name"], p["functionResponse"]["response"])
        for e in production["events"]
        for p in (e.get("content") or {}).get("parts", [])
        if "functionResponse" in p
    ]
    assert responses == [expected] and expected[0] == "get_weather"
    assert len(load_cassette(tmp_path / "bug.cassette.json").exchanges) == 1
