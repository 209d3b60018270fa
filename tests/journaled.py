"""Waiting for a running recorder's journal: each exchange's line is written right behind
its response (the connection does not wait for it), so a test that reads the journal of a
recorder still running waits for the lines it expects first."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

from recorder._capture_files import read_journal
from recorder._exchange_journal import JOURNAL_BEHIND


def journal_holding(path: Path, exchanges: int, *, timeout: float = 60) -> bytes:
    """The journal's bytes once it holds ``exchanges`` exchanges (a generous bound for a
    loaded machine, not a timing test: the lines normally follow within milliseconds).

    Raises:
        AssertionError: the journal did not reach that many within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        held = len(read_journal(path).exchanges) if path.exists() else 0
        if held >= exchanges:
            return path.read_bytes()  # append-only: read later, it holds at least as many
        assert time.monotonic() < deadline, f"{path} holds {held} exchange(s), not {exchanges}"
        time.sleep(0.01)


def until(condition: Callable[[], bool], *, timeout: float = 60) -> None:
    """Wait for ``condition`` (a generous bound for a loaded machine, not a timing test)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"the condition did not hold within {timeout} s"
        time.sleep(0.01)


def lost_to_a_kill(
    completed: Iterable[str],
    recorded: Iterable[str],
    *,
    client_of: Callable[[str], tuple[str, int]],
) -> list[str]:
    """The exchanges a SIGKILLed recorder lost although their clients had them in full,
    checked against its promise: only lines still on their way behind their responses are
    lost, at most ``JOURNAL_BEHIND`` of them, and for each client only its last ones (a
    client never keeps an exchange without those answered before it on its connection).

    ``client_of`` names a prompt's client and its position in that client's sequence.
    """
    kept = set(recorded)
    lost = sorted(p for p in completed if p not in kept)
    assert len(lost) <= JOURNAL_BEHIND, f"{len(lost)} completed exchanges lost: {lost[:5]}"
    last_kept: dict[str, int] = {}
    for prompt in completed:
        if prompt in kept:
            client, position = client_of(prompt)
            last_kept[client] = max(last_kept.get(client, -1), position)
    for prompt in lost:
        client, position = client_of(prompt)
        assert position > last_kept.get(client, -1), (
            f"{prompt!r} was lost although a later exchange of its client was kept"
        )
    return lost
