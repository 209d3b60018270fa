"""SIGKILL the recorder at random moments, during traffic and during finalisation: every
exchange a client received in full is in the recording afterwards but for the lines still
on their way behind the last responses (each client's last ones, a bounded few), and
nothing is corrupt.

Each run draws new moments; the seed is printed (REC_FAULT_SEED=N replays a run).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import load_cassette
from cassettes._evalset import load_evalset
from recorder._recording import recover_stale
from tests.journaled import lost_to_a_kill
from tests.rec_process import rec_argv, rec_environment

from .harness import Traffic, client_and_turn, echo, prompts_in, start_recorder

pytestmark = pytest.mark.faults

TRIALS = 20


def test_sigkill_during_traffic_and_finalisation_loses_only_the_last_lines(
    tmp_path: Path, standin_factory: Any, fault_rng: random.Random
) -> None:
    api = standin_factory(echo)
    out = tmp_path / "rec"
    completed: dict[str, set[str]] = {}
    phases = {"traffic": 0, "finalisation": 0}
    for trial in range(TRIALS):
        name = f"kill{trial}"
        # Each start also recovers the previous trial's killed recorder (another name).
        process, url = start_recorder(out, name, api.url)
        traffic = Traffic(url, prefix=f"t{trial}").start()
        traffic.wait_for(1 + fault_rng.randrange(4))  # however loaded the machine is
        time.sleep(fault_rng.uniform(0.0, 0.3))
        if trial % 2 == 0:
            phase = "traffic"
        else:  # ask it to finish, then kill it somewhere in finalisation (or just after)
            phase = "finalisation"
            traffic.stop()
            process.send_signal(signal.SIGTERM)
            time.sleep(fault_rng.uniform(0.0, 0.25))
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
        traffic.stop()
        phases[phase] += 1
        completed[name] = traffic.completed
    recover_stale(out)  # the last one, if it was killed

    total = sum(len(c) for c in completed.values())
    print(f"{TRIALS} SIGKILLs ({phases}): {total} client-completed exchanges, checked below")
    lost = 0
    assert phases == {"traffic": TRIALS // 2, "finalisation": TRIALS // 2}
    assert sum(len(c) for c in completed.values()) >= TRIALS, "too little traffic to judge"
    for name, prompts in completed.items():
        cassette_path = out / f"{name}.cassette.json"
        if not cassette_path.exists():  # killed before any line was written
            lost += len(lost_to_a_kill(prompts, [], client_of=client_and_turn))
            continue
        cassette = load_cassette(cassette_path)
        recorded = prompts_in(cassette)
        lost += len(lost_to_a_kill(prompts, recorded, client_of=client_and_turn))
        assert len(recorded) == len(set(recorded)), f"{name}: an exchange was recorded twice"
        ids = [e.id for e in cassette.exchanges]
        assert ids == sorted(set(ids)), f"{name}: ids {ids}"
        if (out / f"{name}.evalset.json").exists():
            load_evalset(out / f"{name}.evalset.json")
    print(f"lost behind their responses: {lost} of {total}")
    leftovers = sorted(
        p.name
        for p in (out / ".rec").iterdir()
        if p.name.endswith((".journal.jsonl", ".state.json"))
    )
    assert leftovers == []


def test_rerun_of_a_killed_recording_never_overwrites_it(
    tmp_path: Path, standin_factory: Any
) -> None:
    """Re-running `rec start --name s` after a SIGKILL (from shell history) recovers the
    dead recording and refuses to replace it; `--mode auto` adds to it, `--overwrite`
    replaces it. The same holds for a recording that finished cleanly."""
    api = standin_factory(echo)
    out = tmp_path / "rec"
    process, url = start_recorder(out, "s", api.url)
    traffic = Traffic(url, prefix="first").start()
    traffic.wait_for(5)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    traffic.stop()
    assert len(traffic.completed) >= 5

    rerun = subprocess.run(
        rec_argv("start", "--out", str(out), "--name", "s", "--upstream", api.url, "--quiet"),
        env=rec_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rerun.returncode == 2, rerun.stderr
    assert "already holds data (recovered just now" in rerun.stderr
    assert "--overwrite" in rerun.stderr
    assert len(rerun.stderr.strip().splitlines()) <= 3, rerun.stderr
    recovered = prompts_in(load_cassette(out / "s.cassette.json"))
    lost_to_a_kill(traffic.completed, recovered, client_of=client_and_turn)

    # Finished recordings are refused the same way; auto mode adds to them.
    process, url = start_recorder(out, "s", api.url, extra=("--mode", "auto"))
    more = Traffic(url, prefix="second", clients=1).start()
    more.wait_for(2)
    more.stop()
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    after = prompts_in(load_cassette(out / "s.cassette.json"))
    assert set(recovered) | more.completed <= set(after)
    refused = subprocess.run(
        rec_argv("start", "--out", str(out), "--name", "s", "--upstream", api.url),
        env=rec_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and "already holds data (finished)" in refused.stderr

    process, url = start_recorder(out, "s", api.url, extra=("--overwrite",))
    fresh = Traffic(url, prefix="third", clients=1).start()
    fresh.wait_for(1)
    fresh.stop()
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    replaced = set(prompts_in(load_cassette(out / "s.cassette.json")))
    assert fresh.completed <= replaced and not (traffic.completed & replaced)
