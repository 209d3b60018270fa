"""The build worker: the recorder's exchanges built in a process of their own, line for line
what the recorder's own build writes; a worker that dies or is interrupted loses nothing,
and none outlives its recorder."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import recorder._exchange_journal as exchange_journal
from cassettes._cassette import Exchange, load_cassette
from cassettes._redaction import RedactionRules
from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from recorder._build_worker import (
    IN_PROCESS_BYTES,
    ROUND_TRIP_BYTES,
    START_AFTER,
    BuildWorker,
    LineBuild,
    WorkerBuild,
    build_together,
)
from recorder._capture_files import read_journal
from recorder._exchange_build import Received, build_exchange
from recorder._exchange_journal import ExchangeJournal
from recorder._journal import Journal
from recorder._recorder import Recorder
from recorder._recording import finalize_recording
from recorder._recording_state import RecordingPaths
from recorder._traffic import Upstreams
from tests.faults.harness import rec_stop, start_recorder
from tests.journaled import journal_holding, until

MODEL = "/v1beta/models/gemini-2.0-flash:generateContent"
STREAM = "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
LEARNT = "learnt-credential-0123456789"
"""A credential the recorder learnt while recording (a tool's, told by its process)."""
pytestmark = pytest.mark.skipif(os.name != "posix", reason="there is no build worker here")


def _received(**overrides: Any) -> Received:
    fields: dict[str, Any] = {
        "method": "POST",
        "request_headers": {
            "content-type": "application/json",
            "x-goog-api-key": FAKE_API_KEY,
            "user-agent": "google-genai-sdk/1.0 gl-python/3.11",
        },
        "request_body": b'{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}',
        "started_at": "2026-12-06T10:00:00.000000+00:00",
        "url": "https://generativelanguage.googleapis.com" + MODEL,
        "status": 200,
        "headers": {"content-type": "application/json; charset=UTF-8", "content-length": "9"},
        "content_type": "application/json; charset=UTF-8",
        "encoding": None,
        "received": [b'{"candidates":', b'[{"content":{"parts":[{"text":"hello"}]}}]}'],
        "duration_ms": 12.5,
        "raw_events": None,
        "line_ending": "\r\n",
        "tail": None,
        "cut": False,
        "known_secrets": frozenset({FAKE_API_KEY}),
    }
    fields.update(overrides)
    return Received(**fields)


_SHAPES = {
    "unary": _received(),
    "stream": _received(
        url="https://generativelanguage.googleapis.com" + STREAM,
        headers={"content-type": "text/event-stream"},
        content_type="text/event-stream",
        raw_events=[
            ('data: {"candidates":[{"content":{"parts":[{"text":"one "}]}}]}', 3.0),
            ('data: {"candidates":[{"content":{"parts":[{"text":"two"}]}}]}', 7.5),
        ],
        received=[],
    ),
    "cut stream": _received(
        headers={"content-type": "text/event-stream"},
        content_type="text/event-stream",
        raw_events=[('data: {"candidates":[]}', 1.0)],
        received=[],
        cut=True,
    ),
    "cut unary": _received(cut=True),
    "no HTTP status": _received(status=42),
    "gzip bytes": _received(encoding="gzip", received=[b"\x1f\x8b not really gzip"]),
    "learnt credential": _received(
        request_body=b'{"contents":[{"role":"user","parts":[{"text":"%s"}]}]}' % LEARNT.encode(),
        known_secrets=frozenset({FAKE_API_KEY, LEARNT}),
    ),
    "key in the reply": _received(
        received=[b'{"candidates":[{"content":{"parts":[{"text":"AIza%s"}]}}]}' % (b"x" * 35)]
    ),
}


@pytest.fixture
def worker() -> Iterator[BuildWorker]:
    started = BuildWorker(RedactionRules())
    try:
        assert started.wait_ready(timeout=120), "the build worker did not start"
        yield started
    finally:
        started.close()


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_the_worker_writes_the_line_the_recorder_would(worker: BuildWorker, shape: str) -> None:
    got = _SHAPES[shape]
    here = build_exchange(got, 7, RedactionRules())
    there = worker.build(got, 7)
    assert there is not None, "the worker did not build it"
    assert there.data == (here.written.data if here.written is not None else None)
    assert (there.problem, there.level, there.refused) == (here.problem, here.level, here.refused)
    if there.data is not None:
        assert FAKE_API_KEY.encode() not in there.data
        assert LEARNT.encode() not in there.data


def test_a_journal_groups_exchanges_go_to_the_worker_in_one_round_trip(
    worker: BuildWorker,
) -> None:
    """Each round trip costs the journal's writer thread waits for the interpreter lock, so
    a group's exchanges go together; each still gets its own line, as the recorder's own
    build writes it, and a large one is left to the recorder."""
    big = _received(received=[b"x" * (IN_PROCESS_BYTES + 1)])
    exchanges = [*_SHAPES.values(), big]
    builds = [WorkerBuild(worker, got, n, lambda line: line) for n, got in enumerate(exchanges)]
    trips, built = worker.round_trips, worker.built
    build_together([*builds, "a line of another kind"])
    assert worker.round_trips == trips + 1
    assert worker.built == built + len(_SHAPES)
    lines: list[LineBuild | None] = [build() for build in builds]
    assert worker.round_trips == trips + 1  # the answers were there: no trip per build
    assert lines[-1] is None  # too large to send: the recorder builds it
    for n, (got, line) in enumerate(zip(exchanges[:-1], lines[:-1], strict=True)):
        here = build_exchange(got, n, RedactionRules())
        assert line is not None
        assert line.data == (here.written.data if here.written is not None else None)
        assert (line.problem, line.refused) == (here.problem, here.refused)


def test_exchanges_answered_while_a_line_is_held_go_to_the_worker_together(
    worker: BuildWorker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal holds an answered exchange's line a moment (``LINGER_S``, made long
    here), so the exchanges answered meanwhile share one writer group and one round trip
    to the worker (at one client, each costs both processes more than the build); the
    lines keep the order they were answered in, and closing waits for the held ones."""
    monkeypatch.setattr(exchange_journal, "LINGER_S", 3600.0)
    groups: list[int] = []

    def prepare(builds: Sequence[object]) -> None:
        groups.append(len(builds))
        build_together(builds)

    journal = Journal[Exchange](tmp_path / "held.journal.jsonl", prepare=prepare)
    exchanges = ExchangeJournal(journal, build_worker=worker)
    trips = worker.round_trips

    async def answer_three() -> list[int]:
        exchanges.submit(_received(), 0)
        await asyncio.sleep(0.2)  # the writer was free to take a queued line meanwhile
        seen = list(groups)
        exchanges.submit(_received(), 1)
        exchanges.submit(_received(), 2)
        await exchanges.drained()
        return seen

    try:
        assert asyncio.run(answer_three()) == []  # the first line was held, not queued
    finally:
        journal.close()
    assert groups == [3]
    assert worker.round_trips == trips + 1
    assert exchanges.recorded == 3
    assert [e.id for e in read_journal(journal.path).exchanges] == [0, 1, 2]


def test_a_line_the_caller_waits_for_is_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller that wants each exchange (``on_recorded``) has its line queued at once."""
    monkeypatch.setattr(exchange_journal, "LINGER_S", 3600.0)
    journal = Journal[Exchange](tmp_path / "waited.journal.jsonl")
    seen: list[Exchange] = []
    exchanges = ExchangeJournal(journal, on_recorded=seen.append)

    async def answer() -> None:
        await asyncio.wait_for(exchanges.submit(_received(), 0), 120)

    try:
        asyncio.run(answer())
    finally:
        journal.close()
    assert [e.id for e in seen] == [0]


def test_a_group_larger_than_a_round_trip_holds_goes_in_several(worker: BuildWorker) -> None:
    body = b'{"text": "' + b"y" * (IN_PROCESS_BYTES * 9 // 10) + b'"}'
    assert 4 * len(body) < ROUND_TRIP_BYTES < 5 * len(body)
    exchanges = [_received(received=[body], headers={}) for _ in range(5)]
    trips = worker.round_trips
    answers = worker.build_all([(got, n) for n, got in enumerate(exchanges)])
    assert worker.round_trips == trips + 2  # four of them fit in one
    here = build_exchange(exchanges[0], 0, RedactionRules()).written
    assert here is not None
    assert [a.data if a is not None else None for a in answers] == [
        here.data.replace(b'"id":0', b'"id":%d' % n) for n in range(5)
    ]


def test_a_recorder_package_in_the_users_folder_does_not_replace_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker imports rec's own packages and its dependencies even where the current
    folder holds packages of the same names (a user's project with a ``recorder``
    package), as the ``rec`` command does: the current folder is not on its path."""
    for name in ("recorder", "pydantic"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise SystemExit('the user {name}')\n")
    monkeypatch.chdir(tmp_path)
    started = BuildWorker(RedactionRules())
    try:
        assert started.wait_ready(timeout=120), "the build worker did not start"
        assert started.build(_received(), 1) is not None
    finally:
        started.close()


def test_the_shapes_reach_every_verdict() -> None:
    """The cases above are worth comparing: they write lines, refuse, and skip with a reason."""
    built = [build_exchange(got, 1, RedactionRules()) for got in _SHAPES.values()]
    assert any(b.written is not None for b in built)
    assert any(b.refused for b in built)
    assert {b.level for b in built if b.problem is not None} == {logging.ERROR, logging.WARNING}


def test_a_short_recording_never_starts_a_worker(tmp_path: Path, standin_factory: Any) -> None:
    api = standin_factory(echo)
    recorder = Recorder(tmp_path, name="short", upstreams=Upstreams(gemini=api.url))
    with recorder.running_in_thread():
        worker = recorder._running().forwarder.journal.build_worker
        assert worker is not None
        for n in range(START_AFTER):
            _ask(recorder.url, f"turn {n}")
        journal_holding(RecordingPaths(tmp_path, "short").journal, START_AFTER)
        assert worker.pid is None
        _ask(recorder.url, "one more")  # the recording goes on: now it starts
        until(lambda: worker.pid is not None)
    assert worker.built == 0  # that one was built before the worker was ready


def test_a_large_exchange_is_built_in_the_recorders_process(worker: BuildWorker) -> None:
    big = _received(received=[b'{"text":"' + b"a" * IN_PROCESS_BYTES + b'"}'])
    assert worker.build(big, 1) is None
    assert worker.build(_received(), 2) is not None
    assert worker.built == 1


def echo(request: StandinRequest) -> Reply | None:
    return Reply.text(f"echo {request.body['contents'][0]['parts'][0]['text']}")


def _ask(url: str, text: str) -> None:
    with httpx.Client(trust_env=False, timeout=120) as client:
        response = client.post(
            url + MODEL,
            json={"contents": [{"role": "user", "parts": [{"text": text}]}]},
            headers={"x-goog-api-key": FAKE_API_KEY},
        )
    assert response.status_code == 200, response.text


@contextmanager
def _recording(folder: Path, name: str, upstream: str) -> Iterator[tuple[str, BuildWorker, int]]:
    """A recorder in this process whose worker builds from the first exchange on: its URL,
    the worker and the worker's pid."""
    recorder = Recorder(folder, name=name, upstreams=Upstreams(gemini=upstream))
    with recorder.running_in_thread():
        worker = recorder._running().forwarder.journal.build_worker
        assert worker is not None and worker.wait_ready(timeout=120)
        assert worker.pid is not None
        yield recorder.url, worker, worker.pid


def test_a_recording_keeps_every_exchange_when_its_worker_dies(
    tmp_path: Path, standin_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    api = standin_factory(echo)
    with _recording(tmp_path, "dies", api.url) as (url, worker, pid):
        for n in range(3):
            _ask(url, f"before {n}")
        until(lambda: worker.built == 3)
        os.kill(pid, signal.SIGKILL)
        for n in range(3):
            _ask(url, f"after {n}")
    assert worker.built == 3
    assert "build worker is not available" in caplog.text
    texts = [
        e.request.body.value["contents"][0]["parts"][0]["text"]  # type: ignore[union-attr]
        for e in load_cassette(tmp_path / "dies.cassette.json").exchanges
    ]
    assert texts == [f"before {n}" for n in range(3)] + [f"after {n}" for n in range(3)]
    with pytest.raises(ProcessLookupError):  # reaped, not left a zombie
        os.kill(pid, 0)


def test_no_worker_outlives_its_recorder(tmp_path: Path, standin_factory: Any) -> None:
    api = standin_factory(echo)
    with _recording(tmp_path, "ends", api.url) as (url, worker, pid):
        _ask(url, "one")
    assert worker.built == 1
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _group_gone(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


def test_ctrl_c_to_the_process_group_keeps_every_exchange(
    tmp_path: Path, standin_factory: Any
) -> None:
    """Ctrl-C reaches the recorder and its worker at once: the worker keeps building until
    the recorder has written every exchange, and both are gone afterwards."""
    api = standin_factory(echo)
    out = tmp_path / "rec"
    process, url = start_recorder(out, "group", api.url, start_new_session=True)
    turns = 4
    try:
        for n in range(turns):
            _ask(url, f"turn {n}")
        if Path("/proc/self/stat").exists():
            until(lambda: len(_children(process.pid)) == 1)
        os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr
    finally:
        if process.poll() is None:
            process.kill()
    texts = [
        e.request.body.value["contents"][0]["parts"][0]["text"]  # type: ignore[union-attr]
        for e in load_cassette(out / "group.cassette.json").exchanges
    ]
    assert texts == [f"turn {n}" for n in range(turns)]
    until(lambda: _group_gone(process.pid))


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _ended(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # a zombie has exited (its new parent reaps it)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_killed_recorders_worker_exits(tmp_path: Path, standin_factory: Any) -> None:
    api = standin_factory(echo)
    out = tmp_path / "rec"
    process, url = start_recorder(out, "killed", api.url)
    _ask(url, "one")  # rec start starts its worker with the recording, not after 16
    journal_holding(RecordingPaths(out, "killed").journal, 1)  # not a line on its way
    until(lambda: len(_children(process.pid)) == 1)
    [worker] = _children(process.pid)
    process.kill()
    process.wait(timeout=120)
    until(lambda: _ended(worker))
    stopped = rec_stop(out)  # the journal is recovered as ever
    assert stopped.returncode == 0, stopped.stderr
    assert len(load_cassette(out / "killed.cassette.json").exchanges) == 1


def _files(folder: Path) -> dict[str, bytes]:
    """Every file finalisation leaves in ``folder`` (lock files aside), by relative path."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def test_a_recording_with_a_worker_writes_what_finalisation_in_one_process_writes(
    tmp_path: Path, standin_factory: Any
) -> None:
    """The worker builds exchange lines only: the recorder's finalisation is the one writer
    of the files, byte for byte those of finalising the same journal in one process."""
    api = standin_factory(echo)
    turns = 12
    padding = "lorem ipsum " * 800  # ~10 KB a request
    folder = tmp_path / "worker"
    with _recording(folder, "big", api.url) as (url, worker, _):
        for n in range(turns):
            _ask(url, f"turn {n} {padding}")
        journal = journal_holding(RecordingPaths(folder, "big").journal, turns)
        assert worker.built > 0
    alone = RecordingPaths(tmp_path / "alone", "big")
    alone.journal.parent.mkdir(parents=True)
    alone.journal.write_bytes(journal)
    upstream = load_cassette(folder / "big.cassette.json").upstream
    finalize_recording(alone, upstream=upstream)
    written, expected = _files(folder), _files(alone.out_dir)
    assert set(written) == {
        "big.cassette.json",
        "big.evalset.json",
        "test_config.json",
        ".rec/big.cassette.json.idx",
    }
    assert written == expected


def test_a_stopped_worker_is_given_up_and_the_recording_goes_on(
    tmp_path: Path, standin_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 39: a worker that is alive but does not answer (SIGSTOP) does not wedge the
    recording: the recorder gives up on it (bounded), kills it, and builds every later
    exchange itself; nothing is lost."""
    api = standin_factory(echo)
    stopped: list[int] = []
    try:
        with _recording(tmp_path, "stopped", api.url) as (url, worker, pid):
            _ask(url, "before")
            until(lambda: worker.built == 1)
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)
            for n in range(3):
                _ask(url, f"after {n}")
    finally:
        for left in stopped:  # never left stopped, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.kill(left, signal.SIGCONT)
    assert "build worker is not available" in caplog.text and "stopped" in caplog.text
    texts = [
        e.request.body.value["contents"][0]["parts"][0]["text"]  # type: ignore[union-attr]
        for e in load_cassette(tmp_path / "stopped.cassette.json").exchanges
    ]
    assert texts == ["before"] + [f"after {n}" for n in range(3)]
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(pid, 0)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_rec_stop_finishes_a_recording_whose_worker_is_stopped(
    tmp_path: Path, standin_factory: Any
) -> None:
    """Issue 39: `rec start`'s worker stopped (SIGSTOP) while the agent still talks: `rec
    stop` ends the recording, whole, and neither process is left behind."""
    api = standin_factory(echo)
    out = tmp_path / "rec"
    process, url = start_recorder(out, "frozen", api.url)
    try:
        _ask(url, "one")
        journal_holding(RecordingPaths(out, "frozen").journal, 1)
        until(lambda: len(_children(process.pid)) == 1)
        [worker] = _children(process.pid)
        os.kill(worker, signal.SIGSTOP)
        _ask(url, "two")
        stopped = rec_stop(out)
        assert stopped.returncode == 0, stopped.stderr
        process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    texts = [
        e.request.body.value["contents"][0]["parts"][0]["text"]  # type: ignore[union-attr]
        for e in load_cassette(out / "frozen.cassette.json").exchanges
    ]
    assert texts == ["one", "two"]
    until(lambda: _ended(worker))


@pytest.mark.parametrize("module", ["recorder._forwarding", "recorder._build_worker"])
def test_the_road_to_the_journal_loads_no_finalisation_code(module: str) -> None:
    """The forwarder and the build worker only hand exchanges on and build them: neither
    loads what finalises a recording (the cassette has one writer, at the end)."""
    root = Path(__file__).resolve().parents[2]
    check = (
        f"import sys; import {module}; "
        "print(sorted(m for m in ('recorder._recording', 'cassettes._extraction', "
        "'recorder._importers') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", check],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert done.stdout.strip() == "[]", done.stdout
