"""``rec start -- python script.py``: rec's sitecustomize instruments the Python it runs.

Real subprocesses: ``rec start`` wraps a program that builds its own ADK ``Runner`` (rec
is not named in it), the agents talk to the stand-in through the recording proxy, and
the EvalSet is checked, replayed with ``rec replay`` and run by ADK's own ``adk eval``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.travel_recording import STATE, TRAVEL_AGENT
from tests.factories import adc_file
from tests.rec_process import (
    DRIVER,
    REPO,
    adk_eval_passes,
    rec_environment,
    rec_replay,
    rec_start,
)

pytest_plugins = ["pytester"]

TURNS = ("What's the weather in Rome?", "Please book a hotel in Rome for 3 nights")
TOKEN = "ya29.rec-test-placeholder-adc-token"

USER_SITECUSTOMIZE = "RAN = True\n"

PROBE = textwrap.dedent(
    """
    import json, sys
    import sitecustomize
    print(json.dumps({
        "hooked": any(type(f).__name__ == "_AfterImport" for f in sys.meta_path),
        "google": sorted(m for m in sys.modules if m.startswith(("google.genai", "google.adk"))),
        "user_sitecustomize": getattr(sitecustomize, "RAN", False),
    }))
    """
)


def _user_site(tmp_path: Path) -> Path:
    """A folder on the user's own PYTHONPATH holding their sitecustomize."""
    folder = tmp_path / "usersite"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(USER_SITECUSTOMIZE)
    return folder


def _authors(case: dict[str, Any]) -> set[str]:
    return {
        event["author"]
        for invocation in case["conversation"]
        for event in invocation["intermediate_data"]["invocation_events"]
    }


def test_a_script_with_its_own_runner_gets_the_capture_plugin(
    tmp_path: Path, standin: StandinGemini
) -> None:
    out = tmp_path / "rec"
    user_site = _user_site(tmp_path)
    done = rec_start(
        out,
        "script",
        standin.url,
        sys.executable,
        str(DRIVER),
        "tests.agents.travel",
        *TURNS,
        PYTHONPATH=f"{user_site}{os.pathsep}{REPO}",
        GOOGLE_API_KEY=FAKE_API_KEY,
        TRAVEL_RATES_URL=f"{standin.url}/rates",
        DRIVE_STATE=json.dumps(STATE),
    )
    assert done.returncode == 0, done.stderr
    assert "plugins: rec_capture" in done.stdout  # one plugin: attached once
    evalset = out / "script.evalset.json"
    cases = json.loads(evalset.read_text())["eval_cases"]
    assert len(cases) == 1 and len(cases[0]["conversation"]) == 2
    # From the capture, not the traffic: the state at the start, the authors, the end state.
    assert cases[0]["session_input"]["state"] == STATE
    assert cases[0]["session_input"]["app_name"] == "travel"
    assert {"travel_agent", "booking_agent"} <= _authors(cases[0])
    assert "last_booking" in cases[0]["final_session_state"]

    replayed = rec_replay(TRAVEL_AGENT, evalset)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "PASSED" in replayed.stdout
    adk_eval_passes(TRAVEL_AGENT, evalset, standin, tmp_path)


@pytest.mark.parametrize(
    ("flags", "env", "hooked"),
    [
        pytest.param((), {}, True, id="instrumented"),
        pytest.param(("--no-instrument",), {}, False, id="no-instrument-flag"),
        pytest.param((), {"REC_NO_INSTRUMENT": "1"}, False, id="REC_NO_INSTRUMENT"),
    ],
)
def test_the_sitecustomize_chains_the_users_is_lazy_and_can_be_turned_off(
    tmp_path: Path, flags: tuple[str, ...], env: dict[str, str], hooked: bool
) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    user_site = _user_site(tmp_path)
    done = rec_start(
        tmp_path / "rec",
        "probe",
        "http://127.0.0.1:9",
        sys.executable,
        str(probe),
        flags=flags,
        PYTHONPATH=f"{user_site}{os.pathsep}{REPO}",
        **env,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"hooked": hooked, "google": [], "user_sitecustomize": True}
    assert ("instrumenting Python" in done.stderr) is hooked


VERTEX = {
    "GOOGLE_GENAI_USE_VERTEXAI": "TRUE",
    "GOOGLE_CLOUD_PROJECT": "demo-project",
    "GOOGLE_CLOUD_LOCATION": "europe-west4",
}


def test_vertex_from_the_environment_records_through_rec_start_and_replays_without_credentials(
    tmp_path: Path, standin: StandinGemini, pytester: pytest.Pytester
) -> None:
    out = tmp_path / "rec"
    standin.reset()
    done = rec_start(
        out,
        "vertex",
        standin.url,
        sys.executable,
        str(DRIVER),
        "tests.agents.travel",
        *TURNS,
        flags=("--vertex-upstream", standin.url),
        GOOGLE_APPLICATION_CREDENTIALS=str(adc_file(tmp_path / "adc.json", TOKEN)),
        TRAVEL_RATES_URL=f"{standin.url}/rates",
        DRIVE_STATE=json.dumps(STATE),
        **VERTEX,
    )
    assert done.returncode == 0, done.stderr
    assert standin.requests and all(r.vertex for r in standin.requests)
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in standin.requests)
    assert "/projects/demo-project/locations/europe-west4/" in standin.requests[0].path
    written = [f for f in out.rglob("*") if f.is_file()]
    assert written and all(TOKEN not in f.read_text(errors="replace") for f in written)
    evalset = out / "vertex.evalset.json"
    assert json.loads(evalset.read_text())["eval_cases"][0]["session_input"]["state"] == STATE

    # Replay: Vertex AI chosen by the environment, and no credentials, project or location.
    replayed = rec_replay(TRAVEL_AGENT, evalset, GOOGLE_GENAI_USE_VERTEXAI="TRUE")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    # ... or by the agent's .env, which rec replay loads as adk eval does.
    with_dotenv = tmp_path / "agents" / "travel"
    shutil.copytree(TRAVEL_AGENT, with_dotenv, ignore=shutil.ignore_patterns("__pycache__"))
    (with_dotenv / ".env").write_text("GOOGLE_GENAI_USE_VERTEXAI=TRUE\n")
    replayed = rec_replay(with_dotenv, evalset)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    adk_eval_passes(TRAVEL_AGENT, evalset, standin, tmp_path)  # the same EvalSet, in ADK

    # The drop-in AgentEvaluator and the pytest plugin's fixture, in a pytest run of their own.
    pytester.makepyfile(
        test_vertex_replays=f"""
        import asyncio
        import pytest
        from rec import AgentEvaluator
        from tests.agents.drive_runner import main

        def test_agent_evaluator():
            agent, evalset = "tests.agents.travel", {str(evalset)!r}
            asyncio.run(AgentEvaluator.evaluate(agent, evalset, num_runs=1))

        @pytest.mark.rec(recording={str(out / "vertex.cassette.json")!r})
        def test_rec_fixture(rec):
            asyncio.run(main("tests.agents.travel", [{TURNS[0]!r}]))
            assert rec.misses == [] and len(rec.channel.exchanges) == 2
        """
    )
    with pytest.MonkeyPatch.context() as patch:  # the conftest cleared every GOOGLE_* already
        patch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "TRUE")
        patch.setenv("DRIVE_STATE", json.dumps(STATE))
        patch.setenv("PYTHONPATH", str(REPO))
        # A process of its own: an in-process run would drop the modules it imported.
        result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_an_agent_starter_pack_style_agent_records_and_replays_with_no_environment(
    tmp_path: Path, standin: StandinGemini
) -> None:
    # The agent sets GOOGLE_GENAI_USE_VERTEXAI and the project (from ADC) itself at import.
    out = tmp_path / "rec"
    adc = adc_file(tmp_path / "adc.json", TOKEN)
    standin.reset()
    done = rec_start(
        out,
        "starter",
        standin.url,
        sys.executable,
        str(DRIVER),
        "tests.agents.vertex_starter",
        "What's the weather in Rome?",
        flags=("--vertex-upstream", standin.url),
        GOOGLE_APPLICATION_CREDENTIALS=str(adc),
        GOOGLE_CLOUD_PROJECT="starter-project",
    )
    assert done.returncode == 0, done.stderr
    assert [r.path.split(":")[0] for r in standin.requests] == [
        "/v1beta1/projects/starter-project/locations/global/publishers/google/models/"
        "gemini-2.5-flash"
    ] * 2
    written = [f for f in out.rglob("*") if f.is_file()]
    assert all(TOKEN not in f.read_text(errors="replace") for f in written)

    agent = REPO / "tests" / "agents" / "vertex_starter"
    replayed = rec_replay(agent, out / "starter.evalset.json")  # no GOOGLE_* at all
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "PASSED" in replayed.stdout
    adk_eval_passes(  # ADK on the Gemini API of the stand-in: the EvalSet is backend-neutral
        agent,
        out / "starter.evalset.json",
        standin,
        tmp_path,
        GOOGLE_APPLICATION_CREDENTIALS=str(adc),
        GOOGLE_CLOUD_PROJECT="starter-project",
        GOOGLE_GENAI_USE_VERTEXAI="FALSE",
    )


def test_the_sitecustomize_ships_in_the_package() -> None:
    # A folder without __init__.py is not a package: only package-data puts it in the wheel.
    import fnmatch

    tomllib = pytest.importorskip("tomllib")
    from recorder._instrumentation import SITECUSTOMIZE_DIR

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    shipped = config["package-data"]["recorder"]
    relative = (SITECUSTOMIZE_DIR / "sitecustomize.py").relative_to(REPO / "recorder")
    assert (SITECUSTOMIZE_DIR / "sitecustomize.py").is_file()
    assert any(fnmatch.fnmatch(str(relative), pattern) for pattern in shipped)


WITHOUT_REC = textwrap.dedent(
    """
    from google import genai
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner

    runner = InMemoryRunner(agent=LlmAgent(name="a", model="gemini-2.0-flash"), app_name="a")
    print("plugins:", [p.name for p in runner.plugin_manager.plugins])
    client = genai.Client()  # Vertex AI from the environment
    api = client._api_client
    print("vertex:", api.project, api.location, api._http_options.base_url)
    """
)


def test_a_python_that_cannot_import_rec_still_runs_and_says_why(tmp_path: Path) -> None:
    # The sitecustomize needs nothing of rec for the Vertex AI hook; the capture plugin
    # needs rec importable, and its absence is one line, never a broken program.
    from recorder._instrumentation import SITECUSTOMIZE_DIR

    shadow = tmp_path / "shadow" / "recorder"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("no rec in this Python")\n')
    script = tmp_path / "app.py"
    script.write_text(WITHOUT_REC)
    proxy = "http://127.0.0.1:9/"
    done = subprocess.run(
        [sys.executable, str(script)],
        env=rec_environment(
            PYTHONPATH=os.pathsep.join([str(SITECUSTOMIZE_DIR), str(shadow.parent), str(REPO)]),
            REC_INSTRUMENT="1",
            REC_ADK_CAPTURE=str(tmp_path / "capture.jsonl"),
            GOOGLE_VERTEX_BASE_URL=proxy,  # as rec start sets them
            GOOGLE_GEMINI_BASE_URL=proxy,
            GOOGLE_APPLICATION_CREDENTIALS=str(adc_file(tmp_path / "adc.json", TOKEN)),
            **VERTEX,
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "plugins: []" in done.stdout
    assert f"vertex: demo-project europe-west4 {proxy}" in done.stdout  # not gateway mode
    assert done.stderr.count("rec: cannot attach the ADK capture plugin") == 1, done.stderr
