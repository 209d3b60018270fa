"""Recovery attempts racing a live recording, and each other: nothing is taken from a live
recorder, nothing is recovered twice."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import load_cassette
from recorder._control import recorder_statuses, stop_recorders
from recorder._recorder import Recorder
from recorder._recording import recover_stale
from recorder._traffic import Upstreams
from tests.journaled import lost_to_a_kill
from tests.rec_process import rec_argv, rec_environment

from .harness import Traffic, client_and_turn, echo, prompts_in, rec_stop, start_recorder

pytestmark = pytest.mark.faults


def _recording_with_traffic(
    tmp_path: Path, standin_factory: Any, name: str
) -> tuple[Any, Path, subprocess.Popen[str], Traffic]:
    """A `rec start` recording NAME in a child, with clients sending it echo traffic."""
    api = standin_factory(echo)
    out = tmp_path / "rec"
    process, url = start_recorder(out, name, api.url)
    return api, out, process, Traffic(url, prefix=name).start()


def test_recoveries_and_other_recorders_during_a_recording_take_nothing(
    tmp_path: Path, standin_factory: Any, fault_rng: random.Random
) -> None:
    api, out, process, traffic = _recording_with_traffic(tmp_path, standin_factory, "live")
    stop = threading.Event()
    errors: list[BaseException] = []

    def hammer(kind: int) -> None:
        n = 0
        while not stop.is_set():
            try:
                if kind == 0:
                    recover_stale(out)
                elif kind == 1:
                    assert any(s.running for s in recorder_statuses(out))
                else:  # another recorder starting (and recovering) on the same folder
                    other = Recorder(out, name=f"other{n}", upstreams=Upstreams(gemini=api.url))
                    with other.running_in_thread():
                        pass
                n += 1
            except BaseException as exc:  # reported below
                errors.append(exc)
                return
            time.sleep(fault_rng.uniform(0.0, 0.05))

    hammers = [threading.Thread(target=hammer, args=(k,), daemon=True) for k in (0, 1, 2)]
    for thread in hammers:
        thread.start()
    traffic.wait_for(10 + fault_rng.randrange(10))
    stop.set()
    for thread in hammers:
        thread.join(timeout=120)
    traffic.stop()
    stopped = rec_stop(out)
    assert stopped.returncode == 0, stopped.stderr
    assert process.wait(timeout=120) == 0
    assert errors == []
    recorded = prompts_in(load_cassette(out / "live.cassette.json"))
    assert traffic.completed <= set(recorded)
    assert len(recorded) == len(set(recorded))


def test_concurrent_stops_recover_a_dead_recorder_once(
    tmp_path: Path, standin_factory: Any, fault_rng: random.Random
) -> None:
    _, out, process, traffic = _recording_with_traffic(tmp_path, standin_factory, "dead")
    traffic.wait_for(3 + fault_rng.randrange(5))
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    traffic.stop()
    stops = [
        subprocess.Popen(
            rec_argv("stop", "--out", str(out)),
            env=rec_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=300) for p in stops]
    recovered = [err for _, err in outputs if "recovered" in err]
    assert len(recovered) == 1, outputs
    assert all(p.returncode in (0, 2) for p in stops), outputs  # 2: nothing left to recover
    recorded = prompts_in(load_cassette(out / "dead.cassette.json"))
    lost_to_a_kill(traffic.completed, recorded, client_of=client_and_turn)
    assert len(recorded) == len(set(recorded))
    assert stop_recorders.__name__  # the in-process API agrees: nothing left
    with pytest.raises(Exception, match="nothing to recover"):
        stop_recorders(out)
