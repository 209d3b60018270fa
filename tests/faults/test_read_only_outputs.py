"""Outputs on a read-only file system: one line, exit 2, before any work."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rec.cli import main

pytestmark = pytest.mark.faults


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            ["start", "--out", "{ro}/rec", "--", sys.executable, "-c", "pass"], id="start-out"
        ),
        pytest.param(["start", "--out", "{ro}"], id="start-out-existing"),
        pytest.param(
            ["replay", "an_agent", "{tmp}/x.evalset.json", "--junit", "{ro}/j.xml"],
            id="replay-junit",
        ),
        pytest.param(
            ["replay", "an_agent", "{tmp}/x.evalset.json", "--results", "{ro}/res"],
            id="replay-results",
        ),
        pytest.param(
            ["score", "{tmp}/a.json", "{tmp}/b.json", "--junit", "{ro}/j.xml"], id="score-junit"
        ),
        pytest.param(["import", "{tmp}/s.json", "--out", "{ro}/evals"], id="import-out"),
        pytest.param(
            ["replay", "an_agent", "{tmp}/x.evalset.json", "--html", "{ro}/r.html"],
            id="replay-html",
        ),
        pytest.param(
            ["score", "{tmp}/a.json", "{tmp}/b.json", "--html", "{ro}/r.html"], id="score-html"
        ),
        pytest.param(
            ["score", "{tmp}/a.json", "{tmp}/b.json", "--record-judge", "{ro}/judge"],
            id="score-record-judge",
        ),
    ],
)
def test_a_read_only_output_is_one_line_and_exit_2(
    read_only_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    argv = [a.format(ro=read_only_folder, tmp=tmp_path) for a in args]
    code = main(argv)
    text = capsys.readouterr().err.strip()
    assert code == 2, text
    assert text.count("\n") == 0 and "Traceback" not in text, text
    assert "Read-only file system" in text, text


def _special(kind: str, place: Path) -> Path:
    """A symbolic link to a file, a FIFO or a character device (as ``/dev/full``) at
    ``place``; what must never be replaced by a plain file."""
    import os
    import stat

    if kind == "symlink":
        (place.parent / "real.txt").write_text("kept\n")
        place.symlink_to(place.parent / "real.txt")
    elif kind == "fifo":
        os.mkfifo(place)
    else:
        if os.geteuid() != 0:
            pytest.skip("creating a device node needs root; the symlink and FIFO cases hold")
        os.mknod(place, 0o600 | stat.S_IFCHR, os.makedev(1, 7))  # /dev/full's numbers
    return place


@pytest.mark.parametrize("kind", ["symlink", "fifo", "device"])
@pytest.mark.parametrize("flag", ["--junit", "--html"])
def test_an_output_on_a_link_fifo_or_device_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, flag: str
) -> None:
    import os

    target = _special(kind, tmp_path / "out.xml")
    before = os.lstat(target)
    evalset, other = tmp_path / "a.json", tmp_path / "b.json"
    code = main(["score", str(evalset), str(other), flag, str(target)])
    text = capsys.readouterr().err.strip()
    assert code == 2, text
    assert "not a regular file" in text and str(target) in text, text
    assert "a regular file or a new path" in text, text
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


@pytest.mark.parametrize("kind", ["symlink", "fifo", "device"])
def test_the_atomic_writer_refuses_a_link_fifo_or_device(tmp_path: Path, kind: str) -> None:
    import os

    from cassettes._atomic_write import write_atomic
    from cassettes._errors import InputError

    target = _special(kind, tmp_path / "x.cassette.json")
    before = os.lstat(target)
    with pytest.raises(InputError, match="not a regular file"):
        write_atomic(target, "{}")
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    write_atomic(tmp_path / "new.json", "{}")  # a new path is written
    write_atomic(tmp_path / "new.json", "{}")  # and a regular file replaced
