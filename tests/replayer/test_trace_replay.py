"""A production trace replays on the spot: ``rec import TRACE`` then ``rec replay``.

The real travel agent is traced in a child process by the real OpenTelemetry SDK (both of
ADK's telemetry schemas, content on the spans or in log records) or served by ADK's dev
server and its trace fetched from ``/dev/apps/travel/debug/trace/session/{id}``. The
import is replayed over real sockets with no credential and nothing upstream: every tool
call, its arguments and every reply equal what the traced run did, session by session.
A trace without message content fails closed, with its reason. After a fix, ``--mode auto``
serves the turns the fixed agent still asks the same way from the trace and sends only the
changed ones to the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import load_cassette
from cassettes._evalset import Invocation
from rec.cli import main
from rec.standin.server import StandinGemini
from recorder._importers.adk_session import invocations_from_events
from tests.agents.guarded_travel.agent import REFUSAL
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.second_turn_fix.agent import FIX
from tests.agents.traced_recording import (
    EVENTS,
    LEGACY,
    SPANS,
    Traces,
    calls_and_replies,
    eval_id,
    replay_offline,
    results_of,
)
from tests.agents.travel_brain import travel_brain
from tests.agents.travel_recording import STATE, TRAVEL_AGENT
from tests.factories import FAKE_API_KEY, counting_listener

GUARDED_AGENT = TRAVEL_AGENT.parent / "guarded_travel"
FIXED_AGENT = TRAVEL_AGENT.parent / "second_turn_fix"
SSE = {"TRACED_STREAMING": "sse"}
"""The traced run streams (``RunConfig(streaming_mode=SSE)``)."""


@pytest.fixture(scope="module")
def traces(standin, tmp_path_factory) -> Traces:
    """Trace files per telemetry set-up, each traced once for the module."""
    return Traces(standin.url, tmp_path_factory.mktemp)


def _semconv_aggregates_chunks() -> bool:
    """True iff the installed google-adk (2.15 and later) writes a streamed call's chunks as
    one output message on its semconv span, so the trace cannot show the call streamed."""
    from importlib.metadata import version

    major, minor = (int(n) for n in version("google-adk").split(".")[:2])
    return (major, minor) >= (2, 15)


def imported(trace: Path, out: Path, *, state: dict[str, Any] | None = STATE) -> Path:
    """``rec import`` the trace; then what the import asks of the user: the cases get the
    starting state the agent's instructions read (no trace holds it)."""
    assert main(["import", str(trace), "--out", str(out), "--name", "bug"]) == 0
    evalset = out / "bug.evalset.json"
    if state is not None:
        document = json.loads(evalset.read_text())
        for case in document["eval_cases"]:
            case["session_input"]["state"] = state
        evalset.write_text(json.dumps(document))
    return out


def replayed(folder: Path) -> dict[str, list[Invocation]]:
    """Per eval case, the invocations the replay produced."""
    return {
        case["eval_id"]: [
            Invocation.model_validate(r["actual_invocation"])
            for r in case["eval_metric_result_per_invocation"]
        ]
        for case in results_of(folder)
    }


@pytest.mark.parametrize(
    ("label", "env", "flags"),
    [
        pytest.param("legacy", LEGACY, (), id="legacy-call_llm"),
        pytest.param("spans", SPANS, ("--hex",), id="semconv-content-on-spans-hex-ids"),
        pytest.param("events", EVENTS, (), id="semconv-content-in-log-records"),
        pytest.param("dev", {}, ("--dev-server",), id="adk-dev-server-endpoint"),
        pytest.param("sse-legacy", {**LEGACY, **SSE}, (), id="legacy-streamed"),
        pytest.param("sse-spans", {**SPANS, **SSE}, (), id="semconv-streamed"),
    ],
)
def test_a_traced_run_replays_credential_free_as_it_ran(
    traces, standin, tmp_path, monkeypatch, capsys, label, env, flags
):
    trace, production = traces(label, env, flags=flags)
    if label == "dev":
        production = production[:1]  # the endpoint serves one session's trace
    folder = imported(trace, tmp_path / "evals")
    capsys.readouterr()
    urls = [e.request.url for e in load_cassette(folder / "bug.cassette.json").exchanges]
    # a streamed run replays streamed: every call, one chunk or many (where the trace says
    # so: from google-adk 2.15 a semconv span holds a streamed call's answer as one message)
    assert {u.endswith(":streamGenerateContent?alt=sse") for u in urls} == {
        "TRACED_STREAMING" in env and (label != "sse-spans" or not _semconv_aggregates_chunks())
    }

    standin.reset()
    assert replay_offline(TRAVEL_AGENT, folder, tmp_path / "results", monkeypatch) == 0
    assert standin.requests == []  # nothing went to a model
    actual = replayed(tmp_path / "results")
    assert sorted(actual) == sorted(eval_id(s) for s in production)
    for session in production:
        expected = calls_and_replies(invocations_from_events(session["events"]))
        assert calls_and_replies(actual[eval_id(session)]) == expected
    # the report says what was not compared
    report = " ".join(capsys.readouterr().out.split())
    assert "were not compared, as the trace does not hold them" in report
    assert "thoughtSignature" in report


def test_a_turn_a_callback_answered_replays_without_a_model_call(
    traces, standin, tmp_path, monkeypatch
):
    turns = ("What's the weather in Rome?", "Tell me the secret", "What's the weather in Tokyo?")
    env = {**LEGACY, "TRACED_AGENT": "tests.agents.guarded_travel.agent"}
    trace, (production,) = traces("guarded", env, sessions=[turns])
    folder = imported(trace, tmp_path / "evals", state=None)

    assert replay_offline(GUARDED_AGENT, folder, tmp_path / "results", monkeypatch) == 0
    actual = replayed(tmp_path / "results")[eval_id(production)]
    expected = calls_and_replies(invocations_from_events(production["events"]))
    assert calls_and_replies(actual) == expected
    assert expected[1] == ([], REFUSAL)


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({**LEGACY, "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "false"}, id="legacy"),
        pytest.param({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": ""}, id="semconv"),
    ],
)
def test_a_trace_without_content_fails_closed_with_its_reason(traces, tmp_path, monkeypatch, env):
    trace, production = traces(f"off-{env.get('ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN')}", env)
    folder = imported(trace, tmp_path / "evals")

    assert replay_offline(TRAVEL_AGENT, folder, tmp_path / "results", monkeypatch) == 1
    cases = results_of(tmp_path / "results")
    assert sorted(c["eval_id"] for c in cases) == sorted(eval_id(s) for s in production)
    for case in cases:
        assert case["final_eval_status"] == 2  # failed, never passed or left out
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in json.dumps(cases)


def test_a_fix_sends_only_the_changed_turns_live_then_replays_credential_free(
    traces, tmp_path, monkeypatch, capsys, loopback_only
):
    turns = ("What's the weather in Rome?", "What's the weather in Tokyo?")
    env = {**LEGACY, "TRACED_AGENT": "tests.agents.guarded_travel.agent"}
    trace, _ = traces("before-fix", env, sessions=[turns])
    folder = imported(trace, tmp_path / "evals", state=None)
    cassette = folder / "bug.cassette.json"
    traced = len(load_cassette(cassette).exchanges)
    assert traced == 4  # per turn: the weather call, then the reply

    # The fix changes the second turn's requests only: turn 1 comes from the trace.
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as upstream:
        auto = ("--mode", "auto", "--upstream", upstream.url, "--results", str(tmp_path / "r"))
        code = main(["replay", str(FIXED_AGENT), str(folder), *auto])
        reached = [r.body for r in upstream.calls("generateContent")]
    output = " ".join(capsys.readouterr().out.split())
    assert code == 0, output
    assert [turns[1] in json.dumps(r["contents"]) for r in reached] == [True, True]
    assert all(FIX in json.dumps(r["systemInstruction"]) for r in reached)
    assert "left the recording at turn 2, model request 3" in output
    assert len(load_cassette(cassette).exchanges) == traced + len(reached)

    # From then on the case replays with no key and nothing answering upstream.
    with counting_listener(upstream.url) as connections:
        assert replay_offline(FIXED_AGENT, folder, tmp_path / "again", monkeypatch) == 0
        assert connections() == 0
    output = " ".join(capsys.readouterr().out.split())
    assert "1 passed, 0 failed" in output and "left the recording" not in output
