"""A disk that fills up while recording (a real, small tmpfs): the client is served as if
nothing happened, the loss is reported once, rec exits non-zero, the journal is kept, and
once there is room `rec stop` finishes the recording."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassettes._cassette import load_cassette
from rec.standin.replies import FAKE_API_KEY, GENERATE_RPCS, Reply
from recorder._journal_lines import exchange_lines
from recorder._recording import RecordingPaths

from .harness import UNARY, grow_disk, rec_stop, start_recorder

pytestmark = pytest.mark.faults


def test_a_full_disk_costs_the_recording_never_the_session(
    small_disk: Path, standin_factory: Any
) -> None:
    big = "y" * 20_000
    api = standin_factory(lambda r: Reply.text(big) if r.rpc in GENERATE_RPCS else None)
    out = small_disk / "rec"
    process, url = start_recorder(out, "full", api.url)
    answers = []
    with httpx.Client(trust_env=False, timeout=60) as client:
        for i in range(30):  # ~600 KB of traffic onto a 256 KiB disk
            body = {"contents": [{"role": "user", "parts": [{"text": f"turn {i}"}]}]}
            answers.append(
                client.post(url + UNARY, json=body, headers={"x-goog-api-key": FAKE_API_KEY})
            )
    assert [a.status_code for a in answers] == [200] * 30
    assert all(big in a.text for a in answers)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stderr
    assert "Traceback" not in stderr and "OSError" not in stderr, stderr
    assert stderr.count("could not be recorded") == 1, stderr
    assert "No space left on device" in stderr, stderr
    journal = RecordingPaths(out, "full").journal
    kept = exchange_lines(journal)  # what `rec status` counts
    assert 0 < kept < 30

    grow_disk(small_disk)
    stopped = rec_stop(out)
    assert stopped.returncode == 0, stopped.stderr
    assert len(load_cassette(out / "full.cassette.json").exchanges) == kept


def _fill(disk: Path) -> None:
    """Write until the disk is full (a tmpfs: creating an empty file still works)."""
    with open(disk / "filler", "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass


@pytest.mark.parametrize("command", ["import-out", "score-results", "score-junit"])
def test_a_full_disk_while_writing_an_output_is_one_line_and_exit_2(
    small_disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Item 8: the output was writable when checked, then the disk filled up: one line
    naming the file and the fix, exit 2, no traceback."""
    from cassettes._evalset import save_evalset
    from rec.cli import main
    from tests.factories import adk_session_document, make_evalset

    session = tmp_path / "session.json"
    session.write_text(json.dumps(adk_session_document()))
    big = [f"turn {n} " + "x" * 2000 for n in range(200)]
    save_evalset(make_evalset(big), tmp_path / "a.evalset.json")
    _fill(small_disk)
    argv = {
        "import-out": ["import", str(session), "--out", str(small_disk / "evals")],
        "score-results": [
            "score",
            str(tmp_path / "a.evalset.json"),
            str(tmp_path / "a.evalset.json"),
            "--results",
            str(small_disk / "results"),
        ],
        "score-junit": [
            "score",
            str(tmp_path / "a.evalset.json"),
            str(tmp_path / "a.evalset.json"),
            "--junit",
            str(small_disk / "junit.xml"),
        ],
    }[command]
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err, err
    assert "No space left on device" in err and "Free some space" in err
