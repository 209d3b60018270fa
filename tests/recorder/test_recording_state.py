"""A recording while it is finalised: the cassette's lock held throughout, and the
working files removed once it is written (the state file last), never after a failure."""

from __future__ import annotations

from pathlib import Path

import filelock
import pytest

from cassettes._folders import locked
from recorder._recording import finalising
from recorder._recording_state import RecordingPaths


def _working_files(tmp_path: Path) -> RecordingPaths:
    paths = RecordingPaths(tmp_path, "demo")
    for file in paths.working_files:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("{}\n")
    return paths


def test_finalising_removes_every_working_file_once_the_recording_is_written(
    tmp_path: Path,
) -> None:
    paths = _working_files(tmp_path)
    with finalising(paths):
        assert all(file.exists() for file in paths.working_files)
    assert not any(file.exists() for file in paths.working_files)


def test_finalising_keeps_the_journals_when_told_and_removes_the_state_file(
    tmp_path: Path,
) -> None:
    paths = _working_files(tmp_path)
    with finalising(paths) as removal:
        removal.journals = False
    assert not paths.state.exists()
    assert all(file.exists() for file in paths.working_files if file != paths.state)


def test_a_failed_finalisation_removes_nothing(tmp_path: Path) -> None:
    paths = _working_files(tmp_path)
    with pytest.raises(OSError, match="No space"), finalising(paths):
        raise OSError(28, "No space left on device")
    assert all(file.exists() for file in paths.working_files)


def test_finalising_holds_the_cassette_lock(tmp_path: Path) -> None:
    paths = _working_files(tmp_path)
    with finalising(paths):
        with pytest.raises(filelock.Timeout):
            with locked(paths.cassette, lock_dir=paths.work_dir, timeout=0.05):
                pass
    with locked(paths.cassette, lock_dir=paths.work_dir, timeout=0.05):
        pass  # released on the way out
