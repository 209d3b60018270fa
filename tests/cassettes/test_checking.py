"""``rec check``: every problem in a file, with its JSON path and fix.

A corpus of malformed files (each with the message it must produce), files written by
ADK itself in the shapes its samples and ``adk web`` use (which must pass), and the cases
where ADK's own loader fails with ``KeyError: 'data'`` or ``string indices must be
integers`` while rec names the real problem.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from cassettes._cassette import dump_cassette
from cassettes._checking import check_file, check_files, check_paths
from cassettes._errors import InputError
from cassettes._eval_config import load_eval_config
from cassettes._evalset import dump_evalset, load_evalset
from rec.cli import main
from tests.factories import make_cassette, make_evalset, make_full_evalset, make_invocation

TEXT = {"parts": [{"text": "hi"}], "role": "user"}


def _case(**invocation: Any) -> dict[str, Any]:
    turn = {"user_content": TEXT, "final_response": {"parts": [{"text": "yo"}], "role": "model"}}
    turn.update(invocation)
    return {"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [turn]}]}


def _with_case(**case: Any) -> dict[str, Any]:
    document = _case()
    document["eval_cases"][0].update(case)
    return document


def _config(criteria: Any = None, **top: Any) -> dict[str, Any]:
    document = dict(top)
    if criteria is not None:
        document["criteria"] = criteria
    return document


def _session(**fields: Any) -> dict[str, Any]:
    return _with_case(session_input={"app_name": "travel", "user_id": "u", **fields})


def _evalset_row(ident: str, document: Any, where: str, says: str) -> Any:
    """A row: an eval set file holding ``document``, and the problem expected at ``where``."""
    return pytest.param("a.evalset.json", document, where, says, id=ident)


def _config_row(ident: str, document: Any, where: str, says: str) -> Any:
    """A row: a test_config.json holding ``document``, and the problem expected at ``where``."""
    return pytest.param("test_config.json", document, where, says, id=ident)


TRAJECTORY = "tool_trajectory_avg_score"
C0 = "eval_cases[0]"
I0 = "eval_cases[0].conversation[0]"

# (file name, document or raw text, expected JSON path, expected message fragment)
CORPUS = [
    pytest.param("a.evalset.json", "{not json", "line 1 column 2", "not valid JSON", id="bad-json"),
    _evalset_row(
        "camel-top-level",
        {"evalSetId": "s", "eval_cases": []},
        "evalSetId",
        'Did you mean "eval_set_id"',
    ),
    _evalset_row(
        "no-eval-cases", {"eval_set_id": "s"}, "eval_cases", 'missing required key "eval_cases"'
    ),
    _evalset_row(
        "eval-cases-object",
        {"eval_set_id": "s", "eval_cases": {}},
        "eval_cases",
        "must be a list, got an object",
    ),
    _evalset_row(
        "eval-set-id-number",
        {"eval_set_id": 3, "eval_cases": []},
        "eval_set_id",
        "must be a string, got a number",
    ),
    _evalset_row(
        "case-string",
        {"eval_set_id": "s", "eval_cases": ["x"]},
        C0,
        "an eval case must be an object, got a string",
    ),
    _evalset_row(
        "no-eval-id",
        {"eval_set_id": "s", "eval_cases": [{"conversation": []}]},
        f"{C0}.eval_id",
        'missing required key "eval_id"',
    ),
    _evalset_row(
        "eval-id-number", _with_case(eval_id=7), f"{C0}.eval_id", "must be a string, got a number"
    ),
    _evalset_row(
        "neither",
        {"eval_set_id": "s", "eval_cases": [{"eval_id": "a"}]},
        C0,
        "neither conversation nor conversation_scenario",
    ),
    _evalset_row(
        "both",
        _with_case(conversation_scenario={"starting_prompt": "x"}),
        C0,
        "both conversation and conversation_scenario",
    ),
    _evalset_row(
        "case-key-typo",
        _with_case(conversations=[]),
        f"{C0}.conversations",
        'Did you mean "conversation"',
    ),
    _evalset_row(
        "conversation-string",
        _with_case(conversation="hi"),
        f"{C0}.conversation",
        "must be a list, got a string",
    ),
    _evalset_row(
        "final-reponse",
        _case(final_reponse=TEXT),
        f"{I0}.final_reponse",
        'Did you mean "final_response"',
    ),
    _evalset_row(
        "no-user-content",
        {"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [{}]}]},
        f"{I0}.user_content",
        'missing required key "user_content"',
    ),
    _evalset_row(
        "user-content-string",
        _case(user_content="hi"),
        f"{I0}.user_content",
        "must be an object, got a string",
    ),
    _evalset_row(
        "part-key-typo",
        _case(user_content={"parts": [{"txt": "hi"}]}),
        f"{I0}.user_content.parts[0].txt",
        'Did you mean "text"',
    ),
    _evalset_row(
        "part-text-number",
        _case(user_content={"parts": [{"text": 5}]}),
        f"{I0}.user_content.parts[0].text",
        "valid string",
    ),
    _evalset_row(
        "role-number",
        _case(user_content={"parts": [], "role": 1}),
        f"{I0}.user_content.role",
        "valid string",
    ),
    _evalset_row(
        "tool-use-arguments",
        _case(intermediate_data={"tool_uses": [{"name": "f", "arguments": {}}]}),
        f"{I0}.intermediate_data.tool_uses[0].arguments",
        'Did you mean "args"',
    ),
    _evalset_row(
        "tool-uses-object",
        _case(intermediate_data={"tool_uses": {"name": "f"}}),
        f"{I0}.intermediate_data.tool_uses",
        "must be a list",
    ),
    _evalset_row(
        "mixed-shapes",
        _case(intermediate_data={"tool_uses": [], "invocation_events": []}),
        f"{I0}.intermediate_data",
        "mixes invocation_events",
    ),
    _evalset_row(
        "event-no-author",
        _case(intermediate_data={"invocation_events": [{}]}),
        f"{I0}.intermediate_data.invocation_events[0].author",
        'missing required key "author"',
    ),
    _evalset_row(
        "event-key-typo",
        _case(intermediate_data={"invocation_events": [{"author": "a", "contnt": {}}]}),
        f"{I0}.intermediate_data.invocation_events[0].contnt",
        'Did you mean "content"',
    ),
    _evalset_row(
        "tool-use-typo",
        _case(intermediate_data={"tool_use": []}),
        f"{I0}.intermediate_data.tool_use",
        'Did you mean "tool_uses"',
    ),
    _evalset_row(
        "timestamp-string",
        _case(creation_timestamp="yesterday"),
        f"{I0}.creation_timestamp",
        "must be a number, got a string",
    ),
    _evalset_row(
        "session-no-app",
        _with_case(session_input={"user_id": "u"}),
        f"{C0}.session_input.app_name",
        'missing required key "app_name"',
    ),
    _evalset_row(
        "state-list",
        _session(state=[]),
        f"{C0}.session_input.state",
        "must be an object, got a list",
    ),
    _evalset_row(
        "session-key-typo",
        _session(sesion_id="x"),
        f"{C0}.session_input.sesion_id",
        'Did you mean "session_id"',
    ),
    _config_row(
        "matchtype",
        _config({TRAJECTORY: {"threshold": 1, "matchtype": "EXACT"}}),
        f"criteria.{TRAJECTORY}.matchtype",
        'Did you mean "match_type"',
    ),
    _config_row(
        "match-inorder",
        _config({TRAJECTORY: {"threshold": 1, "match_type": "inorder"}}),
        f"criteria.{TRAJECTORY}.match_type",
        'Did you mean "IN_ORDER"',
    ),
    _config_row(
        "match-subset",
        _config({TRAJECTORY: {"threshold": 1, "match_type": "SUBSET"}}),
        f"criteria.{TRAJECTORY}.match_type",
        "needs the rec metric",
    ),
    _config_row(
        "match-bool",
        _config({TRAJECTORY: {"threshold": 1, "match_type": True}}),
        f"criteria.{TRAJECTORY}.match_type",
        "unknown match_type true",
    ),
    _config_row(
        "metric-typo",
        _config({"response_match": 0.8}),
        "criteria.response_match",
        'Did you mean "response_match_score"',
    ),
    _config_row(
        "criterion-string",
        _config({TRAJECTORY: "high"}),
        f"criteria.{TRAJECTORY}",
        "must be a number or an object",
    ),
    _config_row(
        "no-threshold",
        _config({TRAJECTORY: {"match_type": "EXACT"}}),
        f"criteria.{TRAJECTORY}",
        "no threshold",
    ),
    _config_row(
        "threshold-string",
        _config({TRAJECTORY: {"threshold": "1"}}),
        f"criteria.{TRAJECTORY}.threshold",
        "must be a number",
    ),
    pytest.param(
        "test_config.json", _config(critera={}), "critera", 'Did you mean "criteria"', id="critera"
    ),
    _config_row(
        "custom-module-missing",
        _config({"mine": 1}, custom_metrics={"mine": {"code_config": {"name": "nomod_x.f"}}}),
        "custom_metrics.mine.code_config.name",
        'cannot import module "nomod_x"',
    ),
    pytest.param(
        "test_config.json",
        _config(
            {"mine": 1},
            custom_metrics={"mine": {"code_config": {"name": "rec_check_metrics.nope"}}},
        ),
        "custom_metrics.mine.code_config.name",
        'has no "nope"',
        id="custom-fn-missing",
    ),
    pytest.param(
        "test_config.json",
        _config(
            {"mine": 1},
            custom_metrics={"mine": {"code_config": {"name": "rec_check_metrics.NOT_CALLABLE"}}},
        ),
        "custom_metrics.mine.code_config.name",
        "is not callable",
        id="custom-not-callable",
    ),
    _config_row(
        "custom-no-dot",
        _config({"mine": 1}, custom_metrics={"mine": {"code_config": {"name": "nodot"}}}),
        "custom_metrics.mine.code_config.name",
        "not a dotted path",
    ),
    pytest.param(
        "old.test.json",
        [{"reference": "r"}],
        "[0].query",
        'missing required key "query"',
        id="legacy-no-query",
    ),
    pytest.param(
        "old.test.json",
        [{"query": "q", "expected_tool_use": [{"tool_name": "t", "tool_input": "x"}]}],
        "[0].expected_tool_use[0].tool_input",
        "must be an object, got a string",
        id="legacy-tool-input-string",
    ),
    pytest.param(
        "old.test.json",
        [{"query": "q", "refernce": "r"}],
        "[0].refernce",
        'Did you mean "reference"',
        id="legacy-refernce",
    ),
    pytest.param(
        "old.test.json",
        [{"name": "c", "data": [{"query": "q"}], "initial_sesion": {}}],
        "[0].initial_sesion",
        'Did you mean "initial_session"',
        id="legacy-cases-typo",
    ),
    pytest.param(
        "x.cassette.json",
        {"name": "x", "exchanges": [{"id": 0}]},
        "exchanges[0].recorded_at",
        "Field required",
        id="cassette-missing-fields",
    ),
    pytest.param(
        "x.cassette.json",
        {"format_version": 2, "name": "x"},
        "format_version",
        "not supported",
        id="cassette-version",
    ),
    pytest.param("x.json", {"foo": 1}, "(top level)", "not a file rec knows", id="unknown-file"),
    _evalset_row(
        "enum-number",
        _case(final_response={"role": "model", "parts": [{"media_resolution": {"level": 3}}]}),
        f"{I0}.final_response.parts[0].media_resolution.level",
        "Input should be",
    ),
]


@pytest.fixture
def metrics_module(tmp_path: Path) -> Path:
    (tmp_path / "rec_check_metrics.py").write_text(
        "NOT_CALLABLE = 1\n\ndef ok(*a):\n    return a\n"
    )
    return tmp_path


@pytest.mark.parametrize(("name", "document", "where", "message"), CORPUS)
def test_malformed_corpus(metrics_module, name, document, where, message):
    path = metrics_module / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    errors = [p for p in check_file(path) if p.severity == "error"]
    assert errors, "expected a problem"
    matching = [p for p in errors if p.where == where and message in p.problem + ". " + p.fix]
    assert matching, [str(p) for p in errors]
    assert all(p.path == str(path) and p.fix for p in errors)


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 30


def test_every_problem_in_a_file_is_reported(tmp_path):
    document = _case(final_reponse=TEXT, creation_timestamp="x")
    document["eval_cases"][0]["eval_id"] = 3
    path = tmp_path / "many.evalset.json"
    path.write_text(json.dumps(document))
    wheres = {p.where for p in check_file(path)}
    assert wheres == {f"{C0}.eval_id", f"{I0}.final_reponse", f"{I0}.creation_timestamp"}


# -- real files, in the shapes ADK writes ------------------------------------------------------


def _adk_web_evalset(folder: Path) -> Path:
    """An eval set written by ADK's LocalEvalSetsManager (what ``adk web`` uses)."""
    from google.adk.evaluation.eval_case import EvalCase, IntermediateData, Invocation, SessionInput
    from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager
    from google.genai import types

    manager = LocalEvalSetsManager(agents_dir=str(folder))
    (folder / "travel").mkdir()
    manager.create_eval_set("travel", "smoke")
    invocation = Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text="Weather in Rome?")]),
        final_response=types.Content(role="model", parts=[types.Part(text="Cloudy.")]),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name="get_weather", args={"city": "Rome"})]
        ),
    )
    manager.add_eval_case(
        "travel",
        "smoke",
        EvalCase(
            eval_id="case1",
            conversation=[invocation],
            session_input=SessionInput(app_name="travel", user_id="u", state={"a": 1}),
        ),
    )
    return folder / "travel" / "smoke.evalset.json"


def _migrated(folder: Path) -> Path:
    """A legacy file migrated by ADK's own AgentEvaluator (model_dump_json: nulls kept)."""
    from google.adk.evaluation.agent_evaluator import AgentEvaluator

    old = folder / "old.test.json"
    old.write_text(
        json.dumps(
            [
                {
                    "query": "hi",
                    "expected_tool_use": [{"tool_name": "f", "tool_input": {"x": 1}}],
                    "reference": "hello",
                },
            ]
        )
    )
    new = folder / "new.evalset.json"
    AgentEvaluator.migrate_eval_data_to_new_schema(str(old), str(new))
    return new


def _sample_live(folder: Path) -> Path:
    """The shape of ADK's live sample eval set: a scenario case and a scripted case."""
    session = {"app_name": "live_agent", "user_id": "test_user_id", "state": {}}
    scenario = {
        "starting_prompt": "Hi, can you kick off a long background task for me?",
        "conversation_plan": "Ask for a background task, then chat until it finishes.",
        "user_persona": "NOVICE",
    }
    turns = ["Please start a slow background task.", "While that runs, what is two plus two?"]
    document = {
        "eval_set_id": "live_agent",
        "name": "live_agent",
        "description": "Live eval cases.",
        "eval_cases": [
            {"eval_id": "scenario", "conversation_scenario": scenario, "session_input": session},
            {
                "eval_id": "scripted",
                "conversation": [
                    {"user_content": {"role": "user", "parts": [{"text": text}]}} for text in turns
                ],
                "session_input": session,
            },
        ],
    }
    return _write(folder / "live_agent.evalset.json", json.dumps(document, indent=2))


def _sample_empty(folder: Path) -> Path:
    """An eval set ``adk web`` creates before any case is added (nulls kept)."""
    document = {
        "eval_set_id": "evalset49e1df",
        "name": "evalset49e1df",
        "description": None,
        "eval_cases": [],
        "creation_timestamp": 1754018129.043422,
    }
    return _write(folder / "evalset49e1df.evalset.json", json.dumps(document, indent=2))


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_adk_web_evalset, id="adk-web-evalset"),
        pytest.param(_sample_live, id="adk-sample-live"),
        pytest.param(_sample_empty, id="adk-sample-empty"),
        pytest.param(_migrated, id="adk-migrated-with-nulls"),
        pytest.param(
            lambda d: _write(
                d / "rec.evalset.json",
                dump_evalset(make_evalset([[make_invocation("hi", tool_calls=[("now", None)])]])),
            ),
            id="rec-evalset",
        ),
        pytest.param(
            lambda d: _write(
                d / "camel.evalset.json",
                json.dumps(
                    {
                        "eval_set_id": "s",
                        "eval_cases": [
                            {
                                "evalId": "a",
                                "sessionInput": {"appName": "x", "userId": "u"},
                                "conversation": [
                                    {
                                        "userContent": TEXT,
                                        "finalResponse": TEXT,
                                        "intermediateData": {
                                            "toolUses": [{"name": "f", "args": {}}]
                                        },
                                    }
                                ],
                            }
                        ],
                    }
                ),
            ),
            id="camel-case-below-top",
        ),
        pytest.param(
            lambda d: _write(
                d / "test_config.json",
                json.dumps(
                    {
                        "criteria": {
                            TRAJECTORY: {"threshold": 1.0, "match_type": "in-order"},
                            "response_match_score": 0.8,
                        }
                    }
                ),
            ),
            id="adk-config",
        ),
        pytest.param(
            lambda d: _write(d / "r.cassette.json", dump_cassette(make_cassette(2))), id="cassette"
        ),
    ],
)
def test_real_files_pass(tmp_path, make):
    path = make(tmp_path)
    assert [p for p in check_file(path) if p.severity == "error"] == []


def test_a_scenario_without_a_plan_is_one_rec_cannot_run(tmp_path):
    document = {
        "eval_set_id": "s",
        "eval_cases": [{"eval_id": "sim", "conversationScenario": {"starting_prompt": "Hi"}}],
    }
    [problem] = check_file(_write(tmp_path / "s.evalset.json", json.dumps(document)))
    assert problem.where == "eval_cases[0].conversationScenario.conversation_plan"
    assert "`rec replay` fails this case" in problem.problem


def test_legacy_file_is_recognised_with_a_note(tmp_path):
    path = _write(tmp_path / "old.test.json", json.dumps([{"query": "hi", "reference": "yo"}]))
    [note] = check_file(path)
    assert note.severity == "note" and "legacy ADK eval format" in note.problem
    assert "rec import" in note.fix


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- where ADK's loader hides the real error ---------------------------------------------------


@pytest.mark.parametrize(
    ("document", "adk_error", "where", "message"),
    [
        pytest.param(
            _case(final_reponse=TEXT, user_content="hi"),
            "string indices must be integers",
            f"{I0}.user_content",
            "must be an object",
            id="string-indices",
        ),
        pytest.param(
            [{"name": "c", "dta": []}],
            "'data'",
            "[0].dta",
            'Did you mean "data"',
            id="key-error-data",
        ),
    ],
)
def test_rec_reports_what_adk_hides(tmp_path, document, adk_error, where, message):
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

    path = _write(tmp_path / "x.evalset.json", json.dumps(document))
    with pytest.raises((KeyError, TypeError)) as caught:
        load_eval_set_from_file(str(path), "x")
    assert adk_error in str(caught.value)
    assert any(p.where == where and message in str(p) for p in check_file(path))


# -- the command ---------------------------------------------------------------------------------


def test_check_command_exit_codes(tmp_path, capsys):
    (tmp_path / "good").mkdir()
    good = _write(tmp_path / "good" / "a.evalset.json", dump_evalset(make_evalset()))
    bad = _write(tmp_path / "bad.evalset.json", json.dumps(_case(final_reponse=TEXT)))
    assert main(["check", str(good.parent)]) == 0
    assert main(["check", str(bad), str(good)]) == 1
    out = capsys.readouterr().out
    assert f'{bad}:{I0}.final_reponse: unknown key "final_reponse"' in out
    assert main(["check"]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["check", str(tmp_path / "empty")]) == 2


def test_check_paths_searches_folders(tmp_path):
    _write(tmp_path / "a.evalset.json", dump_evalset(make_evalset()))
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub" / "b.test.json", "[]")
    _write(tmp_path / "notes.json", "{}")
    files, problems = check_paths([tmp_path])
    assert sorted(f.name for f in files) == ["a.evalset.json", "b.test.json"]
    assert [p.where for p in problems if p.severity == "error"] == ["(top level)"]


# -- what `rec check` costs ----------------------------------------------------------------------

HEAVY = ("google.genai", "google.adk", "nltk", "rouge_score", "scipy", "deepdiff", "aiohttp")
"""Modules `rec check` must never import (they were most of its start-up time)."""


def test_check_command_imports_nothing_heavy(tmp_path):
    """The check command, run in a fresh interpreter on every kind of file it reads."""
    _write(tmp_path / "a.evalset.json", dump_evalset(make_evalset()))
    _write(tmp_path / "r.cassette.json", dump_cassette(make_cassette(1)))
    _write(tmp_path / "test_config.json", json.dumps({"criteria": {TRAJECTORY: 1.0}}))
    _write(tmp_path / "old.test.json", json.dumps([{"query": "hi", "reference": "yo"}]))
    code = (
        "import sys\n"
        "from rec._check import check_command\n"
        f"check_command.main([{str(tmp_path)!r}], standalone_mode=False)\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert "4 file(s), 0 problems" in done.stderr, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def _parses_counted(monkeypatch: pytest.MonkeyPatch, files: list[Path]) -> Counter[str]:
    """How many times each of ``files`` is parsed as JSON from now on (its whole text
    handed to ``json.loads``, the one parser rec reads input files with)."""
    by_text = {path.read_bytes(): path.name for path in files}
    assert len(by_text) == len(files), "each file needs its own text to be told apart"
    parses: Counter[str] = Counter()
    real = json.loads

    def counting(text: Any, *args: Any, **kwargs: Any) -> Any:
        key = text.encode() if isinstance(text, str) else bytes(text)
        if key in by_text:
            parses[by_text[key]] += 1
        return real(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting)
    return parses


def test_check_parses_each_file_once(tmp_path, monkeypatch, capsys):
    """The cross-file pass (a case two eval sets of one folder share) works over the
    documents the files' own checks parsed: every file is parsed once, the cassette too."""
    two = make_evalset(["Hello", "Bye"])
    files = [
        _write(tmp_path / "a.evalset.json", dump_evalset(two)),
        _write(tmp_path / "b.evalset.json", dump_evalset(make_evalset(["Hello"]))),
        _write(tmp_path / "bad.evalset.json", json.dumps(_case(final_reponse=TEXT))),
        _write(tmp_path / "r.cassette.json", dump_cassette(make_cassette(3))),
        _write(tmp_path / "test_config.json", json.dumps({"criteria": {TRAJECTORY: 1.0}})),
    ]
    parses = _parses_counted(monkeypatch, files)
    assert main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "b.evalset.json:eval_cases[0].eval_id" in out  # the case a.evalset.json holds too
    assert 'unknown key "final_reponse"' in out
    assert dict(parses) == {path.name: 1 for path in files}


@pytest.mark.parametrize(
    ("name", "text", "status"),
    [
        pytest.param("r.cassette.json", dump_cassette(make_cassette(3)), 0, id="cassette"),
        pytest.param("bad.evalset.json", json.dumps(_case(final_reponse=TEXT)), 1, id="evalset"),
        pytest.param(
            "empty.evalset.json",
            json.dumps({"eval_set_id": "s", "eval_cases": []}),
            1,
            id="no-cases",
        ),
    ],
)
def test_check_of_one_file_parses_it_once(tmp_path, monkeypatch, name, text, status):
    """One file: the quick look at an eval set hands its parse on to the strict check."""
    path = _write(tmp_path / name, text)
    parses = _parses_counted(monkeypatch, [path])
    assert main(["check", str(path)]) == status
    assert dict(parses) == {name: 1}


class _Document(dict):  # type: ignore[type-arg]
    """A parsed document the test can hold a weak reference to."""


def test_a_checked_document_is_let_go_before_the_collector_resumes(tmp_path):
    """The check runs with the cyclic collector paused and drops the document before it
    resumes: a document still alive then would be scanned whole by the first collection
    (as long as validating a large cassette takes), only for nothing to be found."""
    path = _write(tmp_path / "r.cassette.json", dump_cassette(make_cassette(3)))
    data = path.read_bytes()
    document = _Document(json.loads(data))
    collector_on_when_freed: list[bool] = []
    weakref.finalize(document, lambda: collector_on_when_freed.append(gc.isenabled()))
    read = {path: (data, document)}
    del document
    assert gc.isenabled()
    assert check_files([path], read=read) == []
    assert read == {}, "the check takes the document it is handed"
    assert collector_on_when_freed == [False], "freed after the collector resumed"


# -- the models are the schema -------------------------------------------------------------------


@pytest.mark.parametrize("by_alias", [False, True], ids=["snake_case", "camelCase"])
def test_every_field_of_every_model_is_a_known_key(tmp_path, by_alias):
    """Keys come from the models: an EvalSet setting every field passes, in either casing."""
    document = json.loads(make_full_evalset().model_dump_json(exclude_none=True, by_alias=by_alias))
    assert "eval_cases" in document  # the top level has no camelCase, as ADK reads it
    path = _write(tmp_path / "full.evalset.json", json.dumps(document))
    assert [str(p) for p in check_file(path)] == []


def test_a_typo_deep_inside_a_google_genai_value_gets_did_you_mean(tmp_path):
    part = {"function_call": {"name": "f", "arguments": {}}}
    document = _case(user_content={"role": "user", "parts": [{"text": "hi"}, part]})
    path = _write(tmp_path / "deep.evalset.json", json.dumps(document))
    [problem] = check_file(path)
    assert problem.where == f"{I0}.user_content.parts[1].function_call.arguments"
    assert 'Did you mean "args"' in problem.fix
    assert "ADK rejects the file" in problem.problem


def test_a_misspelled_required_key_is_one_problem(tmp_path):
    document = {"eval_set_id": "s", "eval_cases": [{"eval_idd": "a", "conversation": []}]}
    path = _write(tmp_path / "typo.evalset.json", json.dumps(document))
    assert [(p.where, p.fix) for p in check_file(path)] == [
        (f"{C0}.eval_idd", 'Did you mean "eval_id"?')
    ]


# -- rec check accepts only what runs ------------------------------------------------------------

EMPTY_TURNS = [
    pytest.param({"role": "user", "parts": []}, id="no-parts"),
    pytest.param({"role": "user"}, id="parts-missing"),
    pytest.param({"role": "user", "parts": [{"text": ""}]}, id="empty-text"),
    pytest.param({"role": "user", "parts": [{"thought": True, "text": ""}]}, id="only-a-thought"),
]


@pytest.mark.parametrize("user_content", EMPTY_TURNS)
def test_an_empty_user_turn_cannot_run(tmp_path, user_content):
    path = _write(tmp_path / "e.evalset.json", json.dumps(_case(user_content=user_content)))
    [problem] = check_file(path)
    assert problem.where == I0 and "the user turn is empty" in problem.problem
    with pytest.raises(InputError, match="the user turn is empty"):
        load_evalset(path)


def test_a_user_turn_has_a_payload_exactly_when_its_dump_has_one():
    """The payload rule reads the part objects; it agrees with reading their dumps (every
    field of the full EvalSet's parts, each alone, as itself and emptied)."""
    from cassettes._evalset import _has_payload
    from cassettes._genai_types import Content, Part

    def dumped(part: Part) -> bool:
        data = part.model_dump(exclude_none=True, exclude={"thought", "thought_signature"})
        return any(value not in ("", {}, []) for value in data.values())

    full = make_full_evalset().eval_cases[0].conversation[0].user_content.parts[0]
    parts = [Part(), full]
    for name in Part.model_fields:
        value = getattr(full, name)
        parts.append(Part.model_validate({name: value}))
        if isinstance(value, BaseModel):
            parts.append(Part.model_validate({name: {}}))
        elif type(value) in (str, list, dict):
            parts.append(Part.model_validate({name: type(value)()}))
    assert len(parts) > 30
    for part in parts:
        assert _has_payload(Content(parts=[part])) == dumped(part), part


@pytest.mark.parametrize("with_id", [False, True], ids=["no-id", "with-id"])
def test_a_function_response_user_turn_cannot_run(tmp_path, with_id):
    """A long-running tool's resume turn: ADK's eval drops it or cannot match its call id."""
    response: dict[str, Any] = {"name": "approve", "response": {"ok": True}}
    if with_id:
        response["id"] = "adk-0d7c0b5e"
    turn = {"role": "user", "parts": [{"function_response": response}]}
    path = _write(tmp_path / "resume.evalset.json", json.dumps(_case(user_content=turn)))
    [problem] = check_file(path)
    assert problem.where == I0 and "the user turn is a function response" in problem.problem
    assert "End the eval case before this turn" in problem.fix
    with pytest.raises(InputError, match="long-running tool"):
        load_evalset(path)


def test_an_eval_case_with_no_turns_cannot_run(tmp_path):
    document = {"eval_set_id": "s", "eval_cases": [{"eval_id": "empty", "conversation": []}]}
    path = _write(tmp_path / "e.evalset.json", json.dumps(document))
    [problem] = check_file(path)
    assert problem.where == C0 and "no turns" in problem.problem
    with pytest.raises(InputError, match="no turns"):
        load_evalset(path)


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("as_object", [False, True], ids=["bare", "object"])
def test_a_threshold_that_is_not_a_finite_number_is_refused(tmp_path, threshold, as_object):
    criterion = {"threshold": threshold} if as_object else threshold
    path = _write(tmp_path / "test_config.json", json.dumps({"criteria": {TRAJECTORY: criterion}}))
    [problem] = check_file(path)
    assert problem.where.startswith(f"criteria.{TRAJECTORY}")
    assert "must be a finite number" in problem.problem
    with pytest.raises(InputError, match="must be a finite number"):
        load_eval_config(path)


def test_legacy_initial_state_is_flagged(tmp_path):
    case = {"name": "c", "data": [{"query": "hi"}], "initial_state": {"user": "Ada"}}
    path = _write(tmp_path / "old.test.json", json.dumps([case]))
    errors = [p for p in check_file(path) if p.severity == "error"]
    assert [p.where for p in errors] == ["[0].initial_state"]
    assert "ADK does not read initial_state" in errors[0].problem
    assert "rec import" in errors[0].fix


# -- files that cannot be read: one line each, never a traceback ---------------------------------

UNREADABLE = [
    pytest.param(b"[" * 200_000 + b"]" * 200_000, "nested too deeply", id="200k-deep"),
    pytest.param(b'{"eval_set_id": ' + b"7" * 5000 + b"}", "cannot be read", id="5000-digits"),
    pytest.param(b'{"eval_set_id": "caf\xe9"}', "not UTF-8", id="latin-1"),
]


@pytest.mark.parametrize(("data", "message"), UNREADABLE)
@pytest.mark.parametrize("name", ["a.evalset.json", "test_config.json", "r.cassette.json"])
def test_unreadable_files_are_one_problem(tmp_path, capsys, data, message, name):
    path = tmp_path / name
    path.write_bytes(data)
    [problem] = check_file(path)
    assert message in problem.problem
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and message in out


def test_a_missing_path_is_a_usage_error(tmp_path, capsys):
    good = _write(tmp_path / "a.evalset.json", dump_evalset(make_evalset()))
    assert main(["check", str(good), str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{tmp_path / 'nope'}: no such file or folder" in err
