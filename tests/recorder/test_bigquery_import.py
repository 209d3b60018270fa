"""``rec import ROWS``: ADK's BigQuery Agent Analytics rows become eval cases and a cassette.

The real travel agent runs under ADK's Runner in a child process with the real
``BigQueryAgentAnalyticsPlugin`` (its callbacks, content parser and row assembly), its table
write redirected to a local sink; the rows are exported as ``bq query --format=json``
writes them. The import is checked against what the run did, as ADK's session records it,
and replayed with no key and nothing upstream where the rows hold the model calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import load_cassette
from cassettes._evalset import load_evalset
from rec.cli import main
from rec.standin.server import StandinGemini
from recorder._importers.adk_session import invocations_from_events
from tests.agents.bigquery_recording import PlainBrain, export_rows
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.traced_recording import calls_and_replies, eval_id, model_calls
from tests.agents.travel_recording import TRAVEL_AGENT

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


def replay(folder: Path, results: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return main(["replay", str(TRAVEL_AGENT), str(folder), "--results", str(results)])


def results_of(folder: Path) -> list[dict[str, Any]]:
    (written,) = list(folder.glob("*.json"))
    cases: list[dict[str, Any]] = json.loads(written.read_text())["eval_case_results"]
    return cases


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
    assert replay(tmp_path / "evals", tmp_path / "results", monkeypatch) == 0
    assert plain_standin.requests == []  # nothing went to a model
    (case,) = results_of(tmp_path / "results")
    assert case["eval_id"] == eval_id(single) and case["final_eval_status"] == 1


@pytest.mark.parametrize("which", ["default", "full"])
def test_rows_that_cannot_be_rebuilt_fail_closed_with_the_reason(
    request, tmp_path, monkeypatch, which
):
    rows, production = request.getfixturevalue(f"{which}_rows")
    assert run_import(rows, tmp_path / "evals") == 0

    assert replay(tmp_path / "evals", tmp_path / "results", monkeypatch) == 1
    cases = {c["eval_id"]: c for c in results_of(tmp_path / "results")}
    assert sorted(cases) == sorted(eval_id(s) for s in production)  # none left out
    failed = cases[eval_id(production[0])]
    assert failed["final_eval_status"] == 2
    reason = "content_formatter" if which == "default" else "[UNPARSEABLE_JSON_BLOB]"
    assert reason in json.dumps(failed)
