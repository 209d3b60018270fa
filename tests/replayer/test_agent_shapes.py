"""Agents shaped as real ones are: a client created at import, an ADK 2 workflow graph.

Each is recorded by ``rec start -- python drive_runner.py`` (a program with its own
``Runner``; rec's sitecustomize attaches the capture plugin), replayed by ``rec replay`` in a
process with no Google credentials at all, and run by ADK's own ``adk eval``.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from tests.rec_process import ADK, DRIVER, REPO, adk_eval_passes, rec_replay, rec_start

AGENTS = REPO / "tests" / "agents"


def echo_model(request: StandinRequest) -> Reply | None:
    if request.rpc != "generateContent":
        return None
    texts = [p.get("text", "") for c in request.contents for p in c.get("parts", [])]
    return Reply.text(f"step {len(request.contents)}: {texts[-1][:60]}")


def _record_and_replay(tmp_path: Path, api: Any, module: str, *turns: str) -> Path:
    out = tmp_path / "rec"
    done = rec_start(
        out,
        "shape",
        api.url,
        sys.executable,
        str(DRIVER),
        module,
        *turns,
        GOOGLE_API_KEY=FAKE_API_KEY,
    )
    assert done.returncode == 0, done.stderr
    evalset = out / "shape.evalset.json"
    replayed = rec_replay(AGENTS / module.rsplit(".", 1)[-1], evalset)  # no GOOGLE_* at all
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "PASSED" in replayed.stdout and "FAILED" not in replayed.stdout
    return evalset


def test_an_agent_that_creates_its_client_at_import_replays(
    tmp_path: Path, standin_factory: Any
) -> None:
    api = standin_factory(echo_model)
    evalset = _record_and_replay(tmp_path, api, "tests.agents.import_client", "hello", "again")
    cases = json.loads(evalset.read_text())["eval_cases"]
    assert len(cases) == 1 and len(cases[0]["conversation"]) == 2
    adk_eval_passes(AGENTS / "import_client", evalset, api, tmp_path)


def test_a_workflow_graph_root_agent_replays(tmp_path: Path, standin_factory: Any) -> None:
    api = standin_factory(echo_model)
    evalset = _record_and_replay(tmp_path, api, "tests.agents.review_flow", "Write a haiku")
    cases = json.loads(evalset.read_text())["eval_cases"]
    assert len(cases) == 1 and len(cases[0]["conversation"]) == 1  # one turn, two model calls
    adk_eval_passes(AGENTS / "review_flow", evalset, api, tmp_path)


PROGRAM = textwrap.dedent(
    """
    from google import genai

    client = genai.Client()  # at import, before rec could point it anywhere


    async def chat(text, session):
        reply = await client.aio.models.generate_content(model="gemini-2.0-flash", contents=text)
        return reply.text


    if __name__ == "__main__":
        import asyncio, sys
        print(asyncio.run(chat(sys.argv[1], None)))
    """
)


def test_a_program_that_creates_its_client_at_import_replays(
    tmp_path: Path, standin_factory: Any
) -> None:
    api = standin_factory(echo_model)
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    out = tmp_path / "rec"
    done = rec_start(
        out, "prog", api.url, sys.executable, str(program), "hello", GOOGLE_API_KEY=FAKE_API_KEY
    )
    assert done.returncode == 0, done.stderr
    replayed = rec_replay(f"{program}:chat", out / "prog.evalset.json")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "PASSED" in replayed.stdout


def test_adk_run_gets_the_capture_plugin(tmp_path: Path, standin_factory: Any) -> None:
    # `adk run` has no --extra_plugins: its Runner gets the plugin from rec's sitecustomize.
    if not ADK.exists():
        pytest.skip("the adk command is not installed")
    api = standin_factory(echo_model)
    out = tmp_path / "rec"
    agent = AGENTS / "import_client"
    done = rec_start(
        out,
        "run",
        api.url,
        str(ADK),
        "run",
        str(agent),
        stdin="hello there\nexit\n",
        GOOGLE_API_KEY=FAKE_API_KEY,
    )
    assert done.returncode == 0, done.stderr
    evalset = out / "run.evalset.json"
    [case] = json.loads(evalset.read_text())["eval_cases"]
    # adk run's own app name and user: from the session, which traffic cannot show.
    assert case["session_input"] == {"app_name": "import_client", "user_id": "test_user"}
    replayed = rec_replay(agent, evalset)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    adk_eval_passes(agent, evalset, api, tmp_path)
