"""The journal commits in groups, and what a client saw complete survives a SIGKILL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import load_cassette
from rec.standin.replies import FAKE_API_KEY
from recorder._capture_files import read_journal
from recorder._journal import Journal
from tests.factories import echo_model, make_exchange
from tests.journaled import lost_to_a_kill
from tests.rec_process import rec_argv as _rec
from tests.rec_process import rec_environment as _env


def test_appends_that_wait_together_share_one_fsync(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl")

    async def main() -> None:
        # Hold the writer while 40 appends arrive, as a slow fsync would: they form one group.
        journal._lock.acquire()
        appends = asyncio.gather(*(journal.append(make_exchange(i)) for i in range(40)))
        await asyncio.sleep(0.2)
        assert not appends.done() and journal.count == 0  # nothing counts before it is on disk
        journal._lock.release()
        await appends

    asyncio.run(main())
    journal.close()
    assert journal.count == 40
    assert journal.commits <= 2
    assert [e.id for e in read_journal(journal.path).exchanges] == list(range(40))


def test_a_lone_append_is_in_the_file_when_it_returns_and_durable_once_closed(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path / "j.jsonl")

    async def main() -> None:
        for i in range(3):
            await journal.append(make_exchange(i))
            assert journal.count == i + 1  # written: a SIGKILL of rec keeps it
            assert len(read_journal(journal.path).exchanges) == i + 1

    asyncio.run(main())
    journal.close()
    assert journal.synced == 3 and 1 <= journal.commits <= 3


def test_appends_never_wait_for_the_fsync_and_one_fsync_covers_them_all(tmp_path: Path) -> None:
    """Group commit: with the syncer held inside its fsync round, 30 appends return one
    after the other (written, not yet durable); once it goes on, far fewer fsyncs than
    lines make every one durable, and closing leaves nothing pending."""
    journal = Journal(tmp_path / "j.jsonl")

    async def main() -> None:
        for i in range(30):  # a generous bound: a journal that waits would hang here
            await asyncio.wait_for(journal.append(make_exchange(i)), timeout=60)
        assert journal.count == 30 and journal.synced == 0 and journal.commits == 0

    with journal._sync_lock:
        asyncio.run(main())
    journal.close()
    assert journal.synced == 30 and journal.commits == 1
    assert [e.id for e in read_journal(journal.path).exchanges] == list(range(30))


def test_exchanges_built_on_the_writer_thread_share_the_group_and_fail_alone(
    tmp_path: Path,
) -> None:
    """The recorder hands the journal a function that builds the exchange: it runs on the
    writer thread, a build that declines writes nothing and one that raises fails alone."""
    import threading

    journal = Journal(tmp_path / "j.jsonl")
    threads: set[str] = set()

    def build(i: int) -> Any:
        def make() -> Any:
            threads.add(threading.current_thread().name)
            if i == 3:
                raise ValueError("a bug while building #3")
            return None if i == 5 else make_exchange(i)

        return make

    async def main() -> list[Any]:
        journal._lock.acquire()
        appends = asyncio.gather(
            *(journal.append_built(build(i)) for i in range(10)), return_exceptions=True
        )
        await asyncio.sleep(0.2)
        assert not appends.done() and journal.count == 0
        journal._lock.release()
        return await appends

    results = asyncio.run(main())
    journal.close()
    assert isinstance(results[3], ValueError) and results[5] is None
    assert [r.id for r in results if r is not None and not isinstance(r, Exception)] == [
        0,
        1,
        2,
        4,
        6,
        7,
        8,
        9,
    ]
    assert threading.current_thread().name not in threads and len(threads) == 1
    assert journal.commits <= 2
    assert [e.id for e in read_journal(journal.path).exchanges] == [0, 1, 2, 4, 6, 7, 8, 9]


CLIENTS = textwrap.dedent(
    """
    import sys, threading
    from google import genai
    log = open(sys.argv[1], "a", buffering=1)
    lock = threading.Lock()

    def run(worker):
        client = genai.Client()
        for i in range(10_000):
            text = f"client {worker} call {i}"
            client.models.generate_content(model="gemini-2.0-flash", contents=text)
            with lock:
                log.write(text + "\\n")  # the client saw this exchange complete

    threads = [threading.Thread(target=run, args=(w,)) for w in range(int(sys.argv[2]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    """
)


def _client_and_call(text: str) -> tuple[str, int]:
    """``client W call I`` -> (W, I)."""
    _, worker, _, call = text.split()
    return worker, int(call)


@pytest.mark.slow
@pytest.mark.parametrize("preparing", ["works", "raises"])
def test_a_groups_builds_are_prepared_together_and_each_still_makes_its_line(
    tmp_path: Path, preparing: str
) -> None:
    """``prepare`` sees a group's builds before the first is made (the recorder asks its
    build worker for all of them in one round trip); the lines are the builds' own, in
    order, whatever it did."""
    prepared: list[list[object]] = []

    def prepare(builds: Any) -> None:
        prepared.append(list(builds))
        if preparing == "raises":
            raise RuntimeError("a bug while preparing")

    journal = Journal(tmp_path / "j.jsonl", prepare=prepare)
    builds = [lambda i=i: make_exchange(i) for i in range(10)]

    async def main() -> None:
        journal._lock.acquire()
        appends = asyncio.gather(*(journal.append_built(build) for build in builds))
        await asyncio.sleep(0.2)
        journal._lock.release()
        await appends

    asyncio.run(main())
    journal.close()
    assert [b for group in prepared for b in group] == builds
    assert len(prepared) == journal.commits <= 2
    assert [e.id for e in read_journal(journal.path).exchanges] == list(range(10))


def test_sigkill_under_concurrent_clients_loses_only_each_clients_last_lines(
    tmp_path: Path, standin_factory: Any
) -> None:
    api = standin_factory(echo_model)
    out, seen, script = tmp_path / "rec", tmp_path / "seen.txt", tmp_path / "clients.py"
    script.write_text(CLIENTS)
    recorder = subprocess.Popen(
        _rec("start", "--out", str(out), "--name", "busy", "--upstream", api.url, "--")
        + [sys.executable, str(script), str(seen), "8"],
        env=_env(GOOGLE_API_KEY=FAKE_API_KEY),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if seen.exists() and seen.read_text().count("\n") >= 40:
            break
        time.sleep(0.05)
    else:
        os.killpg(recorder.pid, signal.SIGKILL)
        pytest.fail("the clients never completed 40 exchanges through the recorder")
    os.kill(recorder.pid, signal.SIGKILL)  # mid-flight: other exchanges are in progress
    recorder.wait(timeout=60)
    os.killpg(recorder.pid, signal.SIGKILL)  # the clients too
    completed = set(seen.read_text().splitlines())

    stop = subprocess.run(
        _rec("stop", "--out", str(out)), env=_env(), capture_output=True, text=True, timeout=300
    )
    assert stop.returncode == 0, stop.stderr
    recorded = {
        e.request.body.value["contents"][-1]["parts"][0]["text"]  # type: ignore[union-attr]
        for e in load_cassette(out / "busy.cassette.json").exchanges
    }
    assert len(completed) >= 40
    # Only the lines still on their way behind their responses may be lost: a client's last.
    lost_to_a_kill(completed, recorded, client_of=_client_and_call)
