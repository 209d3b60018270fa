"""`rec` as a user runs it: the command line and environment for a real subprocess."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
