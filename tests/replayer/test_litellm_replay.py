"""An ADK agent on ``LiteLlm("openai/…")`` recorded through rec replays with no key, offline.

The agent talks OpenAI chat completions to ``OPENAI_BASE_URL`` (the stand-in's ``/v1``)
through the real litellm and openai packages. ``rec.record`` points it at the recording
proxy's OpenAI mount and forwards to that base URL; ``rec replay`` then runs it with no
``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` naming a listener that counts connections, and
sockets beyond loopback refused: every case passes and the listener sees none.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cassettes._cassette import SseBody, load_cassette
from cassettes._evalset import invocation_tool_calls, load_evalset
from rec.cli import cli
from tests.agents.litellm_recording import FAKE_OPENAI_KEY, LITELLM_AGENT, record_litellm

CONVERSATIONS = (("What's the weather in Rome?", "And in Tokyo?"), ("Weather in Paris?",))


class ConnectionCounter:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts (and closes them)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.connections = 0
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def unary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("litellm-unary")
    record_litellm(folder, CONVERSATIONS)
    return folder


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from google.adk.agents.run_config import RunConfig, StreamingMode

    folder = tmp_path_factory.mktemp("litellm-streamed")
    record_litellm(folder, CONVERSATIONS, run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    return folder


@pytest.fixture
def offline(loopback_only: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[ConnectionCounter]:
    """No OpenAI key; OPENAI_BASE_URL names a listener that must see no connection."""
    counter = ConnectionCounter()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", counter.url)
    yield counter
    counter.close()


def _replay(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["replay", *args], catch_exceptions=False)
    return result.exit_code, result.output


def _files(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("recording", ["unary", "streamed"])
def test_calls_are_model_exchanges_on_the_configured_upstream(
    recording: str, request: pytest.FixtureRequest
) -> None:
    folder: Path = request.getfixturevalue(recording)
    exchanges = load_cassette(folder / "weather.cassette.json").exchanges
    assert len(exchanges) == 6  # per turn: the tool call, then the answer
    for exchange in exchanges:
        assert exchange.origin is None
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1/chat/completions", exchange.request.url)
        streamed = isinstance(exchange.response.body, SseBody)
        assert streamed == (recording == "streamed")
    if recording == "streamed":
        body = exchanges[0].response.body
        assert isinstance(body, SseBody)
        assert body.events[-1].lines == ["data: [DONE]"]


@pytest.mark.parametrize("recording", ["unary", "streamed"])
def test_no_key_reaches_a_file(recording: str, request: pytest.FixtureRequest) -> None:
    folder: Path = request.getfixturevalue(recording)
    text = _files(folder)
    assert FAKE_OPENAI_KEY not in text
    assert not re.search(r"sk-[0-9A-Za-z_-]{20,}", text)
    assert "authorization" not in json.dumps(
        [e.request.headers for e in load_cassette(folder / "weather.cassette.json").exchanges]
    )


def test_the_evalset_has_the_tool_calls(unary: Path) -> None:
    evalset = load_evalset(unary / "weather.evalset.json")
    assert [len(c.conversation or []) for c in evalset.eval_cases] == [2, 1]
    first = (evalset.eval_cases[0].conversation or [])[0]
    calls = [(c.name, c.args) for c in invocation_tool_calls(first)]
    assert calls == [("get_weather", {"city": "Rome"})]


@pytest.mark.parametrize("recording", ["unary", "streamed"])
def test_replay_needs_no_key_and_no_upstream(
    recording: str, request: pytest.FixtureRequest, offline: ConnectionCounter
) -> None:
    folder: Path = request.getfixturevalue(recording)
    code, output = _replay(str(LITELLM_AGENT), str(folder / "weather.evalset.json"))
    assert code == 0, output
    assert "2 passed, 0 failed, 2 cases" in output
    assert offline.connections == 0


def test_an_edited_agent_misses_in_openai_terms(
    unary: Path, tmp_path: Path, offline: ConnectionCounter
) -> None:
    edited = tmp_path / "litellm_weather"
    shutil.copytree(LITELLM_AGENT, edited, ignore=shutil.ignore_patterns("__pycache__"))
    source = (edited / "agent.py").read_text()
    (edited / "agent.py").write_text(source.replace("a friendly weather", "a terse weather"))
    code, output = _replay(str(edited), str(unary / "weather.evalset.json"))
    assert code == 1, output
    assert "messages[0].content changed" in output
    assert offline.connections == 0
