"""Judge metrics scored by the Vertex AI evaluation service: recorded once, then replayed.

ADK's own evaluators (``safety_v1``, ``multi_turn_task_success_v1``) drive the real
``agentplatform`` client over a real socket to a stand-in of the service on 127.0.0.1
(``tests/evaluation_service.py``) while ``rec score --record-judge`` records; then
``rec score --judge-recording`` runs without credentials, the stand-in stopped and a
listener on its port counting connections. A call the recording does not hold fails the
metric, naming it and the recording, and is never sent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from rec.cli import main
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from replayer._placeholder_credentials import PLACEHOLDER_API_KEY
from replayer._scoring.evaluation_service import (
    PLACEHOLDER_PROJECT,
    missing_recording,
    refusal_in,
    service_environment,
)
from tests.agents.rates_api import STANDIN_ROUTES
from tests.agents.travel_brain import CONVERSATION, travel_brain
from tests.agents.travel_recording import TRAVEL_AGENT, record_travel
from tests.evaluation_service import StandinEvaluationService, pointing_evaluation_clients_at
from tests.factories import counting_listener
from tests.replayer.evalsets import evalset, invocation
from tests.replayer.score_command import score_files, score_json

# agentplatform's own warnings on import (pydantic deprecations, experimental features).
pytestmark = pytest.mark.filterwarnings(
    "ignore::UserWarning", "ignore::FutureWarning", "ignore::DeprecationWarning"
)

_ADC = {
    "type": "authorized_user",
    "client_id": "fake.apps.googleusercontent.com",
    "client_secret": "fake",
    "refresh_token": "fake",
    "token": "fake-token",
    "expiry": "2999-01-01T00:00:00Z",
}
"""Application Default Credentials with a fake token that never needs refreshing (the
evaluation client builds storage clients, which want some)."""


def _files(tmp_path: Path, metric: str, reply: str = "Paris is the capital.") -> dict[str, Path]:
    turns = [
        invocation(user="Hello", reply="Hi, how can I help?"),
        invocation(user="Capital of France?", reply="Paris is the capital."),
    ]
    got = [*turns[:1], invocation(user="Capital of France?", reply=reply)]
    want, actual = evalset({"capital": turns}), evalset({"capital": got})
    return score_files(tmp_path, want, actual, {"criteria": {metric: 0.5}})


def _record(
    files: dict[str, Path],
    service: StandinEvaluationService,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, Any]:
    """Score once with (fake) credentials, the service reached and recorded."""
    adc = files["config"].parent / "adc.json"
    adc.write_text(json.dumps(_ADC))
    with monkeypatch.context() as env:
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        env.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
        with pointing_evaluation_clients_at(monkeypatch, service.url):
            return score_json(capsys, files, "--record-judge", str(files["judge"]))


def _replay_judge(
    files: dict[str, Path],
    cassette: Path,
    service: StandinEvaluationService,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, Any]:
    """Score with no credentials from ``cassette``, the (stopped) service's address still
    leading to a listener, which must see no connection."""
    with (
        counting_listener(service.url) as connections,
        pointing_evaluation_clients_at(monkeypatch, service.url),
    ):
        found = score_json(capsys, files, "--judge-recording", str(cassette))
        assert connections() == 0
    return found


def _metric(result: Any) -> dict[str, Any]:
    found: dict[str, Any] = result["eval_case_results"][0]["overall_eval_metric_results"][0]
    return found


@pytest.mark.parametrize(
    "metric",
    [
        pytest.param("safety_v1", id="single-turn"),
        pytest.param("multi_turn_task_success_v1", id="multi-turn"),
    ],
)
def test_evaluation_service_metric_recorded_then_replayed_without_reaching_it(
    tmp_path: Path,
    metric: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    loopback_only: Any,
) -> None:
    files = _files(tmp_path, metric)
    with StandinEvaluationService(scores={metric: 0.75}) as service:
        code, live = _record(files, service, monkeypatch, capsys)
        assert code == 0, json.dumps(live)
    names = service.asked
    assert names and set(names) == {metric}
    assert _metric(live)["score"] == 0.75
    cassette = files["judge"] / "judge.cassette.json"
    text = cassette.read_text()
    assert ":evaluateInstances" in text and FAKE_API_KEY not in text

    # CI: no credentials, the service gone; its address still leads to a listener.
    code, replayed = _replay_judge(files, cassette, service, monkeypatch, capsys)
    assert code == 0, replayed
    assert _metric(replayed) == _metric(live)
    assert not loopback_only.attempts


def test_evaluation_service_call_without_recording_fails_naming_metric_and_recording(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    loopback_only: Any,
) -> None:
    files = _files(tmp_path, "safety_v1")
    with StandinEvaluationService() as service:
        code, live = _record(files, service, monkeypatch, capsys)
        assert code == 0, live
    cassette = files["judge"] / "judge.cassette.json"
    # The agent answers differently: the judge's call is not the recorded one.
    changed = _files(tmp_path, "safety_v1", reply="It is Lyon.")
    code, replayed = _replay_judge(changed, cassette, service, monkeypatch, capsys)
    assert code == 1
    metric = _metric(replayed)
    assert metric["eval_status"] == 3  # not evaluated, which fails the case
    (reason,) = replayed["eval_case_results"][0]["failure_reasons"]
    assert "safety_v1 could not run: it calls the Vertex AI evaluation service" in reason
    assert ":evaluateInstances was not recorded in " + str(cassette) in reason
    assert not loopback_only.attempts


def _agent_live(
    args: list[str],
    service: StandinEvaluationService,
    adc: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, list[str]]:
    """``rec replay ARGS`` with a (fake) key, the model and ``service`` up: the exit status,
    the output and the metric each call ``service`` received asked for."""
    with (
        StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as api,
        monkeypatch.context() as env,
        pointing_evaluation_clients_at(monkeypatch, service.url),
    ):
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        env.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
        env.setenv("TRAVEL_RATES_URL", f"{api.url}/rates")
        code = main([*args, "--upstream", api.url])
        output = capsys.readouterr()
    asked = [
        r["metrics"][0]["predefined_metric_spec"]["metric_spec_name"] for r in service.requests
    ]
    return code, output.out + output.err, asked


def _agent_replay(
    args: list[str], url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    """``rec replay ARGS`` with no credentials, a listener on the service's address."""
    with (
        counting_listener(url) as connections,
        pointing_evaluation_clients_at(monkeypatch, url),
    ):
        code = main(args)
        output = capsys.readouterr()
        assert connections() == 0
    return code, output.out + output.err


def test_agent_run_in_record_and_auto_mode_records_the_service_calls_and_replay_serves_them(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    loopback_only: Any,
) -> None:
    """``rec replay --mode record`` of an ADK agent whose config asks for a multi-turn
    metric: the judge sees ids ADK makes up in every run, and still sends the recorded call.
    A metric added later is missing from the recording until ``--mode auto`` adds it."""
    evalset_path = record_travel(tmp_path, [CONVERSATION], name="trip")
    config = tmp_path / "judged.json"
    config.write_text(json.dumps({"criteria": {"multi_turn_tool_use_quality_v1": 0.5}}))
    adc = tmp_path / "adc.json"
    adc.write_text(json.dumps(_ADC))
    replay = ["replay", str(TRAVEL_AGENT), str(evalset_path), "--config", str(config)]
    with StandinEvaluationService() as service:
        code, output, asked = _agent_live(
            [*replay, "--mode", "record"], service, adc, monkeypatch, capsys
        )
    assert code == 0, output
    assert asked == ["multi_turn_tool_use_quality_v1"]
    url = service.url  # stopped: replay finds a listener there
    assert ":evaluateInstances" in (tmp_path / "trip.cassette.json").read_text()
    for run in range(2):  # each run's ADK ids are new; the call is the recorded one
        code, output = _agent_replay(replay, url, monkeypatch, capsys)
        assert code == 0, f"run {run}: {output}"

    both = {"multi_turn_tool_use_quality_v1": 0.5, "safety_v1": 0.5}
    config.write_text(json.dumps({"criteria": both}))
    code, output = _agent_replay(replay, url, monkeypatch, capsys)
    said = " ".join(output.split())  # the report wraps its lines to the terminal's width
    assert code == 1 and "safety_v1 could not run: it calls the Vertex AI evaluation" in said
    with StandinEvaluationService() as service:
        code, output, asked = _agent_live(
            [*replay, "--mode", "auto"], service, adc, monkeypatch, capsys
        )
    assert code == 0, output
    assert asked and set(asked) == {"safety_v1"}  # the multi-turn call came from the recording
    code, output = _agent_replay(replay, url, monkeypatch, capsys)
    assert code == 0, output
    assert not loopback_only.attempts


@pytest.mark.parametrize(
    ("given", "inside"),
    [
        pytest.param(
            {"GOOGLE_API_KEY": FAKE_API_KEY},
            {"GOOGLE_API_KEY": FAKE_API_KEY, "GOOGLE_CLOUD_PROJECT": PLACEHOLDER_PROJECT},
            id="key-without-project-gets-a-placeholder-project",
        ),
        pytest.param(
            {"GOOGLE_API_KEY": PLACEHOLDER_API_KEY, "GOOGLE_CLOUD_PROJECT": "p"}
            | {"GOOGLE_CLOUD_LOCATION": "us-central1"},
            {"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"},
            id="replayed-project-sets-the-placeholder-key-aside",
        ),
        pytest.param(
            {"GOOGLE_API_KEY": FAKE_API_KEY, "GOOGLE_CLOUD_PROJECT": "p"}
            | {"GOOGLE_CLOUD_LOCATION": "us-central1"},
            {"GOOGLE_API_KEY": FAKE_API_KEY, "GOOGLE_CLOUD_PROJECT": "p"}
            | {"GOOGLE_CLOUD_LOCATION": "us-central1"},
            id="real-credentials-untouched",
        ),
        pytest.param({}, {}, id="nothing-given-nothing-made-up"),
    ],
)
def test_the_evaluation_client_environment_is_set_for_the_block_only(
    given: dict[str, str], inside: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in given.items():
        monkeypatch.setenv(name, value)
    names = ("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION")
    with service_environment():
        seen = {name: os.environ[name] for name in names if name in os.environ}
    assert seen == inside
    assert {name: os.environ[name] for name in names if name in os.environ} == given


def test_a_refused_read_deep_in_the_causes_names_the_missing_recording() -> None:
    """``response_evaluation_score`` reads its definition from Cloud Storage: a refused read
    reaches the evaluator as a ValueError from an OSError from google-api-core's
    RetryError, whose ``cause`` is the refusal."""
    from google.api_core.exceptions import RetryError
    from requests import ConnectionError as RequestsConnectionError

    refused = RequestsConnectionError(
        "rec: the tool call GET https://storage.googleapis.com/x was not recorded in "
        "evals/a.cassette.json; replay never sends it (a requests call). Re-record the agent"
    )
    try:
        try:
            try:
                raise RetryError("Timeout of 120.0s exceeded", refused)
            except RetryError as retry:
                raise OSError("Error checking for metric file version 'v1'") from retry
        except OSError as io:
            raise ValueError("Metric 'COHERENCE' could not be resolved") from io
    except ValueError as exc:
        found = refusal_in(exc)
    assert found == str(refused)
    reason = missing_recording("response_evaluation_score", [found])
    assert reason is not None and reason.startswith("response_evaluation_score could not run")
    assert "GET https://storage.googleapis.com/x was not recorded in evals/a.cassette" in reason
    assert "Re-record the agent" not in reason
    assert refusal_in(ValueError("no recording involved")) is None
