"""``rec standin``: the stand-in Gemini API as a command, so recording can be tried keyless.

The command runs as a user runs it (a subprocess); a real google-genai client talks to it,
and ``rec start --upstream`` records through it and ``rec replay`` replays that recording.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

from rec.standin.replies import FAKE_API_KEY
from tests.rec_process import REPO, popen, rec_argv, rec_run, rec_start


@pytest.fixture
def standin_process() -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    """``rec standin --port 0`` running, with the exports it printed."""
    process = popen(rec_argv("standin", "--port", "0"))
    assert process.stdout is not None
    exports: dict[str, str] = {}
    try:
        while "NO_PROXY" not in exports:
            line = process.stdout.readline()
            assert line, f"rec standin exited early:\n{process.communicate()[1]}"
            name, _, value = line.removeprefix("export ").strip().partition("=")
            exports[name] = value
        yield process, exports
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)


@pytest.mark.slow
def test_rec_standin_prints_the_url_and_the_env_and_answers(
    standin_process: tuple[subprocess.Popen[str], dict[str, str]],
) -> None:
    process, exports = standin_process
    url = exports["GOOGLE_GEMINI_BASE_URL"]
    assert url.startswith("http://127.0.0.1:")
    client = genai.Client(api_key=exports["GOOGLE_API_KEY"], http_options={"base_url": url})
    reply = client.models.generate_content(model="gemini-2.0-flash", contents="hello there")
    assert reply.text is not None and "You said: hello there" in reply.text
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert "rec: the stand-in answered 1 request(s)" in stderr


@pytest.mark.slow
def test_rec_standin_lets_workflow_1_record_and_replay_without_a_key(
    standin_process: tuple[subprocess.Popen[str], dict[str, str]], tmp_path: Path
) -> None:
    _, exports = standin_process
    program = REPO / "examples" / "genai_afc" / "thermostat_helper.py"
    recorded = rec_start(
        tmp_path / "rec",
        "demo",
        exports["GOOGLE_GEMINI_BASE_URL"],
        sys.executable,
        str(program),
        "How warm is the kitchen?",
        GOOGLE_API_KEY=exports["GOOGLE_API_KEY"],
        NO_PROXY="127.0.0.1",
    )
    assert recorded.returncode == 0, recorded.stderr
    assert (tmp_path / "rec" / "demo.cassette.json").is_file()
    replayed = rec_run(
        "replay", f"{program}:chat", str(tmp_path / "rec"), timeout=300, NO_PROXY="127.0.0.1"
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "1 passed, 0 failed" in replayed.stdout


@pytest.mark.slow
def test_rec_standin_on_a_port_in_use_fails_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = rec_run("standin", "--port", str(port), timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith(f"InputError: 127.0.0.1:{port}: port already in use")
    assert "--port" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_rec_standin_help_names_every_wire_and_the_live_command() -> None:
    from click.testing import CliRunner

    from rec.cli import cli

    result = CliRunner().invoke(cli, ["standin", "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    for wire in ("Gemini API", "chat/completions", "/v1/messages", "python -m rec.standin.live"):
        assert wire in text


def test_the_brain_example_in_the_command_reference_calls_the_tool(
    standin_factory: Any,
) -> None:
    """The documented ``--brain`` example, run as written, makes the stand-in call the tool."""
    page = (REPO / "docs" / "reference" / "commands.md").read_text(encoding="utf-8")
    source = "# mybrain.py" + page.split("```python\n# mybrain.py", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {}
    exec(compile(source, "mybrain.py", "exec"), namespace)
    server = standin_factory(namespace["brain"]())
    client = genai.Client(api_key=FAKE_API_KEY, http_options={"base_url": server.url})
    declaration = types.FunctionDeclaration(
        name="get_weather",
        parameters=types.Schema(
            type=types.Type.OBJECT, properties={"city": types.Schema(type=types.Type.STRING)}
        ),
    )
    reply = client.models.generate_content(
        model="gemini-2.0-flash",
        contents="what is the weather in Rome?",
        config=types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[declaration])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        ),
    )
    assert reply.function_calls is not None
    assert [(call.name, call.args) for call in reply.function_calls] == [
        ("get_weather", {"city": "Rome"})
    ]
