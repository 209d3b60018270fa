"""The eval config's ``multi_run_config`` accepts and refuses what google-adk 2.15's does.

Each config is validated by ADK's own ``EvalConfig`` and by rec's: both accept it, or both
refuse it (rec with an InputError naming the file, the place and the fix). rec alone refuses
``custom_methods``, which it does not run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from cassettes._errors import InputError
from cassettes._eval_config import parse_eval_config
from cassettes._multi_run_config import BUILT_IN_METHODS

adk_config = pytest.importorskip("google.adk.evaluation.eval_config")
adk_methods = pytest.importorskip("google.adk.evaluation._multi_run_aggregation_methods")

CRITERIA = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


def test_the_built_in_methods_are_adks() -> None:
    adk = {
        name: (method.uses_scores, method.compute_with_k is not None)
        for name, method in adk_methods.get_built_in_aggregation_methods().items()
    }
    assert adk == BUILT_IN_METHODS


CASES = [
    pytest.param({}, True, id="empty"),
    pytest.param({"num_runs": 3, "max_crashed_runs": 1}, True, id="counts"),
    pytest.param({"numRuns": 3, "crossRunScoring": "min_over_runs"}, True, id="camel"),
    pytest.param({"num_runs": 0}, False, id="zero-runs"),
    pytest.param({"max_crashed_runs": -1}, False, id="negative-crashes"),
    pytest.param({"nm_runs": 2}, False, id="misspelled"),
    pytest.param({"cross_run_scoring": "mean"}, False, id="unknown-method"),
    pytest.param({"cross_run_scoring": "pass_rate"}, False, id="count-without-threshold"),
    pytest.param(
        {"cross_run_scoring": {"method": "mean_of_runs", "threshold": 0.5}},
        False,
        id="scores-with-threshold",
    ),
    pytest.param(
        {"cross_run_scoring": {"method": "pass_rate", "threshold": 0.5}}, True, id="pass-rate"
    ),
    pytest.param(
        {"cross_run_scoring": {"method": "pass_rate", "threshold": 1.5}}, False, id="over-one"
    ),
    pytest.param({"cross_run_criteria": [{"method": "pass_rate"}]}, False, id="no-threshold"),
    pytest.param({"cross_run_criteria": [{"method": "pass_at_k", "k": 3}]}, True, id="report"),
    pytest.param({"cross_run_criteria": [{"method": "pass_hat_k"}]}, False, id="no-k"),
    pytest.param({"cross_run_criteria": [{"method": "pass_hat_k", "k": 0}]}, False, id="k-0"),
    pytest.param({"cross_run_criteria": [{"method": "min_over_runs"}]}, False, id="scores-rule"),
    pytest.param(
        {"cross_run_scoring_by_metric": {"response_match_score": "min_over_runs"}},
        True,
        id="by-metric",
    ),
    pytest.param(
        {"cross_run_scoring_by_metric": {"response_match_scor": "min_over_runs"}},
        False,
        id="by-unknown-metric",
    ),
    pytest.param(
        {
            "cross_run_scoring_by_metric": {
                "response_match_score": {"method": "pass_at_k", "k": 2, "threshold": 0.5}
            }
        },
        False,
        id="pass-k-outside-criteria",
    ),  # fmt: skip
]


@pytest.mark.parametrize(("multi_run", "valid"), CASES)
def test_rec_accepts_and_refuses_as_adk_does(multi_run: dict[str, Any], valid: bool) -> None:
    document = {"criteria": CRITERIA, "multi_run_config": multi_run}
    try:
        adk_config.EvalConfig.model_validate(document)
    except ValidationError:
        adk_valid = False
    else:
        adk_valid = True
    assert adk_valid is valid
    if valid:
        parsed = parse_eval_config(json.dumps(document), path="test_config.json")
        assert parsed.multi_run_config is not None
        return
    with pytest.raises(InputError, match=r"^test_config\.json:multi_run_config"):
        parse_eval_config(json.dumps(document), path="test_config.json")


def test_custom_methods_load_in_adk_but_rec_refuses_them() -> None:
    multi_run = {
        "custom_methods": {"p25": {"code_config": {"name": "m.p25"}, "uses_scores": True}},
        "cross_run_scoring": "p25",
    }
    document = {"criteria": CRITERIA, "multi_run_config": multi_run}
    adk_config.EvalConfig.model_validate(document)
    with pytest.raises(InputError, match="custom_methods .p25. is not run by rec"):
        parse_eval_config(json.dumps(document), path="test_config.json")


def test_rec_check_knows_a_config_by_its_multi_run_config(tmp_path: Path) -> None:
    from cassettes._checking import detect_kind

    assert detect_kind(tmp_path / "rules.json", {"multiRunConfig": {"numRuns": 2}}) == (
        "eval_config"
    )
