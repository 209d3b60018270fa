"""Which eval sets and config an ``adk eval`` command runs, and the scenarios its EvalSet keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cassettes._evalset import EvalCase, EvalSet
from cassettes._evalset_writer import keep_scenarios
from recorder._adk_eval_command import adk_eval_run
from tests.factories import make_evalset, make_invocation


@pytest.mark.parametrize(
    ("command", "evalsets", "config"),
    [
        pytest.param(
            ["adk", "eval", "agents/trip", "a.evalset.json", "--config_file_path", "c.json"],
            ["a.evalset.json"],
            "c.json",
            id="config-after",
        ),
        pytest.param(
            ["/venv/bin/adk", "eval", "--config_file_path=c.json", "agents/trip", "a.json:x,y"],
            ["a.json"],
            "c.json",
            id="config-first-case-ids",
        ),
        pytest.param(
            ["adk", "eval", "--print_detailed_results", "agents/trip", "a.json", "b.json"],
            ["a.json", "b.json"],
            None,
            id="flag-two-files",
        ),
    ],
)
def test_adk_eval_command_names_its_eval_sets_and_config(
    command: list[str], evalsets: list[str], config: str | None
) -> None:
    run = adk_eval_run(command)
    assert run is not None
    assert run.evalsets == [Path(p) for p in evalsets]
    assert run.config == (Path(config) if config else None)


@pytest.mark.parametrize(
    "command", [["adk", "web", "agents"], ["python", "eval.py"], ["adk", "eval"]]
)
def test_other_commands_are_not_adk_eval(command: list[str]) -> None:
    assert adk_eval_run(command) is None


def test_the_sessions_of_scenarios_become_the_scenario_cases(tmp_path: Path) -> None:
    scenario = EvalCase(
        eval_id="tour",
        conversation_scenario={"starting_prompt": "Hi!", "conversation_plan": "Ask the time."},
    )
    recorded = make_evalset(
        [[make_invocation("Hi!"), make_invocation("Ask the time.")], "Something else"]
    )
    source = tmp_path / "s.evalset.json"
    source.write_text(
        json.dumps({"eval_set_id": "s", "eval_cases": [scenario.model_dump(exclude_none=True)]})
    )
    run = adk_eval_run(["adk", "eval", "agent", str(source)])
    assert run is not None
    kept = keep_scenarios(recorded, run.scenarios())
    assert isinstance(kept, EvalSet)
    assert [c.eval_id for c in kept.eval_cases] == ["tour", "case_1"]
    assert kept.eval_cases[0].conversation is None
    assert kept.eval_cases[1] == recorded.eval_cases[1]
