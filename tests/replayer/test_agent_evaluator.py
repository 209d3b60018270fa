"""``rec.AgentEvaluator`` runs in-memory eval sets and configs: no temporary files."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cassettes._errors import InputError
from replayer._agent_evaluator import AgentEvaluator
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("evaluator")
    record_travel(folder, [("What's the weather in Tokyo?",)])
    return folder


@pytest.fixture
def no_temp_files(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Fails the test if a temporary folder other than the replay's placeholder ADC folder
    (``replayer._placeholder_credentials``) is created; yields the folders created."""
    created: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def mkdtemp(*args: Any, **kwargs: Any) -> Any:
        folder = real_mkdtemp(*args, **kwargs)
        created.append(Path(folder).name)
        return folder

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    yield created
    assert [name for name in created if not name.startswith("rec-replay-")] == []


@pytest.mark.usefixtures("no_temp_files", "loopback_only")
def test_evaluate_eval_set_takes_adks_in_memory_eval_set(recorded: Path) -> None:
    from google.adk.evaluation.eval_config import EvalConfig as AdkEvalConfig
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    adk_set = AdkEvalSet.model_validate_json((recorded / "travel.evalset.json").read_text())
    for config in (
        {"criteria": {"tool_trajectory_avg_score": 1.0}},
        {"eval_config": AdkEvalConfig(criteria={"response_match_score": 0.8})},
    ):
        asyncio.run(
            AgentEvaluator.evaluate_eval_set(
                str(TRAVEL_AGENT),
                adk_set,
                **config,  # type: ignore[arg-type]
                num_runs=1,
                print_detailed_results=False,
                recording=str(recorded / "travel.cassette.json"),
            )
        )


@pytest.mark.usefixtures("no_temp_files", "loopback_only")
def test_evaluate_reads_the_file_and_writes_nothing(recorded: Path) -> None:
    asyncio.run(
        AgentEvaluator.evaluate(
            str(TRAVEL_AGENT),
            str(recorded / "travel.evalset.json"),
            num_runs=1,
            print_detailed_results=False,
        )
    )


def test_an_in_memory_eval_set_needs_its_recording(recorded: Path) -> None:
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    adk_set = AdkEvalSet.model_validate_json((recorded / "travel.evalset.json").read_text())
    with pytest.raises(InputError, match="in-memory eval set has no file beside which"):
        asyncio.run(
            AgentEvaluator.evaluate_eval_set(
                str(TRAVEL_AGENT), adk_set, criteria={"response_match_score": 0.8}
            )
        )


def test_a_dotted_eval_file_name_expects_the_cassette_of_its_full_name(
    recorded: Path, tmp_path: Path
) -> None:
    evalset = tmp_path / "my.agent.test.json"
    shutil.copy(recorded / "travel.evalset.json", evalset)
    with pytest.raises(InputError, match="so that my.agent.cassette.json sits beside it"):
        asyncio.run(
            AgentEvaluator.evaluate(
                str(TRAVEL_AGENT), str(evalset), num_runs=1, print_detailed_results=False
            )
        )
