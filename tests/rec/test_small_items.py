"""Small promises of the CLI and the test setup, each named after what it keeps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cassettes import _genai_types as genai_types
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
    (made with rec start around adk run) hold exactly the session files' state, plus the
    ``_time`` that ``adk run --replay`` adds to it."""
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
            got = dict(case["session_input"]["state"])
            assert isinstance(got.pop("_time"), str), session.name
            assert got == state, session.name


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


# -- readable eval ids from recordings --------------------------------------------------------


def test_readable_eval_ids_from_recordings(tmp_path: Path, loopback_only: object) -> None:
    """rec's ADK capture names each recorded case after its first user turn (not the UUID
    session id): lowercase words joined by ``_``, at most 40 characters, unique in the set;
    a secret in the turn never reaches the id; the cases replay by those ids."""
    from cassettes._evalset import load_evalset
    from rec.standin.replies import FAKE_API_KEY
    from replayer._replay_run import replay_evalsets
    from replayer._replay_target import ReplayOptions
    from tests.agents.adk_recording import record_adk
    from tests.agents.travel_brain import travel_brain
    from tests.agents.wrapped_weather import agent

    long = "Please tell me, in detail, what the weather in Paris will be like this weekend?"
    path = record_adk(
        tmp_path,
        agent.root_agent,
        [
            ("What's the weather in Paris?", "And in Rome?"),
            ("What's the weather in Paris?",),
            (long,),
            (f"My key is {FAKE_API_KEY}, what's the weather in Rome?",),
        ],
        responder=travel_brain(),
        app_name="wrapped_weather",
        capture=True,
    )
    assert (tmp_path / ".rec" / "recording.adk.jsonl").is_file()  # the capture path ran
    ids = [case.eval_id for case in load_evalset(path).eval_cases]
    assert ids[:3] == [
        "what_s_the_weather_in_paris",
        "what_s_the_weather_in_paris_2",
        "please_tell_me_in_detail_what_the",
    ]
    assert len(ids[2]) <= 40
    assert ids[3].startswith("my_key_is_") and "fake" not in ids[3], ids[3]
    assert all(re.fullmatch(r"[a-z0-9_]+", i) for i in ids)
    [replayed] = replay_evalsets(
        str(ROOT / "tests" / "agents" / "wrapped_weather"), [path], ReplayOptions(cases=(ids[1],))
    )
    results = replayed.result.eval_case_results
    assert [(r.eval_id, r.final_eval_status.name) for r in results] == [(ids[1], "PASSED")]


def test_readable_eval_ids_fall_back_to_the_session_id() -> None:
    """A case whose first user turn has no text (only an image) keeps its session id; the
    ids of ``conversation_scenario`` cases are kept and never taken by a slug."""
    from cassettes._evalset import EvalCase
    from cassettes._evalset_writer import with_readable_eval_ids
    from tests.factories import make_evalset, make_invocation

    evalset = make_evalset(["Hello there", "tour", "Hello there"])
    no_text = make_invocation("x")
    no_text.user_content.parts = [
        genai_types.Part(inline_data=genai_types.Blob(mime_type="image/png", data=b"\x89PNG"))
    ]
    silent = EvalCase(eval_id="a233ec19_1f9d_4797", conversation=[no_text])
    scenario = EvalCase(
        eval_id="tour", conversation_scenario={"starting_prompt": "Hi", "conversation_plan": "x"}
    )
    evalset = evalset.model_copy(update={"eval_cases": [*evalset.eval_cases, silent, scenario]})
    ids = [c.eval_id for c in with_readable_eval_ids(evalset).eval_cases]
    assert ids == ["hello_there", "tour_2", "hello_there_2", "a233ec19_1f9d_4797", "tour"]


# -- JUnit time= ------------------------------------------------------------------------------


def _junit_times(path: Path) -> dict[str, float]:
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    times = {}
    for suite in root.iter("testsuite"):
        assert float(suite.attrib["time"]) >= 0, suite.attrib
        for case in suite.iter("testcase"):
            times[case.attrib["name"]] = float(case.attrib["time"])
    return times


def test_junit_time_on_every_testcase(tmp_path: Path, loopback_only: object) -> None:
    """Every JUnit testcase has ``time=``: a replayed case's wall time (above zero, in the
    results too), a case ``rec score`` did not run 0."""
    import json

    recordings = ROOT / "examples" / "home_assistant" / "recordings"
    junit, results = tmp_path / "replay.xml", tmp_path / "results"
    argv = ["replay", str(ROOT / "examples" / "home_assistant"), str(recordings)]
    assert main([*argv, "--junit", str(junit), "--results", str(results)]) == 0
    times = _junit_times(junit)
    assert len(times) == 2 and all(t > 0 for t in times.values()), times
    [case] = [
        c
        for f in results.glob("*.evalset_result.json")
        for c in json.loads(f.read_text())["eval_case_results"]
        if c["eval_id"] == "good_evening_what_devices_do_i_have"
    ]
    assert case["duration_seconds"] > 0

    evalset = str(recordings / "evening_routine.evalset.json")
    scored = tmp_path / "score.xml"
    assert main(["score", evalset, evalset, "--junit", str(scored)]) == 0
    assert list(_junit_times(scored).values()) == [0.0]
