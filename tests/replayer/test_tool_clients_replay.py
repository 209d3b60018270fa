"""`rec replay --live-tools` serves tools' requests, aiohttp and urllib calls, and a spec an
agent fetches while it loads, from the recording: the tool API sees no connection.

Each recording is made against the stand-in model and a real tool API on loopback that
counts connections (``tests/agents/tool_api.py``); each replay runs with the API still up,
so any call that reached it would be counted.
"""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import rec
from rec.cli import cli
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.tool_api import CountingToolApi
from tests.rec_process import rec_run

AGENTS = Path(__file__).resolve().parents[1] / "agents"


@pytest.fixture(scope="module")
def api() -> Iterator[CountingToolApi]:
    server = CountingToolApi()
    yield server
    server.close()


async def _drive(agent: object, app: str, turns: tuple[str, ...]) -> None:
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    sessions = InMemorySessionService()
    runner = Runner(app_name=app, agent=agent, session_service=sessions)  # type: ignore[arg-type]
    for text in turns:
        session = await sessions.create_session(app_name=app, user_id="user")
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="user", session_id=session.id, new_message=message):
            pass
    await runner.close()


@pytest.fixture(scope="module")
def rates_recording(
    api: CountingToolApi, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    from tests.agents.rate_clients.agent import TURNS, rate_brain, root_agent

    folder = tmp_path_factory.mktemp("rate-clients")
    with (
        StandinGemini(rate_brain()) as model,
        pytest.MonkeyPatch.context() as env,
    ):
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        env.setenv("RATES_URL", f"{api.url}/rates")
        with rec.record(folder, name="rates", upstream=model.url, app_name="rate_clients"):
            asyncio.run(_drive(root_agent, "rate_clients", TURNS))
    yield folder


def test_requests_aiohttp_and_urllib_calls_are_recorded(
    rates_recording: Path, api: CountingToolApi
) -> None:
    from cassettes._cassette import load_cassette

    cassette = load_cassette(rates_recording / "rates.cassette.json")
    tools = [e for e in cassette.exchanges if e.origin == "tool"]
    assert sorted(e.request.url.removeprefix(api.url) for e in tools) == [
        "/rates?to=GBP",
        "/rates?to=JPY",
        "/rates?to=USD",
    ]


def _replay_live_tools(
    recording: Path,
    api: CountingToolApi,
    rates_path: str,
    monkeypatch: pytest.MonkeyPatch,
    case: str | None = None,
) -> Result:
    """``rec replay rate_clients RECORDING --live-tools [--case CASE]`` with no key, the
    tools pointed at ``rates_path`` on ``api``, whose connections are counted from zero."""
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("RATES_URL", f"{api.url}{rates_path}")
    api.connections = 0
    args = ["replay", str(AGENTS / "rate_clients"), str(recording), "--live-tools"]
    return CliRunner().invoke(
        cli, args + (["--case", case] if case else []), catch_exceptions=False
    )


def test_live_tools_serve_them_and_the_api_sees_no_connection(
    rates_recording: Path, api: CountingToolApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _replay_live_tools(rates_recording, api, "/rates", monkeypatch)
    assert result.exit_code == 0, result.output
    assert "3 passed, 0 failed, 3 cases" in result.output
    assert api.connections == 0


@pytest.mark.parametrize(
    ("case", "client"),
    [
        pytest.param("what_is_the_usd_rate_with_requests", "requests", id="requests"),
        pytest.param("what_is_the_gbp_rate_with_aiohttp", "aiohttp", id="aiohttp"),
        pytest.param("what_is_the_jpy_rate_with_urllib", "urllib", id="urllib"),
    ],
)
def test_an_unrecorded_call_fails_the_case_naming_tool_and_client(
    rates_recording: Path,
    api: CountingToolApi,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    client: str,
) -> None:
    result = _replay_live_tools(rates_recording, api, "/v2/rates", monkeypatch, case)
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert f"(while running rate_with_{client})" in text
    assert f"{api.url}/v2/rates?to=" in text and "was not recorded" in text
    assert f"(a {client} call)" in text
    assert api.connections == 0


# --- a spec fetched while the agent loads ---------------------------------------------


@pytest.fixture(scope="module")
def openapi_recording(
    api: CountingToolApi, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("openapi-rates")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        env.setenv("RATES_SPEC_URL", f"{api.url}/openapi.json")
        sys.modules.pop("tests.agents.openapi_rates.agent", None)
        sys.modules.pop("tests.agents.openapi_rates", None)
        brain = importlib.import_module("tests.agents.openapi_rates.brain").openapi_brain()
        with StandinGemini(brain) as model:
            with rec.record(folder, name="rates", upstream=model.url, app_name="openapi"):
                # The agent module loads inside the recording: its spec fetch is recorded.
                module = importlib.import_module("tests.agents.openapi_rates.agent")
                asyncio.run(_drive(module.root_agent, "openapi", module.TURNS))
    yield folder


def _replay_in_a_fresh_process(
    recording: Path, api: CountingToolApi, *args: str, spec: str = "/openapi.json"
) -> subprocess.CompletedProcess[str]:
    """`rec replay` as a user runs it: the agent module is imported anew, spec fetch (from
    ``spec`` on ``api``) and all."""
    agent = str(AGENTS / "openapi_rates")
    spec_url = f"{api.url}{spec}"
    return rec_run("replay", agent, str(recording), *args, timeout=600, RATES_SPEC_URL=spec_url)


def test_the_spec_is_recorded_beside_the_tool_call(openapi_recording: Path) -> None:
    from cassettes._cassette import load_cassette

    cassette = load_cassette(openapi_recording / "rates.cassette.json")
    urls = [e.request.url for e in cassette.exchanges if e.origin == "tool"]
    assert [u.rsplit("/", 1)[-1] for u in urls] == ["openapi.json", "rates?to=USD"]


@pytest.mark.parametrize(
    "mode", [pytest.param((), id="mock-tools"), pytest.param(("--live-tools",), id="live-tools")]
)
def test_a_spec_fetched_at_load_comes_from_the_recording(
    openapi_recording: Path, api: CountingToolApi, mode: tuple[str, ...]
) -> None:
    api.connections = 0
    done = _replay_in_a_fresh_process(openapi_recording, api, *mode)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "1 passed, 0 failed, 1 case" in output
    assert api.connections == 0


def test_an_unrecorded_spec_fetch_fails_closed_in_one_line(
    openapi_recording: Path, api: CountingToolApi, tmp_path: Path
) -> None:
    api.connections = 0
    done = _replay_in_a_fresh_process(openapi_recording, api, spec="/v2/openapi.json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"the tool call GET {api.url}/v2/openapi.json was not recorded" in done.stderr
    assert "(a requests call)" in done.stderr
    assert api.connections == 0


def test_auto_mode_sends_and_records_the_calls_its_recording_lacks(
    rates_recording: Path, api: CountingToolApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from cassettes._cassette import load_cassette

    for name in ("rates.evalset.json", "test_config.json"):
        if (rates_recording / name).exists():
            (tmp_path / name).write_bytes((rates_recording / name).read_bytes())
    recorded = json.loads((rates_recording / "rates.cassette.json").read_text())
    recorded["exchanges"] = [e for e in recorded["exchanges"] if e.get("origin") != "tool"]
    (tmp_path / "rates.cassette.json").write_text(json.dumps(recorded))
    monkeypatch.setenv("RATES_URL", f"{api.url}/rates")
    agent = str(AGENTS / "rate_clients")
    api.connections = 0
    with StandinGemini() as model:  # every model request is in the recording
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        auto = ["--mode", "auto", "--upstream", model.url, "--live-tools"]
        result = CliRunner().invoke(cli, ["replay", agent, str(tmp_path), *auto])
        assert model.requests == []
    assert result.exit_code == 0, result.output
    assert api.connections == 3  # requests, aiohttp and urllib, each sent once
    tools = [e for e in load_cassette(tmp_path / "rates.cassette.json").exchanges]
    assert sorted(e.request.url.removeprefix(api.url) for e in tools if e.origin == "tool") == [
        "/rates?to=GBP",
        "/rates?to=JPY",
        "/rates?to=USD",
    ]

    monkeypatch.delenv("GOOGLE_API_KEY")
    api.connections = 0
    result = CliRunner().invoke(cli, ["replay", agent, str(tmp_path), "--live-tools"])
    assert result.exit_code == 0, result.output
    assert api.connections == 0
