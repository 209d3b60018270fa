"""Small promises of the CLI and the test setup, each named after what it keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from rec.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        pytest.param(
            ["replay", "--upstream", "http://127.0.0.1:", "agent", "evals"],
            "has no port after the colon",
            id="replay-no-port",
        ),
        pytest.param(
            ["start", "--upstream", "127.0.0.1:8080", "--", "true"],
            "is not an http(s)://HOST[:PORT] URL",
            id="start-no-scheme",
        ),
        pytest.param(
            ["start", "--vertex-upstream", "http://127.0.0.1:70000", "--", "true"],
            "Port out of range",
            id="start-vertex-port-out-of-range",
        ),
        pytest.param(
            ["score", "a.json", "b.json", "--upstream", "ftp://host"],
            "is not an http(s)://HOST[:PORT] URL",
            id="score-other-scheme",
        ),
        pytest.param(
            ["replay", "--upstream", "http://h:8080/v1?key=x", "agent", "evals"],
            "has a query or fragment",
            id="replay-query",
        ),
    ],
)
def test_upstream_url_is_rejected_at_parse_time(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("UsageError: Invalid value for '--") and said in err, err
    assert len(err.splitlines()) == 1
    assert not list(tmp_path.iterdir())  # nothing started, nothing written


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080", "https://generativelanguage.googleapis.com", "http://[::1]:9/p"],
)
def test_upstream_url_accepts_base_urls(url: str) -> None:
    from rec._options import UrlParam

    assert UrlParam().convert(url, None, None) == url


def test_examples_readme_in_step_initial_state_comes_from_the_recording() -> None:
    """examples/README.md says rec start records the initial state; the bundled recordings
    (made with rec start around adk run) hold exactly the session files' state."""
    import json

    text = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")
    assert "cannot see the session's initial state" not in text
    assert "`session_input.state` is the session's state when it started" in text
    sessions = ROOT / "examples" / "home_assistant" / "sessions"
    for session in sorted(sessions.glob("*.json")):
        state = json.loads(session.read_text())["state"]
        recorded = (
            ROOT / "examples" / "home_assistant" / "recordings" / (session.stem + ".evalset.json")
        )
        for case in json.loads(recorded.read_text())["eval_cases"]:
            assert case["session_input"]["state"] == state, session.name


@pytest.mark.slow
@pytest.mark.parametrize("shard", ["1/2", "2/2"])
def test_a_shard_prints_no_empty_eval_set_block(
    shard: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """home_assistant has two eval sets of one case each: each shard holds one of them."""
    example = ROOT / "examples" / "home_assistant"
    status = main(
        ["replay", "--workers", "1", "--shard", shard, str(example), str(example / "recordings")]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.count("Eval set ") == 1, out
    assert "0 passed, 0 failed" not in out
