"""Nothing rec runs on its event loop blocks it (blockbuster watches the proxy's loop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from blockbuster import blockbuster_ctx
from google import genai

from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from recorder._api import record
from replayer._replay_api import replay

MODEL = "gemini-2.0-flash"


def model(request: StandinRequest) -> Reply | None:
    if request.rpc == "streamGenerateContent":
        return Reply.text("one two three four", chunks=3)
    if request.rpc == "generateContent":
        return Reply.text("hello")
    return None


def test_recording_and_replay_never_block_the_loop(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = standin_factory(model)
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
