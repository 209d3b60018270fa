"""Eval-config loading: every form ADK accepts (compared with ADK's parser), strict rejections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.eval_config import EvalConfig as AdkEvalConfig
from google.adk.evaluation.eval_config import get_eval_metrics_from_config
from google.adk.evaluation.eval_metrics import ToolTrajectoryCriterion

from cassettes._errors import InputError
from cassettes._eval_config import (
    DEFAULT_EVAL_CONFIG,
    MatchType,
    find_eval_config,
    load_eval_config,
    parse_eval_config,
)

ACCEPTED = [
    pytest.param({"criteria": {"tool_trajectory_avg_score": 1}}, id="bare-int"),
    pytest.param({"criteria": {"response_match_score": 0.7}}, id="bare-float"),
    pytest.param(
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 0.5, "match_type": "IN_ORDER"}}},
        id="object-snake",
    ),
    pytest.param(
        {
            "criteria": {
                "tool_trajectory_avg_score": {
                    "threshold": 1,
                    "matchType": "any-order",
                    "ignoreArgs": True,
                }
            }
        },
        id="object-camel-dash-lower",
    ),
    pytest.param(
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": " in order "}}},
        id="match-type-space",
    ),
    pytest.param(
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": 2}}},
        id="match-type-int",
    ),
    pytest.param(
        {
            "criteria": {
                "final_response_match_v2": {
                    "threshold": 0.5,
                    "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 3},
                }
            }
        },
        id="judge-options",
    ),
    pytest.param(
        {
            "criteria": {
                "rubric_based_final_response_quality_v1": {
                    "threshold": 0.5,
                    "rubrics": [
                        {"rubric_id": "r1", "rubric_content": {"text_property": "Is polite"}}
                    ],
                }
            }
        },
        id="rubrics",
    ),
    pytest.param(
        {
            "criteria": {"my_metric": 0.5},
            "customMetrics": {"my_metric": {"codeConfig": {"name": "pkg.mod.fn"}}},
        },
        id="custom-camel",
    ),
]


def _adk_view(metric: Any) -> tuple[Any, ...]:
    criterion = metric.criterion.model_dump() if metric.criterion else {}
    match = ToolTrajectoryCriterion.model_validate(criterion) if "threshold" in criterion else None
    return (
        metric.metric_name,
        metric.threshold,
        metric._config_custom_function_path,
        match.match_type.name if match else None,
        match.ignore_args if match else None,
    )


@pytest.mark.parametrize("raw", ACCEPTED)
def test_accepted_forms_match_adk(raw: dict[str, Any]) -> None:
    text = json.dumps(raw)
    ours = parse_eval_config(text).metrics()
    adk = [
        m
        for m in get_eval_metrics_from_config(AdkEvalConfig.model_validate_json(text))
        if m.criterion is not None
    ]
    assert [
        (
            s.name,
            s.threshold,
            s.custom_function_path,
            s.criterion.match_type.name,
            s.criterion.ignore_args,
        )
        for s in ours
    ] == [_adk_view(m) for m in adk]


def test_defaults_equal_adk(tmp_path: Path) -> None:
    from google.adk.evaluation.eval_config import _DEFAULT_EVAL_CONFIG

    config, found = find_eval_config(tmp_path / "x.evalset.json")
    assert found is None and config is DEFAULT_EVAL_CONFIG
    assert {s.name: s.threshold for s in config.metrics()} == _DEFAULT_EVAL_CONFIG.criteria


def test_finds_test_config_beside_evalset(tmp_path: Path) -> None:
    (tmp_path / "test_config.json").write_text('{"criteria": {"response_match_score": 0.3}}')
    config, found = find_eval_config(tmp_path / "x.evalset.json")
    assert found == tmp_path / "test_config.json"
    assert config.metrics()[0].threshold == 0.3


def test_rec_metric_with_subset_and_tool_rules() -> None:
    config = parse_eval_config(
        json.dumps(
            {
                "criteria": {
                    "tool_trajectory_rules_score": {
                        "threshold": 1,
                        "match_type": "subset",
                        "tool_args": {"f": {"ignore": ["ts"]}},
                    }
                }
            }
        )
    )
    criterion = config.metrics()[0].criterion
    assert criterion.match_type is MatchType.SUBSET
    assert criterion.tool_args["f"].ignore == ["ts"]


REJECTED = [
    pytest.param({"criterion": {}}, "criterion", 'Did you mean "criteria"', id="top-level-typo"),
    pytest.param(
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_typ": "EXACT"}}},
        "criteria.tool_trajectory_avg_score.match_typ",
        'Did you mean "match_type"',
        id="criterion-field-typo",
    ),
    pytest.param(
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "INORDER"}}},
        "criteria.tool_trajectory_avg_score.match_type",
        'Did you mean "IN_ORDER"',
        id="match-type-typo",
    ),
    pytest.param(
        {"criteria": {"respons_match_score": 0.8}},
        "criteria.respons_match_score",
        'Did you mean "response_match_score"',
        id="metric-name-typo",
    ),
    pytest.param(
        {"criteria": {"response_match_score": {"threshold": 1, "ignore_args": True}}},
        "criteria.response_match_score.ignore_args",
        "does not use",
        id="unused-field",
    ),
    pytest.param(
        {"criteria": {"response_match_score": {"include_intermediate_responses_in_final": False}}},
        "criteria.response_match_score",
        "no threshold",
        id="no-threshold",
    ),
    pytest.param(
        {
            "criteria": {
                "final_response_match_v2": {
                    "threshold": 1,
                    "judge_model_options": {"judge_modle": "x"},
                }
            }
        },
        "judge_model_options.judge_modle",
        'Did you mean "judge_model"',
        id="judge-typo",
    ),
    pytest.param(
        {"criteria": {"m": 1}, "custom_metrics": {"m": {"code_config": {"nam": "a.b"}}}},
        "custom_metrics.m.code_config.nam",
        'Did you mean "name"',
        id="code-config-typo",
    ),
    pytest.param(
        {"criteria": {"response_match_score": True}},
        "criteria.response_match_score",
        "number or an object",
        id="bool-threshold",
    ),
]


@pytest.mark.parametrize(("raw", "where", "hint"), REJECTED)
def test_rejections_name_file_place_and_fix(
    tmp_path: Path, raw: dict[str, Any], where: str, hint: str
) -> None:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(InputError) as info:
        load_eval_config(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert where in message
    assert hint in message


def test_bad_json_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "eval_config.json"
    path.write_text('{"criteria": {,}}')
    with pytest.raises(InputError, match="line 1 column"):
        load_eval_config(path)
