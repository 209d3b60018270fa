"""`rec replay --shard I/N` splits a suite stably across CI jobs; `rec merge` joins the results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cassettes._eval_result import EvalStatus
from rec.cli import cli
from replayer._sharding import Shard, load_results, merge_results
from tests.agents.travel_recording import TRAVEL_AGENT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("1/4", Shard(1, 4), id="first"),
        pytest.param("4/4", Shard(4, 4), id="last"),
        pytest.param(" 2 / 3 ", Shard(2, 3), id="spaces"),
    ],
)
def test_shard_parses(text: str, expected: Shard) -> None:
    assert Shard.parse(text) == expected


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "1", "a/b", "1/2/3", "-1/2", ""])
def test_bad_shard_is_an_input_error_naming_the_flag(text: str) -> None:
    from cassettes._errors import InputError

    with pytest.raises(InputError, match=r"--shard.*I/N"):
        Shard.parse(text)


def test_shards_cover_every_case_once_and_stay_put_as_cases_are_added() -> None:
    ids = [f"case-{i}" for i in range(400)]
    owners = {i: [s for s in range(1, 5) if Shard(s, 4).contains("set", i)] for i in ids}
    assert all(len(found) == 1 for found in owners.values())
    sizes = [sum(found == [s] for found in owners.values()) for s in range(1, 5)]
    assert min(sizes) > 60  # roughly even (100 each expected)
    more = ids + [f"new-{i}" for i in range(100)]
    moved = [i for i in ids if not Shard(owners[i][0], 4).contains("set", i)]
    assert moved == [] and len(more) == 500
    # The eval set is part of a case's identity: the same id in two sets may split apart.
    assert {Shard(1, 4).contains(f"set{n}", "case-0") for n in range(40)} == {True, False}


@pytest.mark.usefixtures("loopback_only")
def test_two_shards_run_apart_and_merge_into_one_result(recorded: Path, tmp_path: Path) -> None:
    evalset = recorded / "travel.evalset.json"
    data = json.loads(evalset.read_text())
    ids = [case["eval_id"] for case in data["eval_cases"]]
    runner = CliRunner()
    for index in (1, 2):
        out = tmp_path / f"results-{index}"
        result = runner.invoke(
            cli,
            ["replay", str(TRAVEL_AGENT), str(evalset), "--shard", f"{index}/2"]
            + ["--results", str(out), "--allow-empty"],  # a CI matrix: a shard may hold none
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        [written] = load_results([out])
        mine = [i for i in ids if Shard(index, 2).contains(data["eval_set_id"], i)]
        assert [c.eval_id for c in written.eval_case_results] == mine

    junit, merged_dir = tmp_path / "junit.xml", tmp_path / "merged"
    result = runner.invoke(
        cli,
        ["merge", str(tmp_path / "results-1"), str(tmp_path / "results-2")]
        + ["--junit", str(junit), "--results", str(merged_dir)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    [merged] = load_results([merged_dir])
    assert sorted(c.eval_id for c in merged.eval_case_results) == sorted(ids)
    assert all(c.final_eval_status is EvalStatus.PASSED for c in merged.eval_case_results)
    assert junit.read_text().count("<testcase") == len(ids)

    # The same results merged twice are refused: their cases would count double.
    from cassettes._errors import InputError

    with pytest.raises(InputError, match="in two results"):
        merge_results(load_results([merged_dir, merged_dir]))


def test_merge_of_a_folder_without_results_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="no \\*.evalset_result.json"):
        merge_results(load_results([tmp_path]))
