"""`rec start -- COMMAND` ended by Ctrl-C exits 0, as without a command: the stop was asked for.

Real processes: `rec start` wrapping a Python child that waits until it is killed (as
`adk web` does); SIGINT to `rec start` alone (its SIGTERM ends the child) and to the
whole process group (a terminal's Ctrl-C reaches the child too).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.rec_process import rec_argv, rec_environment

WAITS = """
import pathlib, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_DFL)  # dies of Ctrl-C, without Python's traceback
pathlib.Path(sys.argv[1]).write_text("up")
while True:
    time.sleep(1)
"""


def _start(tmp_path: Path, child: str) -> tuple[subprocess.Popen[str], Path]:
    ready = tmp_path / "ready"
    script = tmp_path / "child.py"
    script.write_text(child)
    out = tmp_path / "rec"
    argv = rec_argv("start", "--out", str(out), "--name", "web", "--", sys.executable)
    process = subprocess.Popen(
        [*argv, str(script), str(ready)],
        env=rec_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    while not ready.exists():  # no deadline of its own: the test's timeout bounds it
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)
    return process, out


@pytest.mark.parametrize("to_group", [False, True], ids=["rec-start-only", "ctrl-c-to-group"])
def test_ctrl_c_ending_the_command_exits_0(tmp_path: Path, to_group: bool) -> None:
    process, _ = _start(tmp_path, WAITS)
    try:
        if to_group:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=300)
    finally:
        process.kill()
    assert process.returncode == 0, stderr
    assert "rec: stopping" in stderr or to_group, stderr  # rec ended it, or Ctrl-C did


def test_a_command_that_fails_on_its_own_keeps_its_status(tmp_path: Path) -> None:
    process, _ = _start(tmp_path, WAITS.replace("while True:\n    time.sleep(1)", "sys.exit(3)"))
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 3, stderr
