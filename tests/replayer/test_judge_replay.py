"""An LLM-judge metric recorded once with credentials, then replayed in CI without any."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rec.cli import main
from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from rec.standin.server import StandinGemini
from tests.replayer.evalsets import evalset, invocation
from tests.replayer.score_command import score_files, score_json

# Every test runs with nothing beyond loopback reachable.
pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.usefixtures("loopback_only"),
]


def judge_model(request: StandinRequest) -> Reply | None:
    """Answers ADK's final_response_match_v2 prompt the way a judge model does."""
    if request.rpc != "generateContent":
        return None
    prompt = json.dumps(request.contents)
    verdict = "valid" if "Paris" in prompt else "invalid"
    return Reply.text(
        json.dumps(
            {"reasoning": "Both name the same city.", "is_the_agent_response_valid": verdict}
        )
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    want = evalset(
        {"capital": [invocation(user="Capital of France?", reply="Paris is the capital")]}
    )
    got = evalset({"capital": [invocation(user="Capital of France?", reply="It is Paris.")]})
    config = {
        "criteria": {
            "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"num_samples": 1}}
        }
    }
    return score_files(tmp_path, want, got, config)


def _record_judge(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], api: StandinGemini
) -> tuple[int, Any, Path]:
    """Score once with a (fake) key, the judge's calls recorded through the stand-in ``api``,
    then stop the stand-in: the exit status, the result, and the judge's cassette."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        code, live = score_json(
            capsys, files, "--record-judge", str(files["judge"]), "--upstream", api.url
        )
    api.stop()
    return code, live, files["judge"] / "judge.cassette.json"


def test_judge_recorded_then_replayed_without_credentials(
    files: dict[str, Path], standin_factory: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    api = standin_factory(judge_model)
    code, live, cassette = _record_judge(capsys, files, api)
    assert code == 0, live
    assert len(api.requests) == 1 and "is_the_agent_response_valid" in json.dumps(
        api.requests[0].body
    )
    assert FAKE_API_KEY not in cassette.read_text()

    code, replayed = score_json(capsys, files, "--judge-recording", str(cassette))
    assert code == 0, replayed
    metric = replayed["eval_case_results"][0]["overall_eval_metric_results"][0]
    assert metric["metric_name"] == "final_response_match_v2"
    assert metric["score"] == 1.0 and metric["eval_status"] == 1
    assert (
        replayed["eval_case_results"][0]["overall_eval_metric_results"]
        == (live["eval_case_results"][0]["overall_eval_metric_results"])
    )


def test_judge_with_no_recording_and_no_credentials_fails_the_case(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["score", str(files["expected"]), str(files["actual"]), "--config", str(files["config"])]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "final_response_match_v2 was not evaluated" in out and "--allow-not-evaluated" in out


def test_every_judge_sample_is_recorded_and_replayed_in_order(
    files: dict[str, Path], standin_factory: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """num_samples 3: three identical judge requests, answered invalid, valid, invalid."""
    config = json.loads(files["config"].read_text())
    config["criteria"]["final_response_match_v2"]["judge_model_options"]["num_samples"] = 3
    files["config"].write_text(json.dumps(config))
    verdicts = iter(["invalid", "valid", "invalid"])

    def wavering_judge(request: StandinRequest) -> Reply | None:
        if request.rpc != "generateContent":
            return None
        return Reply.text(
            json.dumps({"reasoning": "-", "is_the_agent_response_valid": next(verdicts)})
        )

    api = standin_factory(wavering_judge)
    code, live, cassette = _record_judge(capsys, files, api)
    assert len(api.requests) == 3, live
    assert len(json.loads(cassette.read_text())["exchanges"]) == 3
    code_replayed, replayed = score_json(capsys, files, "--judge-recording", str(cassette))
    assert code_replayed == code
    live_metric = live["eval_case_results"][0]["overall_eval_metric_results"]
    assert replayed["eval_case_results"][0]["overall_eval_metric_results"] == live_metric
    assert live_metric[0]["score"] == 0.0  # two of three samples said invalid
