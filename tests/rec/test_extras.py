"""Extras fail in one line: without google-adk, a command that needs it says so and exits 2,
and a plain google-genai program replays all the same.

A venv without google-adk is expensive to build, so the real ``rec`` runs in a subprocess
whose interpreter (and every child: replay workers too) cannot import ``google.adk``: a
``sitecustomize`` on ``PYTHONPATH`` installs a finder that raises ModuleNotFoundError for it,
as a missing distribution does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cassettes._extras import missing_extra

ROOT = Path(__file__).resolve().parents[2]

_BLOCKER = """
import importlib.abc, sys

class _NoAdk(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "google.adk" or name.startswith("google.adk."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoAdk())
"""


def _rec_without_adk(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    blocker = tmp_path / "no_adk"
    blocker.mkdir(exist_ok=True)
    (blocker / "sitecustomize.py").write_text(_BLOCKER)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "GEMINI_")) and "PROXY" not in k.upper()
    }
    env["PYTHONPATH"] = str(blocker)
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return subprocess.run(
        [sys.executable, "-m", "rec", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(
            ModuleNotFoundError("No module named 'google.adk'", name="google.adk"),
            "rec replay needs google-adk: pip install 'agent-rec[adk]'",
            id="google.adk",
        ),
        pytest.param(
            ModuleNotFoundError("x", name="google.adk.agents"),
            "rec replay needs google-adk: pip install 'agent-rec[adk]'",
            id="submodule",
        ),
        pytest.param(
            ModuleNotFoundError("x", name="mcp"),
            "rec replay needs mcp: pip install 'agent-rec[adk]'",
            id="mcp",
        ),
        pytest.param(ModuleNotFoundError("x", name="requests"), None, id="not-an-extra"),
        pytest.param(ModuleNotFoundError("x", name="google.adkx"), None, id="prefix-only"),
        pytest.param(ValueError("x"), None, id="no-import-error"),
    ],
)
def test_missing_extra_names_the_distribution_and_the_extra(
    error: BaseException, expected: str | None
) -> None:
    assert missing_extra(error, command="rec replay") == expected


def test_missing_extra_is_found_behind_rec_own_error() -> None:
    from cassettes._errors import InputError

    try:
        try:
            raise ModuleNotFoundError("No module named 'google.adk'", name="google.adk")
        except ImportError as exc:
            raise InputError("cannot import 'agent'", path="agent") from exc
    except InputError as wrapped:
        assert missing_extra(wrapped, command="rec replay") == (
            "rec replay needs google-adk: pip install 'agent-rec[adk]'"
        )


@pytest.mark.slow
def test_extras_fail_in_one_line_replay_of_an_adk_agent_without_google_adk(
    tmp_path: Path,
) -> None:
    done = _rec_without_adk(
        tmp_path, "replay", "examples/home_assistant", "examples/home_assistant/recordings"
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr == "rec replay needs google-adk: pip install 'agent-rec[adk]'\n"


@pytest.mark.slow
def test_extras_fail_in_one_line_a_program_replays_with_no_google_adk(tmp_path: Path) -> None:
    done = _rec_without_adk(
        tmp_path,
        "replay",
        "examples/genai_afc/thermostat_helper.py:chat",
        "examples/genai_afc/recordings",
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "PASSED  how_warm_is_the_kitchen" in done.stdout


@pytest.mark.slow
def test_extras_fail_in_one_line_check_names_the_module_actually_missing(tmp_path: Path) -> None:
    done = _rec_without_adk(tmp_path, "check", "examples/home_assistant")
    assert done.returncode == 1
    (problem,) = done.stdout.splitlines()
    assert 'module "home_assistant.metrics"' in problem
    assert "No module named 'google.adk' (pip install 'agent-rec[adk]')" in problem
