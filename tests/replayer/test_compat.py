"""Each private google-adk name rec uses still exists, and a change is reported clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replayer._compat import (
    KNOWN_ADK,
    AdkChanged,
    adk_efficiency_evaluator,
    adk_efficiency_metrics,
    adk_legacy_eval_set,
    adk_multi_run_aggregator,
    adk_normalize_live_transcriptions,
    adk_retry_plugin,
    adk_tool_declaration,
    genai_api_client,
    set_adk_custom_function_path,
)


def test_retry_plugin_is_adks() -> None:
    from google.adk.plugins.base_plugin import BasePlugin

    plugin = adk_retry_plugin()
    assert isinstance(plugin, BasePlugin) and plugin.name == "ensure_retry_options"


def test_retry_plugin_gone_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.evaluation import _retry_options_utils

    monkeypatch.delattr(_retry_options_utils, "EnsureRetryOptionsPlugin")
    with pytest.raises(AdkChanged, match=r"has no google\.adk\.evaluation\._retry_options_utils"):
        adk_retry_plugin()


@pytest.fixture
def legacy_file(tmp_path: Path) -> Path:
    path = tmp_path / "trip.test.json"
    turns = [{"query": "Weather in Rome?", "expected_tool_use": [], "reference": "Cloudy."}]
    path.write_text(json.dumps(turns))
    return path


def test_legacy_eval_file_is_migrated_by_adk(legacy_file: Path) -> None:
    migrated = adk_legacy_eval_set(legacy_file, {})
    assert len(migrated.eval_cases) == 1
    assert migrated.eval_cases[0].conversation[0].user_content.parts[0].text == "Weather in Rome?"


def test_legacy_migration_gone_is_reported(
    legacy_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from google.adk.evaluation.agent_evaluator import AgentEvaluator

    monkeypatch.delattr(AgentEvaluator, "_get_eval_set_from_old_format")
    with pytest.raises(AdkChanged) as caught:
        adk_legacy_eval_set(legacy_file, {})
    message = str(caught.value)
    assert "AgentEvaluator._get_eval_set_from_old_format" in message
    assert f"google-adk {KNOWN_ADK}" in message and "Install google-adk" in message
    assert "replayer/" not in message  # a user is never sent to a private module


def test_custom_function_path_reaches_adks_registry() -> None:
    from google.adk.evaluation.eval_metrics import EvalMetric

    metric = EvalMetric(metric_name="my_metric", threshold=0.5)
    set_adk_custom_function_path(metric, "my_pkg.metrics.score")
    assert metric._config_custom_function_path == "my_pkg.metrics.score"


def test_custom_function_path_gone_is_reported() -> None:
    from pydantic import BaseModel

    class ChangedEvalMetric(BaseModel):  # an EvalMetric without the private attribute
        metric_name: str

    with pytest.raises(AdkChanged, match="_config_custom_function_path"):
        set_adk_custom_function_path(ChangedEvalMetric(metric_name="m"), "x.y")


def _transcribed_reply() -> object:
    from google.adk.events import Event
    from google.genai import types

    return Event(
        author="agent",
        invocation_id="inv",
        output_transcription=types.Transcription(text="It is sunny.", finished=True),
    )


def test_live_transcriptions_become_text_as_adk_makes_them() -> None:
    [event] = adk_normalize_live_transcriptions([_transcribed_reply()])
    assert event.content.role == "model"
    assert [p.text for p in event.content.parts] == ["It is sunny."]
    assert event.output_transcription is None


def test_live_transcriptions_step_gone_leaves_the_events(monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    monkeypatch.delattr(EvaluationGenerator, "_normalize_live_transcriptions")
    original = _transcribed_reply()
    [event] = adk_normalize_live_transcriptions([original])
    assert event is original and event.content is None


def test_a_tools_declaration_is_adks() -> None:
    from google.adk.tools.function_tool import FunctionTool

    def get_price(product: str) -> dict[str, str]:
        """The price of a product."""
        return {}

    declaration = adk_tool_declaration(FunctionTool(get_price))
    assert declaration.name == "get_price"
    assert adk_tool_declaration(object()) is None


def test_genai_api_client_builds_its_tls_contexts_with_the_static_methods_replay_wraps() -> None:
    from google import genai

    from replayer._model_clients import _GENAI_TLS

    api = genai_api_client()
    assert isinstance(genai.Client(api_key="k")._api_client, api)
    for name in _GENAI_TLS:
        assert isinstance(api.__dict__[name], staticmethod), name


def test_efficiency_metrics_are_the_ones_adk_adds_to_every_eval() -> None:
    from google.adk.evaluation import eval_config

    assert adk_efficiency_metrics() == eval_config._DEFAULT_EFFICIENCY_METRICS
    assert len(adk_efficiency_metrics()) == 4


def test_an_adk_without_efficiency_metrics_adds_none(monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.evaluation import eval_config

    monkeypatch.delattr(eval_config, "append_default_efficiency_metrics")
    assert adk_efficiency_metrics() == ()


@pytest.mark.parametrize("moved", [False, True], ids=["adks-class", "moved-to-the-registry"])
def test_efficiency_evaluators_are_the_registrys(
    monkeypatch: pytest.MonkeyPatch, *, moved: bool
) -> None:
    from google.adk.evaluation import _efficiency_evaluators, eval_config
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.metric_evaluator_registry import (
        DEFAULT_METRIC_EVALUATOR_REGISTRY,
    )

    if moved:
        monkeypatch.delattr(_efficiency_evaluators, "_TokenUsageV1Evaluator")
    for name in eval_config._DEFAULT_EFFICIENCY_METRICS:
        metric = EvalMetric(metric_name=name)
        got = adk_efficiency_evaluator(metric)
        assert type(got) is type(DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)), name


def test_multi_run_aggregator_is_adks() -> None:
    from google.adk.evaluation import _eval_case_result_multi_run_aggregator

    assert adk_multi_run_aggregator() is _eval_case_result_multi_run_aggregator


def test_multi_run_aggregator_changed_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.evaluation import _eval_case_result_multi_run_aggregator as aggregator

    monkeypatch.delattr(aggregator, "summarize_eval_case_results")
    with pytest.raises(AdkChanged, match=r"has no google\.adk\..*summarize_eval_case_results"):
        adk_multi_run_aggregator()
