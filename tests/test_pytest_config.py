"""rec's own pytest configuration keeps the advice docs/pytest.md gives its users."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_suite_with_pytest_asyncio_on_emits_no_loop_scope_warning() -> None:
    """With pytest-asyncio loaded (the suite turns it off in addopts), a run under
    ``-W error`` neither warns about ``asyncio_default_fixture_loop_scope`` nor fails."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-W",
            "error",
            "tests/rec/test_small_items.py",
            "-k",
            "upstream_url_accepts",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "asyncio_default_fixture_loop_scope" not in output, output[-3000:]
    assert " passed" in output, output[-3000:]
