"""An exchange is journaled behind its response: the connection's next request does not
wait for the line, closing the recorder waits for every line, and a writer that falls
behind makes responses wait again (the backlog a SIGKILL could cost stays bounded)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import recorder._exchange_journal as exchange_journal
from cassettes._cassette import Exchange
from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from recorder._capture_files import read_journal
from recorder._exchange_journal import ExchangeJournal
from recorder._forwarding import Forwarder
from recorder._journal import Journal
from recorder._recorder import RecordHandler
from recorder._traffic import ProxyServer, Upstreams
from tests.journaled import until

MODEL = "/v1beta/models/gemini-2.0-flash:generateContent"
HEADERS = {"x-goog-api-key": FAKE_API_KEY}


def echo(request: StandinRequest) -> Reply | None:
    return Reply.text(f"echo {request.body['contents'][0]['parts'][0]['text']}")


def _body(text: str) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": text}]}]}


@contextmanager
def _gated_recorder(
    tmp_path: Path, upstream: str
) -> Iterator[tuple[str, threading.Event, Forwarder, Journal[Exchange]]]:
    """A recording proxy whose journal takes no line until the gate opens."""
    gate = threading.Event()
    # The writer thread waits at the gate before it builds each group of lines.
    journal = Journal[Exchange](
        tmp_path / "behind.journal.jsonl", prepare=lambda builds: gate.wait()
    )
    forwarder = Forwarder(ExchangeJournal(journal), upstreams=Upstreams(gemini=upstream))
    server = ProxyServer(RecordHandler(forwarder))
    try:
        with server.running_in_thread() as running:
            try:
                yield running.url, gate, forwarder, journal
            finally:
                gate.set()  # closing waits for the lines: they must be able to go
    finally:
        journal.close()


def test_the_next_request_on_a_connection_does_not_wait_for_the_last_ones_line(
    tmp_path: Path, standin_factory: Any
) -> None:
    api = standin_factory(echo)
    with _gated_recorder(tmp_path, api.url) as (url, gate, forwarder, journal):
        with httpx.Client(trust_env=False, timeout=120) as client:  # one keep-alive connection
            texts = [
                client.post(url + MODEL, json=_body(f"q{n}"), headers=HEADERS).text
                for n in range(3)
            ]
        assert all(f"echo q{n}" in text for n, text in enumerate(texts))
        # Every response ended while no line could be written.
        assert not gate.is_set()
        assert read_journal(journal.path).exchanges == []
        assert forwarder.journal.recorded == 0
    # Closing the proxy waited for the three lines.
    exchanges = read_journal(journal.path).exchanges
    assert [e.id for e in exchanges] == [0, 1, 2]
    assert forwarder.journal.recorded == 3 and forwarder.journal.lost == 0


def test_a_response_waits_for_its_line_once_the_writer_is_that_far_behind(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(exchange_journal, "JOURNAL_BEHIND", 1)
    api = standin_factory(echo)
    events: list[str] = []
    with _gated_recorder(tmp_path, api.url) as (url, gate, forwarder, journal):
        with httpx.Client(trust_env=False, timeout=120) as client:
            assert (
                "echo first" in client.post(url + MODEL, json=_body("first"), headers=HEADERS).text
            )

            def second() -> None:
                client.post(url + MODEL, json=_body("second"), headers=HEADERS)
                events.append("second answered")

            thread = threading.Thread(target=second)
            thread.start()
            until(lambda: len(api.requests) == 2)  # the second reached the upstream
            thread.join(0.5)  # it would end here, were it not held (not a timing assert)
            events.append("gate opened")
            gate.set()
            thread.join(60)
    assert events == ["gate opened", "second answered"]
    assert [e.id for e in read_journal(journal.path).exchanges] == [0, 1]
