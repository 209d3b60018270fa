"""``rec import ROWS``: ADK's BigQuery Agent Analytics rows become eval cases and a cassette.

The real travel agent runs under ADK's Runner in a child process with the real
``BigQueryAgentAnalyticsPlugin`` (its callbacks, content parser and row assembly), its table
write redirected to a local sink; the rows are exported as ``bq query --format=json``
writes them. The import is checked against what the run did, as ADK's session records it,
and replayed with no key and nothing upstream where the rows hold the model calls.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import load_cassette
from cassettes._evalset import Invocation, load_evalset
from rec.cli import main
from rec.standin.server import StandinGemini
from recorder._importers.adk_session import invocations_from_events
from tests.agents.bigquery_recording import PlainBrain, export_rows
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.traced_recording import (
    calls_and_replies,
    eval_id,
    model_calls,
    replay_offline,
    results_of,
)
from tests.agents.travel_recording import TRAVEL_AGENT

GUARDED_AGENT = TRAVEL_AGENT.parent / "guarded_travel"

pytest.importorskip(
    "google.cloud.bigquery_storage_v1", reason="the plugin needs google-adk[bigquery-analytics]"
)

Rows = tuple[Path, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def plain_standin():
    """A stand-in whose replies the plugin's redaction leaves whole (they open with a word)."""
    with StandinGemini(PlainBrain(), routes=STANDIN_ROUTES) as server:
        yield server


@pytest.fixture(scope="module")
def default_rows(standin, tmp_path_factory) -> Rows:
    """The rows of two sessions under the plugin's defaults (JSON lines)."""
    out = tmp_path_factory.mktemp("default") / "rows.jsonl"
    return out, export_rows(out, standin.url)


@pytest.fixture(scope="module")
def full_rows(plain_standin, tmp_path_factory) -> Rows:
    """The same sessions with a content_formatter that writes each LlmRequest whole and
    max_content_length=-1, exported as one JSON array under a name that says nothing."""
    out = tmp_path_factory.mktemp("full") / "export.txt"
    return out, export_rows(out, plain_standin.url, flags=("--full", "--array"))


def run_import(rows: Path, out: Path, *args: str) -> int:
    return main(["import", str(rows), "--out", str(out), "--name", "bug", *args])


def assert_cases_are_the_sessions(evalset_path: Path, production: list[dict[str, Any]]) -> None:
    evalset = load_evalset(evalset_path)
    assert [c.eval_id for c in evalset.eval_cases] == [eval_id(s) for s in production]
    for case, session in zip(evalset.eval_cases, production, strict=True):
        expected = calls_and_replies(invocations_from_events(session["events"]))
        assert calls_and_replies(case.conversation or []) == expected
        # the session's starting state is in the rows (attributes.session_metadata)
        assert case.session_input is not None
        assert case.session_input.state == {"user_name": "Ada", "home_city": "Paris"}


def test_default_rows_give_each_session_its_case_and_say_why_no_call_is_rebuilt(
    default_rows, tmp_path, capsys
):
    rows, production = default_rows
    assert run_import(rows, tmp_path) == 0

    assert_cases_are_the_sessions(tmp_path / "bug.evalset.json", production)
    cassette = load_cassette(tmp_path / "bug.cassette.json")
    assert cassette.exchanges == []  # a summary is no request: nothing guessed
    assert cassette.trace is not None
    assert sorted(cassette.trace.unreplayable) == sorted(eval_id(s) for s in production)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "column content" in line]
    assert len(lines) == len(production)  # one line per session
    for line, session in zip(lines, production, strict=True):
        assert f"(LLM_REQUEST, session {session['id']})" in line
        assert "content_formatter" in line and "max_content_length=-1" in line


def test_whole_requests_rebuild_the_model_calls_the_redaction_left_whole(full_rows, tmp_path):
    rows, production = full_rows
    assert run_import(rows, tmp_path) == 0  # a JSON array, told by its content

    assert_cases_are_the_sessions(tmp_path / "bug.evalset.json", production)
    cassette = load_cassette(tmp_path / "bug.cassette.json")
    assert cassette.trace is not None
    transfers, single = production
    # the session that transfers between agents carries ADK's "[agent] said" context notes,
    # which the plugin's redaction replaces: it fails closed, naming the row and why
    (why,) = cassette.trace.unreplayable.values()
    assert list(cassette.trace.unreplayable) == [eval_id(transfers)]
    assert "[UNPARSEABLE_JSON_BLOB]" in why and "(LLM_REQUEST," in why
    assert len(cassette.exchanges) == model_calls(single)
    assert "contents[*].parts[*].thoughtSignature" in cassette.trace.not_compared


def test_session_and_latest_pick_sessions_of_the_rows(full_rows, tmp_path):
    rows, (first, second) = full_rows
    assert run_import(rows, tmp_path / "one", "--session", first["id"]) == 0
    evalset = load_evalset(tmp_path / "one" / "bug.evalset.json")
    assert [c.eval_id for c in evalset.eval_cases] == [eval_id(first)]
    assert run_import(rows, tmp_path / "last", "--latest", "1") == 0
    evalset = load_evalset(tmp_path / "last" / "bug.evalset.json")
    assert [c.eval_id for c in evalset.eval_cases] == [eval_id(second)]
    assert run_import(rows, tmp_path / "none", "--session", "nope") == 2


def test_rebuilt_rows_replay_credential_free_as_they_ran(
    full_rows, plain_standin, tmp_path, monkeypatch
):
    rows, (_, single) = full_rows
    assert run_import(rows, tmp_path / "evals", "--latest", "1") == 0

    plain_standin.reset()
    assert replay_offline(TRAVEL_AGENT, tmp_path / "evals", tmp_path / "results", monkeypatch) == 0
    assert plain_standin.requests == []  # nothing went to a model
    (case,) = results_of(tmp_path / "results")
    assert case["eval_id"] == eval_id(single) and case["final_eval_status"] == 1


@pytest.mark.parametrize("which", ["default", "full"])
def test_rows_that_cannot_be_rebuilt_fail_closed_with_the_reason(
    request, tmp_path, monkeypatch, which
):
    rows, production = request.getfixturevalue(f"{which}_rows")
    assert run_import(rows, tmp_path / "evals") == 0

    assert replay_offline(TRAVEL_AGENT, tmp_path / "evals", tmp_path / "results", monkeypatch) == 1
    cases = {c["eval_id"]: c for c in results_of(tmp_path / "results")}
    assert sorted(cases) == sorted(eval_id(s) for s in production)  # none left out
    failed = cases[eval_id(production[0])]
    assert failed["final_eval_status"] == 2
    reason = "content_formatter" if which == "default" else "[UNPARSEABLE_JSON_BLOB]"
    assert reason in json.dumps(failed)


def test_a_streamed_run_and_a_callback_answered_turn_replay_as_they_ran(
    plain_standin, tmp_path, monkeypatch
):
    turns = ("What's the weather in Rome?", "Tell me the secret", "What's the weather in Tokyo?")
    guarded_env = {"TRACED_AGENT": "tests.agents.guarded_travel.agent"}
    runs = {
        "streamed": (TRAVEL_AGENT, {"TRACED_STREAMING": "sse"}, [("What's the weather in Rome?",)]),
        "guarded": (GUARDED_AGENT, guarded_env, [turns]),
    }
    for label, (agent, env, sessions) in runs.items():
        rows = tmp_path / f"{label}.jsonl"
        (production,) = export_rows(
            rows, plain_standin.url, flags=("--full",), env=env, sessions=sessions
        )
        assert run_import(rows, tmp_path / label) == 0
        cassette = load_cassette(tmp_path / label / "bug.cassette.json")
        urls = {e.request.url.rsplit(":", 1)[-1] for e in cassette.exchanges}
        assert urls == (
            {"streamGenerateContent?alt=sse"} if label == "streamed" else {"generateContent"}
        )
        # the turn a before_model_callback answered made no model call: no exchange for it
        assert len(cassette.exchanges) == model_calls(production) - (label == "guarded")

        plain_standin.reset()
        results = tmp_path / f"{label}-results"
        assert replay_offline(agent, tmp_path / label, results, monkeypatch) == 0
        assert plain_standin.requests == []
        (case,) = results_of(results)
        actual = [
            Invocation.model_validate(r["actual_invocation"])
            for r in case["eval_metric_result_per_invocation"]
        ]
        expected = calls_and_replies(invocations_from_events(production["events"]))
        assert calls_and_replies(actual) == expected


def _extracted(row: dict[str, Any]) -> dict[str, Any]:
    """A row as ``bq extract`` writes it: JSON columns as JSON values, the timestamp as
    ``YYYY-MM-DD HH:MM:SS.ffffff UTC``."""
    out = dict(row)
    for key in ("content", "attributes", "latency_ms"):
        if isinstance(out.get(key), str):
            out[key] = json.loads(out[key])
    out["timestamp"] = out["timestamp"].replace("T", " ").replace("+00:00", " UTC")
    return out


def test_an_extract_in_any_row_order_imports_as_the_query_export(full_rows, tmp_path):
    rows, _ = full_rows
    exported = json.loads(rows.read_text())
    reshaped = tmp_path / "extract.json"
    reshaped.write_text("\n".join(json.dumps(_extracted(r)) for r in reversed(exported)))
    assert run_import(rows, tmp_path / "query") == 0
    assert run_import(reshaped, tmp_path / "extract") == 0

    for name in ("bug.evalset.json", "bug.cassette.json"):
        # the same, but for the row numbers the reasons name (their place in each export)
        query = re.sub(r"row \d+", "row N", (tmp_path / "query" / name).read_text())
        extract = re.sub(r"row \d+", "row N", (tmp_path / "extract" / name).read_text())
        assert json.loads(extract) == json.loads(query)
    assert "row N (LLM_REQUEST" in query


def test_a_last_reply_its_summary_cannot_tell_apart_is_said_not_guessed(
    full_rows, tmp_path, capsys
):
    rows, (_, single) = full_rows
    exported = json.loads(rows.read_text())
    replies = [
        n
        for n, r in enumerate(exported)
        if r["session_id"] == single["id"] and r["event_type"] == "LLM_RESPONSE"
    ]
    last = exported[replies[-1]]
    content = json.loads(last["content"])
    content["response"] = "text: 'Sunny' | text: 'and warm'"  # two texts, as a thought and a reply
    last["content"] = json.dumps(content)
    edited = tmp_path / "rows.json"
    edited.write_text(json.dumps(exported))
    assert run_import(edited, tmp_path / "evals", "--session", single["id"]) == 0

    cassette = load_cassette(tmp_path / "evals" / "bug.cassette.json")
    assert cassette.exchanges == []
    assert cassette.trace is not None
    (why,) = cassette.trace.unreplayable.values()
    assert why.startswith(f"row {replies[-1] + 1} (LLM_RESPONSE, session {single['id']})")
    assert "only the plugin's summary of the reply" in why
    assert why in " ".join(capsys.readouterr().err.split())
