"""MCP toolsets recorded at the protocol level and replayed with their server absent.

A real ADK agent with a real ``McpToolset`` on a real MCP server (``mcp`` package, see
``tests/agents/inventory``) is recorded over stdio, SSE and streamable HTTP: the model
through rec's proxy against the stand-in, the MCP sessions through rec's ADK capture
plugin. Each replay then runs with the server gone: for stdio its command is off
``PATH`` (and the wrapper that marks each start deleted), for HTTP a listener on the
server's old port counts connections. Both must stay at zero.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cassettes._cassette import load_cassette
from cassettes._mcp import McpHttpServer, McpStdioServer
from replayer._agent_loading import LoadedAgent
from replayer._replay_run import replay_evalsets
from replayer._replay_target import ReplayOptions
from tests.agents.inventory.agent import inventory_agent
from tests.agents.inventory.harness import (
    ARG_TOKEN,
    ENV_TOKEN,
    HEADER_TOKEN,
    HttpServer,
    http_connection,
    record_inventory,
    stdio_connection,
)
from tests.factories import ConnectionCounter

TRANSPORTS = ["stdio", "sse", "streamable-http"]


@dataclass
class Recorded:
    """A recording of the inventory agent over one transport, its server gone."""

    transport: str
    folder: Path
    evalset: Path
    connection: Any
    """The connection params the agent was recorded with (the server is gone now)."""
    port: int | None = None
    marker: Path | None = None

    def agent(self, **options: Any) -> LoadedAgent:
        """A freshly built agent, as CI would import it, on the recorded connection."""
        return LoadedAgent(
            spec="inventory",
            app_name="inventory",
            root_agent=inventory_agent(self.connection, **options),
        )

    def starts(self) -> int:
        """How many times the stdio server's wrapper started."""
        assert self.marker is not None
        return len(self.marker.read_text().splitlines()) if self.marker.exists() else 0


@pytest.fixture(scope="module", params=TRANSPORTS)
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    transport: str = request.param
    folder = tmp_path_factory.mktemp(f"mcp-{transport}")
    if transport == "stdio":
        bin_dir, marker = folder / "bin", folder / "started.log"
        with pytest.MonkeyPatch.context() as env:
            env.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
            connection = stdio_connection(bin_dir, marker)
            evalset = record_inventory(folder, inventory_agent(connection))
        shutil.rmtree(bin_dir)  # the server's command is gone
        return Recorded(transport, folder, evalset, connection, marker=marker)
    server = HttpServer(transport, folder)
    try:
        connection = http_connection(transport, server.url)
        evalset = record_inventory(folder, inventory_agent(connection))
    finally:
        server.stop()  # the port is closed
    return Recorded(transport, folder, evalset, connection, port=server.port)


@pytest.fixture
def server_watch(recorded: Recorded) -> Iterator[Any]:
    """Yields a function giving how often the server was reached during the test."""
    if recorded.port is None:
        before = recorded.starts()
        yield lambda: recorded.starts() - before
        return
    with ConnectionCounter(recorded.port) as counter:
        yield lambda: counter.connections


def test_the_recording_holds_the_mcp_sessions(recorded: Recorded) -> None:
    cassette = load_cassette(recorded.folder / "inventory.cassette.json")
    assert cassette.mcp is not None and cassette.mcp.format_version == 1
    [toolset] = cassette.mcp.toolsets
    assert toolset.toolset.tool_filter == ["reserve", "stock"]
    assert toolset.toolset.server.transport == recorded.transport.replace("-", "_")
    [session] = toolset.sessions
    assert session.server is not None and session.server.server_info is not None
    assert session.server.server_info["name"] == "inventory"
    listing = next(c for c in session.calls if c.method == "tools/list")
    assert {t["name"] for t in listing.result["tools"]} == {"stock", "reserve", "whoami"}
    stock = next(t for t in listing.result["tools"] if t["name"] == "stock")
    assert stock["description"].startswith("How many of an item are in stock.")
    assert stock["inputSchema"]["required"] == ["item"]
    assert listing.count == 2  # ADK lists the tools once per turn: stored once, counted
    calls = [
        (c.params["name"], c.params["arguments"]) for c in session.calls if c.method == "tools/call"
    ]
    assert calls == [("stock", {"item": "widget"}), ("reserve", {"item": "widget", "count": 3})]
    reserve = next(c for c in session.calls if c.params and c.params.get("name") == "reserve")
    assert reserve.result["structuredContent"] == {"reserved": 3, "reference": "RES-WIDGET-3"}


@pytest.mark.usefixtures("loopback_only")
def test_replay_passes_with_the_server_absent(recorded: Recorded, server_watch: Any) -> None:
    [outcome] = replay_evalsets(recorded.agent(), [recorded.evalset])
    assert outcome.failures == [], outcome.failures[0].reason if outcome.failures else ""
    assert outcome.result.eval_case_results[0].final_eval_status == 1
    assert server_watch() == 0, "replay reached the MCP server"


@pytest.mark.usefixtures("loopback_only")
def test_an_edited_tool_filter_fails_closed_naming_what_changed(
    recorded: Recorded, server_watch: Any
) -> None:
    agent = recorded.agent(tool_filter=("stock", "reserve", "whoami"))
    [outcome] = replay_evalsets(agent, [recorded.evalset])
    [failure] = outcome.failures
    assert "MCP toolset" in failure.reason and "was not recorded" in failure.reason
    assert "tool_filter changed: ['reserve', 'stock'] -> ['reserve', 'stock', 'whoami']" in (
        failure.reason
    )
    assert "turn 1" in failure.reason
    assert server_watch() == 0


def test_no_credential_reaches_any_file(recorded: Recorded) -> None:
    written = [p for p in recorded.folder.rglob("*") if p.is_file()]
    assert any(p.name == "inventory.cassette.json" for p in written)
    for path in written:
        text = path.read_text(errors="replace")
        for secret in (ENV_TOKEN, ARG_TOKEN, HEADER_TOKEN):
            assert secret not in text, f"{secret} in {path}"
    cassette = load_cassette(recorded.folder / "inventory.cassette.json")
    assert cassette.mcp is not None
    server = cassette.mcp.toolsets[0].toolset.server
    if isinstance(server, McpStdioServer):
        assert server.args == ["--transport", "stdio", "--token", "<redacted>"]
        assert server.env["INVENTORY_TOKEN"] == "<redacted>"
    else:
        assert isinstance(server, McpHttpServer)
        assert server.headers == {"x-shop": "north"}


def test_live_tools_still_runs_the_real_stdio_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("mcp-live")
    bin_dir, marker = tmp_path / "bin", tmp_path / "started.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    connection = stdio_connection(bin_dir, marker)
    evalset = record_inventory(folder, inventory_agent(connection))
    recorded_starts = len(marker.read_text().splitlines())
    agent = LoadedAgent(
        spec="inventory", app_name="inventory", root_agent=inventory_agent(connection)
    )
    [outcome] = replay_evalsets(agent, [evalset], ReplayOptions(live_tools=True))
    assert outcome.failures == [], outcome.failures[0].reason if outcome.failures else ""
    assert len(marker.read_text().splitlines()) > recorded_starts, "the real server ran"


def test_a_recording_without_mcp_fails_closed(tmp_path: Path, recorded: Recorded) -> None:
    if recorded.transport != "stdio":
        pytest.skip("one transport is enough")
    folder = tmp_path / "old"
    shutil.copytree(recorded.folder, folder, ignore=shutil.ignore_patterns("bin", ".rec"))
    cassette = json.loads((folder / "inventory.cassette.json").read_text())
    del cassette["mcp"]  # as recorded before rec captured MCP
    (folder / "inventory.cassette.json").write_text(json.dumps(cassette))
    [outcome] = replay_evalsets(recorded.agent(), [folder / "inventory.evalset.json"])
    [failure] = outcome.failures
    assert "no MCP session is recorded" in failure.reason
    assert "rec's ADK capture plugin records its MCP sessions" in failure.reason


def test_agents_without_mcp_need_no_mcp_sdk() -> None:
    """Without the `mcp` package ADK has no McpToolset: rec finds none instead of failing."""
    import subprocess
    import sys

    code = (
        "import builtins\n"
        "real = builtins.__import__\n"
        "def guard(name, globals=None, locals=None, fromlist=(), level=0):\n"
        "    if level == 0 and (name == 'mcp' or name.startswith('mcp.')):\n"
        "        raise ImportError('no mcp here')\n"
        "    return real(name, globals, locals, fromlist, level)\n"
        "builtins.__import__ = guard\n"
        "from google.adk.agents import LlmAgent\n"
        "from recorder._traffic import mcp_toolsets\n"
        "from replayer._mcp_replay import replaying_mcp\n"
        "agent = LlmAgent(name='a', model='gemini-2.0-flash', tools=[])\n"
        "assert mcp_toolsets(agent) == []\n"
        "with replaying_mcp(agent, [], label='x') as replay:\n"
        "    assert replay.identities == {}\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "ok", done.stderr
