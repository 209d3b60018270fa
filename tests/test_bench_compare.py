"""bench/compare.py: the VERDICT lines of a real bench run, the table built from them, and a
real comparison of two commits of a small git repository."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUICK_LOAD = ["--exchanges", "200", "--repeat", "1"]


@pytest.fixture(scope="module")
def compare() -> ModuleType:
    """bench/compare.py as a module (bench/ is scripts, not a package)."""
    kept = list(sys.path)
    spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "bench" / "compare.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = kept
    return module


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


@pytest.fixture(scope="module")
def load_output() -> str:
    """What bench_cassette_load.py prints on its smallest sizes, run for real."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_cassette_load.py"), *QUICK_LOAD],
        env=_env(ROOT),
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_real_bench_prints_one_verdict_per_goal(compare: ModuleType, load_output: str) -> None:
    verdicts = compare.parse_verdicts(load_output)
    labels = [v.label for v in verdicts]
    assert labels == [
        f"{shape}-request conversations: {what}"
        for shape in (8, 2)
        for what in (
            "eager load + index",
            "lazy load + index",
            "rec show / json.load",
            "rec show / json.load, CPU time",
            "rec check / json.load",
            "rec check / json.load, CPU time",
        )
    ]
    for verdict in verdicts:
        assert verdict.value is not None and verdict.value > 0, verdict
        assert verdict.floor.startswith("json.load ") and verdict.floor.endswith(" ms"), verdict
        # The CPU-time rows are figures without a goal of their own.
        cpu = verdict.label.endswith(", CPU time")
        assert verdict.goal == "-" if cpu else verdict.goal.startswith("<= "), verdict
        assert (verdict.met is None) == cpu, verdict
        assert not verdict.higher_is_better


def _run(compare: ModuleType, role: str, verdicts: list) -> object:  # type: ignore[type-arg]
    return compare.Run("bench_cassette_load", role, 0, 1.0, verdicts)


def _scaled(verdict: object, factor: float, goal: str | None = None) -> object:
    value = verdict.value * factor  # type: ignore[attr-defined]
    changed = dataclasses.replace(verdict, figure=f"{value!r}x")  # type: ignore[type-var]
    return changed if goal is None else dataclasses.replace(changed, goal=goal)


@pytest.mark.parametrize(
    ("factor", "goal", "within"),
    [
        pytest.param(1.0, None, "yes", id="same"),
        pytest.param(1.04, None, "yes", id="4% slower"),
        pytest.param(1.10, None, "no", id="10% slower"),
        pytest.param(0.5, None, "yes", id="twice as fast"),
        pytest.param(0.9, ">= 0.6x", "no", id="higher-better, 10% lower"),
        pytest.param(1.1, ">= 0.6x", "yes", id="higher-better, 10% higher"),
    ],
)
def test_within_five_percent_judges_head_against_base(
    compare: ModuleType, load_output: str, factor: float, goal: str | None, within: str
) -> None:
    base = compare.parse_verdicts(load_output)
    base = [v if goal is None else dataclasses.replace(v, goal=goal) for v in base]
    head = [_scaled(v, factor, goal) for v in base]
    rows = compare.collect([_run(compare, "base", base), _run(compare, "head", head)])
    assert len(rows) == len(base)
    for row in rows:
        assert row.within() == within, (row.label, row.change())
        assert row.change() == pytest.approx(factor - 1, abs=2e-3)


def test_a_figure_on_one_side_only_is_new_or_gone(compare: ModuleType, load_output: str) -> None:
    verdicts = compare.parse_verdicts(load_output)
    runs = [_run(compare, "base", verdicts[:-1]), _run(compare, "head", verdicts[1:])]
    within = {row.label: row.within() for row in compare.collect(runs)}
    assert within[verdicts[0].label] == "gone"
    assert within[verdicts[-1].label] == "new"
    assert set(within.values()) == {"gone", "new", "yes"}


def test_the_tables_have_a_row_per_figure_and_a_column_per_commit(
    compare: ModuleType, load_output: str
) -> None:
    verdicts = compare.parse_verdicts(load_output)
    runs = [_run(compare, "base", verdicts), _run(compare, "head", verdicts)]
    rows = compare.collect(runs)
    trees = {
        "base": compare.Tree("base", "a" * 40, ROOT),
        "head": compare.Tree("head", "b" * 40, ROOT),
    }
    text = compare.text_table(rows, trees).splitlines()
    assert "base aaaaaaa" in text[0] and "head bbbbbbb" in text[0]
    assert len(text) == 1 + len(verdicts)
    markdown = compare.markdown_table(rows, trees).splitlines()
    assert markdown[0].startswith("| bench | figure | aaaaaaa | bbbbbbb |")
    assert len(markdown) == 2 + len(verdicts)
    assert {line.count("|") for line in markdown[2:]} == {markdown[0].count("|")}
    for row, line in zip(rows, markdown[2:], strict=True):
        met = row.met()
        assert f"| {row.label} |" in line and f"| {met} |" in line
        expected = {True: "met", False: "NOT met", None: "-"}[row.head[0].met]
        assert met == expected


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("VERDICT x | 1x | goal <= 2x | met", id="no floor"),
        pytest.param("VERDICT x | 1x | floor f | goal <= 2x | maybe", id="no verdict"),
        pytest.param("VERDICT x | 1x | floor f | met", id="no goal"),
    ],
)
def test_a_malformed_verdict_line_is_refused(compare: ModuleType, line: str) -> None:
    with pytest.raises(ValueError, match="not a verdict line"):
        compare.parse_verdicts(line)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        pytest.param(("a | b", "1x", "f", "<= 2x", True), "holds '|'", id="separator"),
        pytest.param(("a", "1x", "f", None, True), "both a goal", id="met without a goal"),
        pytest.param(("a", "1x", "f", "<= 2x", None), "both a goal", id="a goal without met"),
    ],
)
def test_verdict_refuses_what_compare_could_not_read(
    compare: ModuleType, args: tuple[object, ...], said: str
) -> None:
    measure = sys.modules["_measure"]
    with pytest.raises(ValueError, match=said):
        measure.verdict(*args)


def test_every_bench_has_quick_arguments(compare: ModuleType) -> None:
    assert sorted(compare.QUICK) == compare.bench_names(ROOT / "bench", [])


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def two_commits(tmp_path: Path) -> Path:
    """A git repository of rec's packages and bench/, committed twice."""
    repo = tmp_path / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("bench", "cassettes", "recorder", "replayer", "rec"):
        shutil.copytree(ROOT / folder, repo / folder, ignore=ignore)
    _git(repo, "init", "--quiet")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "one")
    with (repo / "bench" / "bench_cassette_load.py").open("a") as script:
        script.write("# the second commit\n")
    _git(repo, "commit", "--quiet", "-am", "two")
    return repo


@pytest.mark.slow
def test_only_compares_head_with_its_parent_and_removes_the_worktrees(two_commits: Path) -> None:
    argv = [sys.executable, str(two_commits / "bench" / "compare.py")]
    done = subprocess.run(
        [*argv, "--quick", "--only", "cassette_load", "--markdown"],
        env=_env(two_commits),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    head, base = (_git(two_commits, "rev-parse", "--short=7", ref) for ref in ("HEAD", "HEAD^"))
    assert f"| bench | figure | {base} | {head} |" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("| cassette_load |")]
    assert len(rows) == 12, done.stdout  # 2 shapes x 6 figures
    assert "bench_cassette_load round 1/1 base" in done.stderr
    assert "bench_cassette_load round 1/1 head" in done.stderr
    assert len(_git(two_commits, "worktree", "list").splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "said"),
    [
        pytest.param(["--only", "nosuch"], "no bench script 'nosuch'", id="unknown bench"),
        pytest.param(["--base", "nosuch"], "no commit named 'nosuch'", id="unknown ref"),
    ],
)
def test_a_bad_name_is_a_usage_error(two_commits: Path, args: list[str], said: str) -> None:
    done = subprocess.run(
        [sys.executable, str(two_commits / "bench" / "compare.py"), *args],
        env=_env(two_commits),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert len(_git(two_commits, "worktree", "list").splitlines()) == 1
