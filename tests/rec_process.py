"""`rec` as a user runs it: the command line and environment for a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini

REPO = Path(__file__).resolve().parents[1]
DRIVER = REPO / "tests" / "agents" / "drive_runner.py"
"""A program with its own ADK Runner (``python drive_runner.py MODULE TEXT...``)."""
ADK = Path(sys.executable).parent / "adk"


def rec_argv(*args: str) -> list[str]:
    """``python -m rec ARGS...`` with this interpreter."""
    return [sys.executable, "-m", "rec", *args]


def rec_environment(**extra: str) -> dict[str, str]:
    """This environment without Google credentials, with the repository importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for a child server to bind)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_http(url: str, process: Any, timeout: float = 90) -> None:
    """Wait until ``url`` answers 200, failing early if ``process`` (a Popen) exits."""
    import time

    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the process exited early:\n{process.communicate()[1]}")
        try:
            if httpx.get(url, timeout=1, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(f"{url} never came up")


def start_argv(
    out: Path, name: str, upstream: str, *command: str, flags: tuple[str, ...] = ()
) -> list[str]:
    """``python -m rec start --out OUT --name NAME --upstream URL [FLAGS] [-- COMMAND]``."""
    wrapped = ("--", *command) if command else ()
    return rec_argv(
        "start", "--out", str(out), "--name", name, "--upstream", upstream, *flags, *wrapped
    )


def rec_run(*args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    """``rec ARGS`` in a subprocess (text output captured), the environment
    :func:`rec_environment` plus ``env``."""
    return subprocess.run(
        rec_argv(*args), env=rec_environment(**env), capture_output=True, text=True, timeout=timeout
    )


def popen(
    argv: list[str], *, preexec_fn: Callable[[], Any] | None = None, **env: str
) -> subprocess.Popen[str]:
    """``argv`` started in the background with text pipes, the environment
    :func:`rec_environment` plus ``env`` (``preexec_fn`` runs in the child before it starts)."""
    return subprocess.Popen(
        argv,
        env=rec_environment(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec_fn,
    )


def printed_url(process: subprocess.Popen[str]) -> str:
    """The URL a ``rec start`` or ``rec serve`` child prints on its first line (``NAME=URL``)."""
    assert process.stdout is not None
    return process.stdout.readline().strip().split("=", 1)[1]


def served_exports(server: subprocess.Popen[str]) -> str:
    """The ``export`` lines a ``rec serve`` child prints, up to ``export PYTHONPATH=``: what a
    user pastes into their shell to point a program at the replay."""
    assert server.stdout is not None
    exports = []
    for line in iter(server.stdout.readline, ""):
        exports.append(line)
        if line.startswith("export PYTHONPATH="):
            break
    return "".join(exports)


def rec_start(
    out: Path,
    name: str,
    upstream: str,
    *command: str,
    flags: tuple[str, ...] = (),
    stdin: str | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``rec start --out OUT --name NAME --upstream URL [FLAGS] -- COMMAND`` in a subprocess.

    The environment is :func:`rec_environment` plus ``env``; ``stdin`` is the command's input.
    """
    return subprocess.run(
        start_argv(out, name, upstream, *command, flags=flags),
        env=rec_environment(**env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def rec_replay(agent: Path | str, evalset: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``rec replay AGENT EVALSET`` in a subprocess with no Google credentials (plus ``env``)."""
    return rec_run("replay", str(agent), str(evalset), timeout=300, **env)


def adk_eval_passes(
    agent: Path, evalset: Path, api: StandinGemini, tmp_path: Path, **extra: str
) -> None:
    """ADK's own ``adk eval`` runs the EvalSet against the stand-in and passes it."""
    if not ADK.exists():
        pytest.skip("the adk command is not installed")
    copy = tmp_path / "adk-eval" / agent.name  # adk eval writes its history beside the agent
    shutil.copytree(agent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env.update(
        GOOGLE_API_KEY=FAKE_API_KEY,
        GOOGLE_GEMINI_BASE_URL=api.url,
        TRAVEL_RATES_URL=f"{api.url}/rates",
        PYTHONPATH=str(REPO),
    )
    env.update(extra)
    done = subprocess.run(
        [
            str(ADK),
            "eval",
            str(copy),
            str(evalset),
            "--config_file_path",
            str(evalset.parent / "test_config.json"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Tests failed: 0" in done.stdout and "Tests passed: 0" not in done.stdout, done.stdout


def copy_travel_agent(agents: Path) -> Path:
    """A copy of the travel agent in ``agents/travel`` (adk's servers keep their session
    database beside the agents); returns ``agents``."""
    shutil.copytree(
        REPO / "tests" / "agents" / "travel",
        agents / "travel",
        ignore=shutil.ignore_patterns("__pycache__", ".adk"),
    )
    return agents


@dataclass
class RecordedServer:
    """An ``adk api_server`` run under ``rec start``; ``stop`` and ``stderr`` are set when
    the recording has ended."""

    client: Any
    stop: subprocess.CompletedProcess[str] | None = None
    stderr: str = field(default="")


@contextmanager
def recording_api_server(
    out: Path, upstream: str, agents: Path, **env: str
) -> Iterator[RecordedServer]:
    """``rec start --out OUT --name web --upstream URL -- adk api_server AGENTS`` with an
    httpx client of the server; ``rec stop`` ends the recording on the way out."""
    import httpx

    port = free_port()
    command = start_argv(out, "web", upstream, str(ADK), "api_server", "--port", str(port))
    environment = rec_environment(**env)
    process = subprocess.Popen(
        [*command, str(agents)],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    server = RecordedServer(httpx.Client(base_url=base, timeout=60, trust_env=False))
    try:
        wait_for_http(f"{base}/list-apps", process)
        yield server
    finally:
        server.client.close()
        server.stop = rec_run("stop", "--out", str(out), timeout=120, **env)
        server.stderr = process.communicate(timeout=120)[1]


IMPORT_PROBE = """
import json, sys
sys.argv = ["rec", *json.loads(sys.argv[1])]
from rec.cli import main
try:
    status = main()
except SystemExit as exc:
    status = exc.code
loaded = sorted(sys.modules)
built = []
if "pydantic" in sys.modules:
    import pydantic

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    built = sorted(
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in subclasses(pydantic.BaseModel)
        if cls.__dict__.get("__pydantic_complete__")
    )
print("\\n@@" + json.dumps({"status": status, "modules": loaded, "built": built}), flush=True)
"""
"""``python -c IMPORT_PROBE ARGS_JSON`` runs ``rec ARGS`` and prints, last, ``@@`` and what it
left behind: its exit status, the modules loaded and rec's pydantic models built."""


def probe_argv(args: list[str]) -> list[str]:
    """The command line that runs ``rec ARGS`` under :data:`IMPORT_PROBE`."""
    return [sys.executable, "-c", IMPORT_PROBE, json.dumps(args)]


def probed(args: list[str], stdout: str, stderr: str = "") -> dict[str, Any]:
    """What :data:`IMPORT_PROBE` printed last (``status``, ``modules``, ``built``)."""
    lines = [line for line in stdout.splitlines() if line.startswith("@@")]
    assert lines, f"rec {' '.join(args)} did not finish:\n{stderr[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1][2:])
    return result


def run_probe(args: list[str], cwd: Path) -> dict[str, Any]:
    """Run ``rec ARGS`` in a fresh interpreter in ``cwd`` under :data:`IMPORT_PROBE`."""
    done = subprocess.run(probe_argv(args), capture_output=True, text=True, cwd=cwd, timeout=600)
    return probed(args, done.stdout, done.stderr)


def probe_serve(cassette: Path, cwd: Path, use: Callable[[str], None]) -> dict[str, Any]:
    """Run ``rec serve CASSETTE`` under :data:`IMPORT_PROBE`, call ``use`` with its URL, stop
    it (``/__rec__/stop``) and return what the probe printed."""
    proc = subprocess.Popen(
        probe_argv(["serve", str(cassette), "-q"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        assert first.startswith("export GOOGLE_GEMINI_BASE_URL="), proc.stderr.read()
        url = first.strip().split("=", 1)[1]
        use(url)
        stop = urllib.request.Request(url + "/__rec__/stop", data=b"", method="POST")
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(stop) as answer:
            answer.read()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return probed(["serve"], out, err)
