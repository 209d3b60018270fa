"""ADK agents on ``LiteLlm("openai/…")`` and ``LiteLlm("anthropic/…")`` replay with no key, offline.

The agents talk OpenAI chat completions to ``OPENAI_BASE_URL`` (the stand-in's ``/v1``) and
Anthropic messages to ``ANTHROPIC_BASE_URL``, unary and streamed, through the real litellm
and openai packages. ``rec.record`` points it at the recording
proxy's provider mount and forwards to that base URL; ``rec replay`` then runs it with no
key, the base URLs naming a listener that counts connections, and
sockets beyond loopback refused: every case passes and the listener sees none.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassettes._cassette import SseBody, load_cassette
from cassettes._evalset import invocation_tool_calls, load_evalset
from tests.agents.litellm_recording import (
    AGENTS,
    FAKE_ANTHROPIC_KEY,
    FAKE_OPENAI_KEY,
    record_litellm,
)
from tests.factories import ConnectionCounter
from tests.factories import cli_replay as _replay

CONVERSATIONS = (("What's the weather in Rome?", "And in Tokyo?"), ("Weather in Paris?",))


RECORDINGS = [
    pytest.param(("openai", "unary"), id="openai-unary"),
    pytest.param(("openai", "streamed"), id="openai-streamed"),
    pytest.param(("anthropic", "unary"), id="anthropic-unary"),
    pytest.param(("anthropic", "streamed"), id="anthropic-streamed"),
]
ENDPOINTS = {
    "openai": r"http://127\.0\.0\.1:\d+/v1/chat/completions",
    "anthropic": r"http://127\.0\.0\.1:\d+/v1/messages",
}


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Each (wire, mode) recorded once for the module, when a test first asks for it."""
    return {}


@pytest.fixture(params=RECORDINGS)
def recording(
    request: pytest.FixtureRequest,
    recordings: dict[tuple[str, str], Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[str, str, Path]:
    """(wire, mode, folder) of a recording of the weather agent on that wire."""
    from google.adk.agents.run_config import RunConfig, StreamingMode

    wire, mode = request.param
    if (wire, mode) not in recordings:
        folder = tmp_path_factory.mktemp(f"{wire}-{mode}")
        config = RunConfig(streaming_mode=StreamingMode.SSE) if mode == "streamed" else None
        record_litellm(folder, CONVERSATIONS, wire=wire, run_config=config)
        recordings[wire, mode] = folder
    return wire, mode, recordings[wire, mode]


@pytest.fixture
def offline(loopback_only: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[ConnectionCounter]:
    """No provider key; the base URLs name a listener that must see no connection."""
    counter = ConnectionCounter()
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.setenv(name, counter.url)
    yield counter
    counter.close()


def _files(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_calls_are_model_exchanges_on_the_configured_upstream(
    recording: tuple[str, str, Path],
) -> None:
    wire, mode, folder = recording
    exchanges = load_cassette(folder / "weather.cassette.json").exchanges
    assert len(exchanges) == 6  # per turn: the tool call, then the answer
    for exchange in exchanges:
        assert exchange.origin is None
        assert re.fullmatch(ENDPOINTS[wire], exchange.request.url)
        assert isinstance(exchange.response.body, SseBody) == (mode == "streamed")
    body = exchanges[0].response.body
    if isinstance(body, SseBody) and wire == "openai":
        assert body.events[-1].lines == ["data: [DONE]"]
    if isinstance(body, SseBody) and wire == "anthropic":
        assert (body.events[-1].lines or [])[0] == "event: message_stop"


def test_no_key_reaches_a_file(recording: tuple[str, str, Path]) -> None:
    _, _, folder = recording
    text = _files(folder)
    assert FAKE_OPENAI_KEY not in text and FAKE_ANTHROPIC_KEY not in text
    assert not re.search(r"sk-[0-9A-Za-z_-]{20,}", text)
    headers = [e.request.headers for e in load_cassette(folder / "weather.cassette.json").exchanges]
    assert not {"authorization", "x-api-key"} & {name for h in headers for name in h}


def test_the_evalset_has_the_tool_calls(recording: tuple[str, str, Path]) -> None:
    _, _, folder = recording
    evalset = load_evalset(folder / "weather.evalset.json")
    assert [len(c.conversation or []) for c in evalset.eval_cases] == [2, 1]
    first = (evalset.eval_cases[0].conversation or [])[0]
    calls = [(c.name, c.args) for c in invocation_tool_calls(first)]
    assert calls == [("get_weather", {"city": "Rome"})]


def test_replay_needs_no_key_and_no_upstream(
    recording: tuple[str, str, Path], offline: ConnectionCounter
) -> None:
    wire, _, folder = recording
    code, output = _replay(str(AGENTS[wire]), str(folder / "weather.evalset.json"))
    assert code == 0, output
    assert "2 passed, 0 failed, 2 cases" in output
    assert offline.connections == 0


@pytest.mark.parametrize(
    ("recording", "said"),
    [
        pytest.param(("openai", "unary"), "messages[0].content changed", id="openai"),
        pytest.param(("anthropic", "unary"), "system[0].text changed", id="anthropic"),
    ],
    indirect=["recording"],
)
def test_an_edited_agent_misses_in_the_provider_terms(
    recording: tuple[str, str, Path], said: str, tmp_path: Path, offline: ConnectionCounter
) -> None:
    wire, _, folder = recording
    edited = tmp_path / AGENTS[wire].name
    shutil.copytree(AGENTS[wire], edited, ignore=shutil.ignore_patterns("__pycache__"))
    source = (edited / "agent.py").read_text()
    (edited / "agent.py").write_text(source.replace("a friendly weather", "a terse weather"))
    code, output = _replay(str(edited), str(folder / "weather.evalset.json"))
    assert code == 1, output
    assert said in output
    assert offline.connections == 0


DRIVER = textwrap.dedent(
    """
    import asyncio
    from google.adk.runners import InMemoryRunner
    from google.genai import types
    from tests.agents.litellm_weather import agent

    async def main():
        runner = InMemoryRunner(agent=agent.root_agent, app_name="litellm_weather")
        session = await runner.session_service.create_session(
            app_name="litellm_weather", user_id="user"
        )
        message = types.Content(role="user", parts=[types.Part(text="Weather in Rome?")])
        async for _ in runner.run_async(
            user_id="user", session_id=session.id, new_message=message
        ):
            pass
        await runner.close()

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("plugin", [True, False], ids=["adk-plugin", "traffic-only"])
def test_rec_start_records_a_litellm_program_that_replays_offline(
    plugin: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rec start -- python driver.py`` as a user runs it, OPENAI_BASE_URL already set."""
    from rec.standin.server import StandinGemini
    from tests.agents.litellm_recording import weather_brain
    from tests.rec_process import rec_argv, rec_environment

    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    out = tmp_path / "recordings"
    command = rec_argv("start", "--out", str(out), "--name", "weather")
    command += [] if plugin else ["--no-adk-plugin"]
    with StandinGemini(weather_brain()) as api:
        env = rec_environment(OPENAI_BASE_URL=f"{api.url}/v1", OPENAI_API_KEY=FAKE_OPENAI_KEY)
        done = subprocess.run(
            [*command, "--", sys.executable, str(script)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert len(api.requests) == 2
    exchanges = load_cassette(out / "weather.cassette.json").exchanges
    assert [e.origin for e in exchanges] == [None, None]
    assert FAKE_OPENAI_KEY not in _files(out)
    evalset = load_evalset(out / "weather.evalset.json")
    (invocation,) = evalset.eval_cases[0].conversation or []
    assert [(c.name, c.args) for c in invocation_tool_calls(invocation)] == [
        ("get_weather", {"city": "Rome"})
    ]
    counter = ConnectionCounter()
    try:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", counter.url)
        code, output = _replay(str(AGENTS["openai"]), str(out / "weather.evalset.json"))
    finally:
        counter.close()
    assert code == 0, output
    assert "1 passed, 0 failed, 1 case\n" in output
    assert counter.connections == 0
