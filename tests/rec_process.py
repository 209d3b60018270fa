"""`rec` as a user runs it: the command line and environment for a real subprocess."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


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
