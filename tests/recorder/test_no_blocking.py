"""Nothing rec runs on its event loop blocks it (blockbuster watches the proxy's loop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from blockbuster import blockbuster_ctx
from google import genai

from rec.standin.replies import FAKE_API_KEY
from recorder._api import record
from recorder._recording_state import read_state
from recorder._traffic import CONTROL_TOKEN_HEADER
from replayer._replay_api import replay
from tests.factories import hello_model
from tests.journaled import until

MODEL = "gemini-2.0-flash"


def test_recording_and_replay_never_block_the_loop(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = standin_factory(hello_model)
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    # Only rec's own frames are judged: a blocking call made by rec code while it runs on an
    # event loop (journal writes, cassette reads, redaction) raises BlockingError in the
    # proxy, which the client would see as a failed request.
    with blockbuster_ctx(scanned_modules=["cassettes", "recorder", "replayer"]):
        with record(tmp_path, name="loop", upstream=api.url) as rec:
            client = genai.Client()
            unary = client.models.generate_content(model=MODEL, contents="hi").text
            chunks = [
                c.text for c in client.models.generate_content_stream(model=MODEL, contents="go")
            ]
        assert rec.result is not None and rec.result.new_exchanges == 2
        with replay(tmp_path / "loop.cassette.json") as replaying:
            client = genai.Client()
            assert client.models.generate_content(model=MODEL, contents="hi").text == unary
            assert [
                c.text for c in client.models.generate_content_stream(model=MODEL, contents="go")
            ] == chunks
    assert replaying.misses == []


def _status(url: str, token: str) -> dict[str, Any]:
    with httpx.Client(trust_env=False, timeout=60) as client:
        response = client.get(f"{url}/__rec__/status", headers={CONTROL_TOKEN_HEADER: token})
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


def test_the_proxy_answers_while_the_journal_is_held(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the journal's fsync held, model calls complete and their lines are written (a
    line never waits for the disk); with its writer held, calls complete all the same while
    their lines wait (a response never waits for its line); released, everything is on disk."""
    api = standin_factory(hello_model)
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with record(tmp_path, name="held", upstream=api.url) as rec:
        journal = rec._running().journal
        state = read_state(rec.paths.state)
        assert state is not None and state.control_token
        client = genai.Client()
        with journal._sync_lock:
            assert client.models.generate_content(model=MODEL, contents="a").text == "hello"
            assert client.models.generate_content(model=MODEL, contents="b").text == "hello"
            until(lambda: journal.count == 2)
            assert journal.commits == 0
        with journal._lock:
            assert client.models.generate_content(model=MODEL, contents="c").text == "hello"
            until(lambda: bool(journal._queue))  # the call's line waits for the held writer
            assert journal.count == 2
            assert _status(rec.url, state.control_token)["in_flight"] == 0
        until(lambda: journal.count == 3)
    assert rec.result is not None and rec.result.new_exchanges == 3
