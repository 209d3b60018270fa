"""The progress bar draws on a real terminal and stays out of pipes and CI logs."""

from __future__ import annotations

import io
import os

from replayer._reports.progress import ProgressBar


def test_draws_on_a_terminal() -> None:
    master, slave = os.openpty()
    with os.fdopen(slave, "w") as terminal:
        with ProgressBar(total=4, stream=terminal, width=8) as bar:
            for _ in range(4):
                bar.advance()
    drawn = ""
    while not drawn.rstrip("\r\n").endswith("4/4"):  # a loaded machine delivers it in parts
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal is closed and drained
            break
        if not chunk:
            break
        drawn += chunk.decode()
    os.close(master)
    assert "[##......] 1/4" in drawn and "[########] 4/4" in drawn
    assert drawn.count("\r[") == 4 and drawn.rstrip("\r\n").endswith("4/4")


def test_silent_when_not_a_terminal() -> None:
    pipe = io.StringIO()
    with ProgressBar(total=3, stream=pipe) as bar:
        bar.advance(3)
    assert pipe.getvalue() == "" and bar.done == 3
