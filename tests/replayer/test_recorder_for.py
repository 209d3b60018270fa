"""The one constructor of a record- or auto-mode recorder (``replayer._auto_mode``).

``rec start``, ``rec replay --record-missing`` and the pytest plugin's model source all build
their recorder with :func:`recorder_for`; a recorder a user builds has none of rec's wiring,
so it refuses ``auto`` mode with the command that runs it. Recording and replaying through
one (a hit served, a miss forwarded and recorded) is in tests/recorder/test_exposure.py and
tests/replayer/test_replay_runs.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import rec
from cassettes._errors import InputError
from cassettes._record_mode import RecordMode
from replayer._auto_mode import recorder_for
from replayer._replay_channel import ReplayChannel


def test_a_users_recorder_refuses_auto_mode_and_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="auto mode needs the replayer") as caught:
        rec.Recorder(tmp_path, name="door", mode="auto")
    assert "rec start --mode auto" in str(caught.value)


@pytest.mark.parametrize("mode", [RecordMode.RECORD, RecordMode.AUTO, "auto", "record"])
def test_recorder_for_builds_a_recorder_in_the_mode_asked(tmp_path: Path, mode: object) -> None:
    built = recorder_for(mode, tmp_path, name="door", channel=ReplayChannel())  # type: ignore[arg-type]
    assert isinstance(built, rec.Recorder)
    assert built.mode is RecordMode.parse(str(mode), source="test")


@pytest.mark.parametrize("mode", ["replay", "live", "sideways"])
def test_recorder_for_refuses_a_mode_no_recorder_runs_in(tmp_path: Path, mode: str) -> None:
    with pytest.raises(InputError):
        recorder_for(mode, tmp_path, name="door")
