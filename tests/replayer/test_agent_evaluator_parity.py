"""``rec.AgentEvaluator`` takes what the installed google-adk's ``AgentEvaluator`` takes.

The signatures are read from google-adk itself, so a parameter a new ADK release adds
fails here until rec takes it too. The runs are real: the travel agent recorded against
the stand-in, then ADK's own ``AgentEvaluator`` live against the stand-in and rec's
replaying the recording (stand-in stopped), both given the agent as an ``App`` with
``parallelism=2``; a plugin of that App counts the invocations running at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cassettes._errors import InputError
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from replayer._agent_evaluator import AgentEvaluator
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.travel_brain import CONVERSATION, travel_brain
from tests.agents.travel_recording import record_travel

TOKYO = ("What's the weather in Tokyo?",)
CONFIG = {"criteria": {"response_match_score": 1.0}}
"""Every case falls short of it (each expected answer has extra words): ADK's failure lines
then name each case's score."""


def _adk_methods() -> dict[str, Any]:
    from google.adk.evaluation.agent_evaluator import AgentEvaluator as AdkEvaluator

    return {
        name: member
        for name, member in inspect.getmembers(AdkEvaluator, callable)
        if not name.startswith("_")
    }


def test_adks_public_methods_are_found() -> None:
    assert {"evaluate", "evaluate_eval_set"} <= set(_adk_methods())


@pytest.mark.parametrize("name", sorted(_adk_methods()))
def test_every_parameter_of_adks_method_is_recs_in_its_place_with_its_default(
    name: str,
) -> None:
    adk_method = _adk_methods()[name]
    adk = list(inspect.signature(adk_method).parameters.values())
    ours = getattr(AgentEvaluator, name, None)
    assert ours is not None, f"rec.AgentEvaluator has no {name}"
    rec_params = list(inspect.signature(ours).parameters.values())
    assert [(p.name, p.default, p.kind) for p in rec_params[: len(adk)]] == [
        (p.name, p.default, p.kind) for p in adk
    ], "ADK's parameters, in ADK's order (a positional call means the same), same defaults"
    # What rec adds (ADK 2.15's parameters under an older ADK, rec's own keywords) has a
    # default: every call the installed ADK takes, rec takes.
    extra = rec_params[len(adk) :]
    assert all(p.default is not inspect.Parameter.empty for p in extra), extra
    assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(adk_method)


@pytest.fixture(scope="module")
def three_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """travel.evalset.json: three recorded cases, each expected answer given 1, 2 or 3 extra
    words (three different response_match scores), with CONFIG beside it."""
    folder = tmp_path_factory.mktemp("parity")
    path = record_travel(folder, [CONVERSATION, TOKYO, TOKYO])
    document = json.loads(path.read_text())
    for number, case in enumerate(document["eval_cases"], start=1):
        final = case["conversation"][-1]["final_response"]["parts"][0]
        final["text"] += " indeed" * number
    path.write_text(json.dumps(document, indent=2))
    (folder / "test_config.json").write_text(json.dumps(CONFIG))
    return path


class _Overlap:
    """Counts the invocations running at once, through an ADK plugin of the App."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.runs = 0

    def plugin(self) -> Any:
        from google.adk.plugins.base_plugin import BasePlugin

        overlap = self

        class Overlap(BasePlugin):
            async def before_run_callback(self, *, invocation_context: Any) -> None:
                overlap.running += 1
                overlap.runs += 1
                overlap.most = max(overlap.most, overlap.running)

            async def after_run_callback(self, *, invocation_context: Any) -> None:
                overlap.running -= 1

        return Overlap(name="overlap")


def _travel_app(overlap: _Overlap) -> Any:
    from google.adk.apps import App

    from tests.agents.travel import agent

    return App(name="travel", root_agent=agent.root_agent, plugins=[overlap.plugin()])


def _failure_lines(error: AssertionError) -> list[str]:
    """ADK's lines of an evaluation's failure message: its heading, then each failure in
    order of score (the cases ran at once: they end in any order)."""
    lines = str(error).splitlines()
    found = [line for line in lines if re.match(r"\w+ for \w+ Failed\. Expected", line)]
    return [lines[0]] + sorted(found, key=lambda line: float(line.rsplit(" ", 1)[1].rstrip(".")))


@contextlib.contextmanager
def _adk_live() -> Iterator[None]:
    """ADK's own evaluator reaches the stand-in (the travel brain) as the model."""
    with (
        StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api,
        pytest.MonkeyPatch.context() as env,
    ):
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        env.setenv("GOOGLE_GEMINI_BASE_URL", api.url)
        env.setenv("TRAVEL_RATES_URL", f"{api.url}/rates")
        yield


def _adk_run(path: Path, parallelism: int) -> tuple[list[str], _Overlap]:
    from google.adk.evaluation.agent_evaluator import AgentEvaluator as AdkEvaluator

    with _adk_live():
        return _evaluate(AdkEvaluator, path, parallelism)


def _rec_run(path: Path, parallelism: int | None) -> tuple[list[str], _Overlap]:
    return _evaluate(AgentEvaluator, path, parallelism)


def _evaluate(evaluator: Any, path: Path, parallelism: int | None) -> tuple[list[str], _Overlap]:
    """The failure lines of ``evaluator.evaluate`` on the travel App, and its overlap count."""
    overlap = _Overlap()
    with pytest.raises(AssertionError) as failed:
        asyncio.run(
            evaluator.evaluate(
                _travel_app(overlap),
                str(path),
                num_runs=1,
                print_detailed_results=False,
                parallelism=parallelism,
            )
        )
    return _failure_lines(failed.value), overlap


@pytest.mark.usefixtures("loopback_only")
def test_parallelism_runs_cases_at_once_and_scores_them_as_adk(three_cases: Path) -> None:
    if "parallelism" not in inspect.signature(_adk_methods()["evaluate"]).parameters:
        pytest.skip("this google-adk's AgentEvaluator has no parallelism (ADK 2.15 added it)")
    adk_lines, adk_overlap = _adk_run(three_cases, parallelism=2)
    rec_lines, rec_overlap = _rec_run(three_cases, parallelism=2)

    assert len(adk_lines) == 1 + 3, adk_lines  # a line per case: each ran and was scored
    assert rec_lines == adk_lines
    turns = len(CONVERSATION) + 2 * len(TOKYO)
    assert adk_overlap.runs == rec_overlap.runs == turns
    assert adk_overlap.most == rec_overlap.most == 2


@pytest.mark.usefixtures("loopback_only")
def test_without_parallelism_the_eval_configs_applies_else_one_at_a_time(
    three_cases: Path,
) -> None:
    config = three_cases.parent / "test_config.json"
    lines, overlap = _rec_run(three_cases, parallelism=None)
    assert len(lines) == 1 + 3 and overlap.most == 1
    config.write_text(json.dumps({**CONFIG, "parallelism": 3}))
    try:
        assert AgentEvaluator.find_config_for_test_file(str(three_cases)).parallelism == 3
        assert _rec_run(three_cases, parallelism=None)[1].most == 3
        assert _rec_run(three_cases, parallelism=1)[1].most == 1  # the argument wins
    finally:
        config.write_text(json.dumps(CONFIG))


@pytest.mark.usefixtures("loopback_only")
def test_evaluate_eval_set_reads_parallelism_from_adks_eval_config(three_cases: Path) -> None:
    from google.adk.evaluation.eval_config import EvalConfig as AdkEvalConfig
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    if "parallelism" not in AdkEvalConfig.model_fields:
        pytest.skip("this google-adk's EvalConfig has no parallelism (ADK 2.15 added it)")
    eval_set = AdkEvalSet.model_validate_json(three_cases.read_text())
    for config, most in ((AdkEvalConfig(parallelism=3, **CONFIG), 3), (AdkEvalConfig(**CONFIG), 1)):
        overlap = _Overlap()
        with pytest.raises(AssertionError, match="response_match_score for travel Failed"):
            asyncio.run(
                AgentEvaluator.evaluate_eval_set(
                    _travel_app(overlap),
                    eval_set,
                    eval_config=config,
                    num_runs=1,
                    print_detailed_results=False,
                    recording=str(three_cases.parent / "travel.cassette.json"),
                )
            )
        assert (overlap.runs, overlap.most) == (len(CONVERSATION) + 2 * len(TOKYO), most)


@pytest.mark.usefixtures("loopback_only")
def test_a_bare_agent_scores_as_its_app(three_cases: Path) -> None:
    from tests.agents.travel import agent

    lines, _ = _rec_run(three_cases, parallelism=2)
    with pytest.raises(AssertionError) as failed:
        asyncio.run(
            AgentEvaluator.evaluate(
                agent.root_agent, str(three_cases), num_runs=1, print_detailed_results=False
            )
        )
    bare = _failure_lines(failed.value)
    assert len(bare) == len(lines)
    # Named as in ADK: the agent's own name, where the App's was its name.
    assert [line.replace(" for travel_agent ", " for travel ") for line in bare] == lines


@pytest.mark.parametrize(
    ("agent_module", "kwargs", "error", "message"),
    [
        (42, {}, TypeError, "Unsupported agent_module type: int"),
        (None, {}, TypeError, "Unsupported agent_module type: NoneType"),
        ("m", {"parallelism": 0}, ValueError, "`parallelism` must be at least 1, got 0."),
        ("m", {"num_runs": 0}, ValueError, "`num_runs` must be at least 1, got 0."),
    ],
)
def test_what_adk_refuses_rec_refuses_with_adks_exception(
    three_cases: Path, agent_module: Any, kwargs: dict[str, Any], error: type, message: str
) -> None:
    from google.adk.evaluation.agent_evaluator import AgentEvaluator as AdkEvaluator

    for evaluator in (AdkEvaluator, AgentEvaluator):
        with pytest.raises(error, match=re.escape(message)):
            asyncio.run(evaluator.evaluate(agent_module, str(three_cases), **kwargs))


def test_a_missing_sub_agent_of_a_given_agent_is_named(three_cases: Path) -> None:
    from tests.agents.travel import agent

    with pytest.raises(InputError, match="no sub-agent named 'nope'.*booking_agent"):
        asyncio.run(AgentEvaluator.evaluate(agent.root_agent, str(three_cases), agent_name="nope"))


def test_an_app_without_a_root_agent_is_refused_as_adk_does(three_cases: Path) -> None:
    from google.adk.apps import App
    from google.adk.evaluation.agent_evaluator import AgentEvaluator as AdkEvaluator

    app = App.model_construct(name="travel", root_agent=None)  # App() itself refuses it
    for evaluator in (AdkEvaluator, AgentEvaluator):
        with pytest.raises(TypeError, match="App 'travel' does not have a root_agent."):
            asyncio.run(evaluator.evaluate(app, str(three_cases)))


def _stable(value: Any, volatile: frozenset[str] = frozenset({"eval_set_id", "name"})) -> Any:
    """The document without what ADK's migration draws afresh each time (the set's id and
    name, each invocation's id and time)."""
    if isinstance(value, dict):
        inner = frozenset({"invocation_id", "creation_timestamp"})
        return {k: _stable(v, inner) for k, v in value.items() if k not in volatile | inner}
    if isinstance(value, list):
        return [_stable(v, volatile) for v in value]
    return value


def test_a_legacy_file_migrates_as_adks(tmp_path: Path) -> None:
    from google.adk.evaluation.agent_evaluator import AgentEvaluator as AdkEvaluator

    legacy = tmp_path / "trip.test.json"
    turns = [{"query": "Weather in Rome?", "expected_tool_use": [], "reference": "Cloudy."}]
    legacy.write_text(json.dumps(turns))
    session = tmp_path / "session.json"
    session.write_text(json.dumps({"state": {"unit": "celsius"}}))
    for evaluator, name in ((AdkEvaluator, "adk.json"), (AgentEvaluator, "rec.json")):
        evaluator.migrate_eval_data_to_new_schema(str(legacy), str(tmp_path / name), str(session))
    ours = json.loads((tmp_path / "rec.json").read_text())
    assert ours["eval_cases"][0]["conversation"][0]["final_response"]["parts"][0]["text"] == (
        "Cloudy."
    )
    assert _stable(ours) == _stable(json.loads((tmp_path / "adk.json").read_text()))
    for evaluator in (AdkEvaluator, AgentEvaluator):
        with pytest.raises(ValueError, match="One of old_eval_data_file or new_eval_data_file"):
            evaluator.migrate_eval_data_to_new_schema(str(legacy), "")
