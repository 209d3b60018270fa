"""The HTML report (`--html FILE`): built from real replays and scores, checked in a real
headless Chromium (Debian's package, driven by Playwright through `executable_path`)."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cassettes._eval_config import MatchType
from cassettes._evalset import save_evalset
from cassettes._genai_types import FunctionCall
from rec.cli import cli
from replayer._reports.text_diff import word_diff
from replayer._reports.trajectory_diff import align_trajectories
from replayer._scoring.trajectory import trajectory_matches

from .evalsets import evalset, invocation

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
INJECTED = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The pages under test, made by `rec replay --html` and `rec score --html` (before the
    browser starts: Playwright's sync API holds the thread's event loop)."""
    folder = tmp_path_factory.mktemp("html")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        bug = folder / "out" / "bug.html"
        result = CliRunner().invoke(
            cli,
            [
                "replay",
                "examples/production_bug/before_fix/climate_agent",
                "examples/production_bug/evals",
                "--html",
                str(bug),
            ],
        )
        assert result.exit_code == 1 and bug.is_file(), (result.output, result.exception)
    # The same agent with a temperature set: its first model call matches no recording.
    warm = folder / "warm_agent"
    shutil.copytree(ROOT / "examples/production_bug/before_fix/climate_agent", warm)
    source = (warm / "agent.py").read_text()
    source = source.replace(
        "    tools=[get_room_temperature, set_thermostat],\n)",
        "    tools=[get_room_temperature, set_thermostat],\n"
        "    generate_content_config=types.GenerateContentConfig(temperature=0.3),\n)",
    ).replace(
        "from google.adk.agents import LlmAgent",
        "from google.adk.agents import LlmAgent\nfrom google.genai import types",
    )
    assert "temperature=0.3" in source
    (warm / "agent.py").write_text(source)
    missed = folder / "miss.html"
    missed.write_text("an older report")
    missed.chmod(0o600)  # a previous report's mode is not kept: the report is for sharing
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        result = CliRunner().invoke(
            cli,
            ["replay", str(warm), "examples/production_bug/evals", "--html", str(missed)],
        )
        assert result.exit_code == 1, (result.output, result.exception)
    want = evalset({"c": [invocation("hi", [("lookup", {"q": "x"})], "Hello there")]})
    got = evalset({"c": [invocation("hi", [("lookup", {"q": INJECTED})], f"Hello {INJECTED}")]})
    save_evalset(want, folder / "want.evalset.json")
    save_evalset(got, folder / "got.evalset.json")
    scored = folder / "score.html"
    result = CliRunner().invoke(
        cli,
        [
            "score",
            str(folder / "want.evalset.json"),
            str(folder / "got.evalset.json"),
            "--html",
            str(scored),
        ],
    )
    assert result.exit_code == 1 and scored.is_file(), (result.output, result.exception)
    # Two eval sets with readable ids, recorded tokens and latency in every row.
    home = folder / "home.html"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        result = CliRunner().invoke(
            cli,
            [
                "replay",
                "examples/home_assistant",
                "examples/home_assistant/recordings",
                "--html",
                str(home),
            ],
        )
        assert result.exit_code == 0 and home.is_file(), (result.output, result.exception)
    # Ids with no place to break, as long as an eval set's file name can make them.
    long_id = "a_very_long_eval_set_identifier_" * 3
    words = "what_s_the_weather_in_paris_this_weekend_x" * 2
    cases = {f"{words}_{n}": [invocation("hi", [("lookup", {"q": "x"})], "Hi")] for n in (1, 2)}
    save_evalset(evalset(cases, eval_set_id=long_id), folder / "long.evalset.json")
    wide = folder / "wide.html"
    result = CliRunner().invoke(
        cli, ["score", *[str(folder / "long.evalset.json")] * 2, "--html", str(wide)]
    )
    assert result.exit_code == 0 and wide.is_file(), (result.output, result.exception)
    return {"bug": bug, "score": scored, "miss": missed, "home": home, "wide": wide}


@pytest.fixture(scope="module")
def browser(reports: dict[str, Path]):  # type: ignore[no-untyped-def]
    """Debian's Chromium through Playwright; skipped, loudly, only where none can be had."""
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="BROWSER TEST NOT RUN: install the 'browser' extra (pip install -e '.[browser]')",
    )
    if not Path(CHROMIUM).exists():
        pytest.skip("BROWSER TEST NOT RUN: no Chromium here (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


def _open(browser, path: Path):  # type: ignore[no-untyped-def]
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "request",
        lambda r: errors.append(f"request {r.url}") if not r.url.startswith("file:") else None,
    )
    page.goto(path.as_uri())
    return page, errors


def test_failing_replay_shows_its_diff(browser, reports: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    page, errors = _open(browser, reports["bug"])
    assert errors == []
    assert page.locator("tr.case-row.failed a").inner_text() == "7f3c2a9e_prod"
    changed = page.locator("tr.call.differs .arg.changed")
    assert changed.first.is_visible()
    assert "celsius=71.6" in changed.all_inner_texts()[-1]
    assert page.locator("tr.call.differs td.why").first.inner_text() == "differs: celsius"
    assert page.locator(".replies del").first.is_visible()  # the word diff
    assert page.locator(".replies ins").first.is_visible()
    row = page.locator("tr.case-row").first.inner_text()  # recorded cost, from the cassette
    assert "prompt" in row and "candidates" in row
    page.locator("tr.case-row a").first.click()
    assert page.locator("details.case").first.get_attribute("open") is not None


def test_injected_script_shows_as_text_and_does_not_run(browser, reports: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    page, errors = _open(browser, reports["score"])
    assert errors == []
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0
    assert "<script>window.__pwned = 1</script>" in page.locator(".replies").first.inner_text()
    page.locator("#only-failed").check()
    assert page.locator("details.case.failed").first.is_visible()


def test_a_case_that_could_not_run_shows_its_divergence(reports: dict[str, Path]) -> None:
    page = reports["miss"].read_text()
    divergence = page[page.index('<div class="divergence">') :]
    divergence = divergence[: divergence.index("</div>")]
    assert "<h4>Could not run — turn 1, model call 1</h4>" in divergence
    assert "<li><code>generationConfig: temperature added (0.3)</code></li>" in divergence
    assert "<code>--ignore generationConfig</code>" in divergence
    assert '<tr class="case-row failed">' in page and "could not run" in page


def test_the_report_is_written_readable_by_all(reports: dict[str, Path]) -> None:
    """Recordings are private (0600), the report is a CI artifact to share: 0644, even
    over an older report that was 0600."""
    for path in reports.values():
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def test_divergence_is_visible_in_the_browser(browser, reports: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    page, errors = _open(browser, reports["miss"])
    assert errors == []
    box = page.locator("details.case.failed .divergence")
    assert box.is_visible()
    assert "--ignore generationConfig" in box.inner_text()


@pytest.mark.parametrize(
    ("match_type", "statuses"),
    [
        pytest.param(MatchType.EXACT, ["match", "differs", "extra"], id="exact"),
        pytest.param(MatchType.IN_ORDER, ["match", "allowed", "differs"], id="in-order"),
        pytest.param(MatchType.ANY_ORDER, ["match", "allowed", "differs"], id="any-order"),
        pytest.param(MatchType.SUBSET, ["match", "extra", "differs"], id="subset"),
        pytest.param(MatchType.SUPERSET, ["match", "allowed", "differs"], id="superset"),
    ],
)
def test_trajectory_rows_follow_the_match_type(match_type: MatchType, statuses: list[str]) -> None:
    expected = [
        FunctionCall(name="a", args={"x": 1}),
        FunctionCall(name="b", args={"y": 1, "z": 2}),
    ]
    actual = [
        FunctionCall(name="a", args={"x": 1}),
        FunctionCall(name="c", args={}),
        FunctionCall(name="b", args={"y": 2, "z": 2}),
    ]
    rows = align_trajectories(expected, actual, match_type)
    if match_type is MatchType.EXACT:
        assert [r.status for r in rows] == statuses
        assert rows[1].keys == frozenset()  # b in c's place: another tool, no key to blame
    else:
        assert sorted(r.status for r in rows) == sorted(statuses)
        differs = next(r for r in rows if r.status == "differs")
        assert differs.keys == {"y"}  # only the key whose value changed


_CALLS = st.builds(
    FunctionCall,
    name=st.sampled_from(["a", "b"]),
    args=st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 1), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    expected=st.lists(_CALLS, max_size=4),
    actual=st.lists(_CALLS, max_size=4),
    match_type=st.sampled_from(list(MatchType)),
)
def test_rows_show_a_failure_exactly_when_the_scorer_fails(
    expected: list[FunctionCall], actual: list[FunctionCall], match_type: MatchType
) -> None:
    """What the page highlights is what made the metric fail: no red row on a passing
    trajectory, at least one on a failing one; every call shown once."""
    rows = align_trajectories(expected, actual, match_type)
    passes = trajectory_matches(actual, expected, match_type)
    assert passes == all(r.status in ("match", "allowed") for r in rows)
    assert sorted(r.expected_index for r in rows if r.expected_index is not None) == list(
        range(len(expected))
    )
    assert sorted(r.actual_index for r in rows if r.actual_index is not None) == list(
        range(len(actual))
    )


def test_word_diff_marks_words() -> None:
    left, right = word_diff("I set it to 22 C", "I could not set it")
    assert ("removed", "to 22 C") in [(k, t.strip()) for k, t in left] or any(
        k == "removed" and "22" in t for k, t in left
    )
    assert any(k == "added" and "could not" in t for k, t in right)
    assert "".join(t for _, t in left) == "I set it to 22 C"
    assert "".join(t for _, t in right) == "I could not set it"


@pytest.mark.parametrize("width", [1024, 1280])
@pytest.mark.parametrize("name", ["bug", "score", "home", "wide"])
def test_html_summary_table_fits_1024_px(  # type: ignore[no-untyped-def]
    browser, reports: dict[str, Path], name: str, width: int
) -> None:
    """The page never scrolls sideways at a laptop's width: the summary table wraps its
    long ids inside its box, and scrolls inside it if it still cannot fit."""
    page, errors = _open(browser, reports[name])
    page.set_viewport_size({"width": width, "height": 800})
    assert errors == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    table = page.locator("table.summary").bounding_box()
    assert table is not None and table["x"] >= 0 and table["x"] + table["width"] <= width
    page.locator("#expand-all").click()  # the cases' own tables too, once opened
    assert page.evaluate("document.documentElement.scrollWidth") <= width
