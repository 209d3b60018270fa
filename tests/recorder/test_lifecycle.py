"""The recording lifecycle loses nothing.

Real recorders (in-process and `rec start` subprocesses), the stand-in API over real
sockets, real files under tmp_path.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassettes._atomic_write import write_atomic
from cassettes._cassette import SseBody, load_cassette
from cassettes._folders import file_mode
from rec.cli import main
from rec.standin.replies import FAKE_API_KEY, Reply
from rec.standin.server import StandinGemini
from recorder._control import recorder_statuses, stop_recorders
from recorder._journal_lines import exchange_lines
from recorder._recorder import Recorder
from recorder._recording import RecorderState, RecordingPaths, recover_stale
from recorder._traffic import Upstreams
from tests.factories import echo_model
from tests.journaled import journal_holding
from tests.rec_process import popen, printed_url, start_argv
from tests.rec_process import rec_argv as _rec
from tests.rec_process import rec_environment as _env

UNARY = "/v1beta/models/gemini-2.0-flash:generateContent"


@pytest.fixture
def api(standin_factory: Callable[..., StandinGemini]) -> StandinGemini:
    """A stand-in that answers each question with ``echo <question>``."""
    return standin_factory(echo_model)


def _recorder(folder: Path, api: StandinGemini, name: str, **options: Any) -> Recorder:
    """A recorder of ``name`` in ``folder``, forwarding to the stand-in ``api``."""
    return Recorder(folder, name=name, upstreams=Upstreams(gemini=api.url), **options)


def ask(url: str, text: str, *, timeout: float = 60) -> httpx.Response:
    body = {"contents": [{"role": "user", "parts": [{"text": text}]}]}
    with httpx.Client(trust_env=False, timeout=timeout) as client:
        return client.post(url + UNARY, headers={"x-goog-api-key": FAKE_API_KEY}, json=body)


# -- item 1: a live recorder's journal is never recovered from under it -----------------------


def test_recovery_never_takes_a_live_recorders_journal(tmp_path: Path, api: StandinGemini) -> None:
    first = _recorder(tmp_path, api, "first")
    with first.running_in_thread():
        for i in range(3):
            assert ask(first.url, f"a{i}").status_code == 200
        # Everything that recovers a folder runs while `first` records: another recorder
        # starting there, `rec stop`-style recovery, `rec status`.
        second = _recorder(tmp_path, api, "second")
        with second.running_in_thread():
            assert ask(second.url, "b").status_code == 200
        assert recover_stale(tmp_path) == []
        assert [s.running for s in recorder_statuses(tmp_path)] == [True]
        for i in range(3, 5):
            assert ask(first.url, f"a{i}").status_code == 200
    assert first.result is not None and first.result.exchanges == 5
    assert len(load_cassette(tmp_path / "first.cassette.json").exchanges) == 5
    assert len(load_cassette(tmp_path / "second.cassette.json").exchanges) == 1


def test_a_second_recorder_on_the_same_name_is_refused(tmp_path: Path, api: StandinGemini) -> None:
    with _recorder(tmp_path, api, "same").running_in_thread():
        with pytest.raises(Exception, match="already recording 'same'"):
            with Recorder(tmp_path, name="same").running_in_thread():
                pass


# -- item 2: recovery never empties a cassette -------------------------------------------------


def _record(tmp_path: Path, api: Any, name: str, turns: int) -> RecorderState:
    """Record ``turns`` exchanges; return the state file as it was while recording."""
    recorder = _recorder(tmp_path, api, name)
    with recorder.running_in_thread():
        state = RecorderState.from_json(recorder.paths.state.read_bytes())
        for i in range(turns):
            assert ask(recorder.url, f"t{i}").status_code == 200
    return state


def test_a_kill_after_the_journal_was_removed_keeps_the_cassette(
    tmp_path: Path, api: StandinGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    state = _record(tmp_path, api, "win", 5)
    paths = RecordingPaths(tmp_path, "win")
    # What a SIGKILL between "journal removed" and "state removed" leaves behind.
    write_atomic(paths.state, state.to_json())
    before = (tmp_path / "win.cassette.json").read_bytes()
    assert main(["stop", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "win.cassette.json").read_bytes() == before
    assert len(load_cassette(tmp_path / "win.cassette.json").exchanges) == 5
    assert not paths.state.exists()
    assert "complete already (5 exchanges)" in capsys.readouterr().err


def test_a_kill_after_the_cassette_was_written_changes_nothing(
    tmp_path: Path, api: StandinGemini
) -> None:
    recorder = _recorder(tmp_path, api, "late")
    with recorder.running_in_thread():
        state = RecorderState.from_json(recorder.paths.state.read_bytes())
        for i in range(4):
            ask(recorder.url, f"t{i}")
        journal = journal_holding(recorder.paths.journal, 4)
    # A kill between "cassette written" and "journal removed".
    recorder.paths.journal.write_bytes(journal)
    write_atomic(recorder.paths.state, state.to_json())
    before = (tmp_path / "late.cassette.json").read_bytes()
    [report] = stop_recorders(tmp_path)
    assert report.result is not None and report.result.unchanged
    assert (tmp_path / "late.cassette.json").read_bytes() == before
    assert not recorder.paths.journal.exists()


def test_a_smaller_recovered_recording_is_written_beside_the_cassette(
    tmp_path: Path, api: StandinGemini
) -> None:
    _record(tmp_path, api, "grow", 5)
    five = (tmp_path / "grow.cassette.json").read_bytes()
    recorder = _recorder(tmp_path, api, "grow", overwrite=True)
    with recorder.running_in_thread():  # a re-recording...
        state = RecorderState.from_json(recorder.paths.state.read_bytes())
        ask(recorder.url, "new 0")
        ask(recorder.url, "new 1")
        journal = journal_holding(recorder.paths.journal, 2)
    # ...that died after 2 exchanges: the old cassette, its journal and state.
    write_atomic(tmp_path / "grow.cassette.json", five)
    recorder.paths.journal.write_bytes(journal)
    write_atomic(recorder.paths.state, state.to_json())
    [report] = stop_recorders(tmp_path)
    assert report.result is not None and report.result.set_aside is not None
    assert (tmp_path / "grow.cassette.json").read_bytes() == five
    assert len(load_cassette(report.result.set_aside).exchanges) == 2
    assert not recorder.paths.journal.exists() and not recorder.paths.state.exists()


# -- item 5: a reused pid is never taken for the recorder ---------------------------------------


def test_stop_never_signals_a_process_that_reused_the_recorders_pid(
    tmp_path: Path, api: StandinGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    state = _record(tmp_path, api, "dead", 2)
    bystander = subprocess.Popen(["sleep", "120"])
    try:
        paths = RecordingPaths(tmp_path, "dead")
        stale = dataclasses.replace(state, pid=bystander.pid)  # the pid was reused
        write_atomic(paths.state, stale.to_json())
        assert main(["status", "--out", str(tmp_path)]) == 0
        assert "not running" in capsys.readouterr().out
        assert main(["stop", "--out", str(tmp_path)]) == 0
        time.sleep(0.5)
        assert bystander.poll() is None, "rec stop signalled an unrelated process"
    finally:
        bystander.kill()
        bystander.wait()


# -- item 6 and item 9: durable, private files -------------------------------------------------


def test_atomic_writes_fsync_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[bool] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:  # the OS call only observed: a power cut cannot be caused
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_atomic(tmp_path / "a.json", "{}")
    assert synced == [False, True]  # the file, then the folder holding the rename


def test_recordings_are_private(tmp_path: Path, api: StandinGemini) -> None:
    out = tmp_path / "new" / "recordings"
    recorder = _recorder(out, api, "p")
    with recorder.running_in_thread():
        ask(recorder.url, "secret plans")
        live = [recorder.paths.journal, recorder.paths.state, recorder.paths.owner_lock]
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in live}
    modes |= {
        p.name: stat.S_IMODE(p.stat().st_mode)
        for p in (out / "p.cassette.json", out / "p.evalset.json", out / ".rec", out, out.parent)
    }
    assert modes == {
        "p.journal.jsonl": 0o600,
        "p.state.json": 0o600,
        "p.owner.lock": 0o600,
        "p.cassette.json": 0o600,
        "p.evalset.json": 0o600,
        ".rec": 0o700,
        "recordings": 0o700,
        "new": 0o700,
    }


def test_an_explicit_file_mode_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REC_FILE_MODE", "0640")
    assert file_mode() == 0o640
    write_atomic(tmp_path / "shared" / "x.json", "{}")
    assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "shared" / "x.json").stat().st_mode) == 0o640
    (tmp_path / "shared" / "x.json").chmod(0o644)  # a chmod by the user survives rewrites
    write_atomic(tmp_path / "shared" / "x.json", "[]")
    assert stat.S_IMODE((tmp_path / "shared" / "x.json").stat().st_mode) == 0o644


# -- every path that starts a recorder cleans up --------------------------------


def test_a_command_that_cannot_start_leaves_nothing_behind(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        _rec("start", "--out", str(out), "--name", "t", "--", "/nonexistent/cmd"),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 2, proc.stderr
    assert "cannot run '/nonexistent/cmd'" in proc.stderr and "Traceback" not in proc.stderr
    leftovers = sorted(p.name for p in (out / ".rec").iterdir() if not p.name.endswith(".lock"))
    assert leftovers == []
    assert not (out / "t.cassette.json").exists()
    assert main(["status", "--out", str(out)]) == 0


def test_a_failing_block_that_recorded_something_keeps_it(
    tmp_path: Path, api: StandinGemini
) -> None:
    recorder = _recorder(tmp_path, api, "kept")
    with pytest.raises(RuntimeError, match="boom"):
        with recorder.running_in_thread():
            ask(recorder.url, "before the crash")
            raise RuntimeError("boom")
    assert len(load_cassette(tmp_path / "kept.cassette.json").exchanges) == 1
    assert not recorder.paths.state.exists() and not recorder.paths.journal.exists()


# -- item 15: outputs that cannot be written: one line, exit 2, before any work ---------------


def test_start_into_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    for out in (blocker, blocker / "sub"):
        code = main(["start", "--out", str(out), "--", sys.executable, "-c", "pass"])
        text = capsys.readouterr().err.strip()
        assert code == 2, text
        assert text.count("\n") == 0 and text.startswith(("InputError: ", "UsageError: ")), text
        assert "--out" in text or str(out) in text, text


@pytest.mark.parametrize("flag", ["--junit", "--results"])
def test_report_outputs_are_checked_before_any_case_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    started = time.monotonic()
    code = main(
        [
            "replay",
            "no_such_agent_module",
            str(tmp_path / "none.evalset.json"),
            flag,
            str(blocker / "out"),
        ]
    )
    text = capsys.readouterr().err.strip()
    assert code == 2 and text.count("\n") == 0 and flag in text, text
    assert "not a folder" in text or "Not a directory" in text
    assert time.monotonic() - started < 600  # a sanity bound, not a timing assertion


def test_import_into_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main(["import", str(tmp_path / "missing.json"), "--out", str(blocker / "sub")])
    text = capsys.readouterr().err.strip()
    assert code == 2 and text.count("\n") == 0 and "--out" in text, text


def test_an_agent_that_raises_while_loading_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = tmp_path / "broken_agent"
    agent.mkdir()
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text("x = 1\nraise RuntimeError('the agent is broken')\n")
    evalset = tmp_path / "e.evalset.json"
    evalset.write_text('{"eval_set_id": "e", "eval_cases": []}')
    code = main(["replay", str(agent), str(evalset)])
    text = capsys.readouterr().err.strip()
    assert code == 2, text
    assert text.count("\n") == 0 and "Traceback" not in text, text
    assert "RuntimeError: the agent is broken" in text and "agent.py:2" in text


# -- item 4: a full disk costs the recording, never the session ----------------------------------


def _limit_file_size(limit: int) -> Any:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill

    return apply


def test_a_full_disk_keeps_serving_reports_once_and_keeps_the_journal(
    tmp_path: Path, standin_factory: Any
) -> None:
    api = standin_factory(lambda r: Reply.text("x" * 3000) if r.rpc == "generateContent" else None)
    out = tmp_path / "rec"
    recorder = popen(  # room for a few exchanges, then EFBIG
        start_argv(out, "full", api.url), preexec_fn=_limit_file_size(16_000)
    )
    try:
        url = printed_url(recorder)
        answers = [ask(url, f"turn {i}") for i in range(8)]
        assert [a.status_code for a in answers] == [200] * 8
        assert all("x" * 3000 in a.text for a in answers)
        recorder.send_signal(signal.SIGINT)
        _, stderr = recorder.communicate(timeout=120)
    finally:
        recorder.kill()
    print(stderr)
    assert recorder.returncode == 1, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.count("could not be recorded") == 1, stderr
    assert "safe in" in stderr and "more exchange(s) were answered but not recorded" in stderr
    journal = RecordingPaths(out, "full").journal
    kept = exchange_lines(journal)  # what `rec status` counts
    assert 0 < kept < 8
    # With room again, `rec stop` finishes the recording from the journal.
    assert main(["stop", "--out", str(out)]) == 0
    assert len(load_cassette(out / "full.cassette.json").exchanges) == kept


def test_stop_lets_a_stream_in_flight_finish_and_records_it(
    tmp_path: Path, standin_factory: Any
) -> None:
    api = standin_factory(lambda r: Reply.text("a b c d e f", chunks=6, delay_s=0.5))
    out = tmp_path / "rec"
    process = popen(start_argv(out, "flight", api.url))
    url = printed_url(process)
    body = {"contents": [{"role": "user", "parts": [{"text": "stream"}]}]}
    with httpx.Client(trust_env=False, timeout=120) as client:
        path = "/v1beta/models/m:streamGenerateContent?alt=sse"
        with client.stream(
            "POST", url + path, json=body, headers={"x-goog-api-key": FAKE_API_KEY}
        ) as response:
            events = response.iter_lines()
            assert next(e for e in events if e.startswith("data: "))
            stopper = threading.Thread(target=stop_recorders, args=(out,))
            stopper.start()  # `rec stop` while the stream is still coming
            rest = [e for e in events if e.startswith("data: ")]
    stopper.join(timeout=300)
    assert process.wait(timeout=120) == 0
    assert len(rest) == 5
    [exchange] = load_cassette(out / "flight.cassette.json").exchanges
    assert isinstance(exchange.response.body, SseBody) and exchange.response.body.complete
    assert len(exchange.response.body.events) == 6


def test_stop_leaves_an_in_process_recording_to_its_block(
    tmp_path: Path, api: StandinGemini, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = _recorder(tmp_path, api, "block")
    with recorder.running_in_thread():
        ask(recorder.url, "one")
        # Answered at once, and nobody signalled: reported as not stopped (rec stop exits 1).
        [report] = stop_recorders(tmp_path)
        assert report.stopped_pid is None and "stops when that program ends it" in report.failure
        assert ask(recorder.url, "two").status_code == 200  # still recording
    assert "stops when that program ends it" in caplog.text
    assert len(load_cassette(tmp_path / "block.cassette.json").exchanges) == 2
