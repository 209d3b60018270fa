"""Run the inventory MCP server for a test, record the agent, and watch a port for connections.

- :func:`stdio_connection` puts an ``inventory-mcp`` wrapper on a ``bin`` folder (it
  appends to a marker file, then starts ``server.py`` over stdio), so a test can take it
  off ``PATH`` and prove it never started.
- :class:`HttpServer` runs ``server.py`` over SSE or streamable HTTP in a subprocess on a
  free loopback port.
- :func:`record_inventory` records the agent (model through rec's proxy, MCP through rec's
  ADK capture plugin) against the stand-in model.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import rec
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini

from .agent import CONVERSATION, inventory_brain

SERVER = Path(__file__).with_name("server.py")
ENV_TOKEN = "inv-env-secret-0123456789abcdef"
"""The credential the stdio server gets in its environment (``INVENTORY_TOKEN``)."""
ARG_TOKEN = "inv-arg-secret-fedcba9876543210"
"""The credential the server gets as ``--token``."""
HEADER_TOKEN = "inv-header-secret-5a5a5a5a5a5a5a"
"""The bearer credential an HTTP toolset sends."""
TIMEOUT = 120.0
"""Seconds an MCP server may take to start on a loaded machine."""


def stdio_connection(bin_dir: Path, marker: Path) -> Any:
    """Stdio connection params running ``inventory-mcp`` (found on ``PATH``) with credentials.

    The caller puts ``bin_dir`` on ``PATH``. The wrapper appends a line to ``marker``
    each time it starts.
    """
    from google.adk.tools.mcp_tool import StdioConnectionParams
    from mcp import StdioServerParameters

    bin_dir.mkdir(parents=True, exist_ok=True)
    wrapper = bin_dir / "inventory-mcp"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'echo "wrapper started" >> "{marker}"\n'
        f'exec "{sys.executable}" "{SERVER}" "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return StdioConnectionParams(
        server_params=StdioServerParameters(
            command="inventory-mcp",
            args=["--transport", "stdio", "--token", ARG_TOKEN],
            env={"INVENTORY_TOKEN": ENV_TOKEN, "INVENTORY_MARKER": str(marker)},
        ),
        timeout=TIMEOUT,
    )


def http_connection(transport: str, url: str) -> Any:
    """SSE or streamable-HTTP connection params for ``url``, with a bearer credential."""
    from google.adk.tools.mcp_tool import SseConnectionParams, StreamableHTTPConnectionParams

    params = SseConnectionParams if transport == "sse" else StreamableHTTPConnectionParams
    return params(
        url=url,
        headers={"Authorization": f"Bearer {HEADER_TOKEN}", "X-Shop": "north"},
        timeout=TIMEOUT,
        sse_read_timeout=TIMEOUT,
    )


class HttpServer:
    """``server.py`` over SSE or streamable HTTP, in a subprocess on a free loopback port."""

    def __init__(self, transport: str, folder: Path) -> None:
        self.transport = transport
        port_file = folder / f"{transport}.port"
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "--transport", transport, "--port-file", str(port_file)],
            env={**os.environ, "INVENTORY_TOKEN": ENV_TOKEN},
        )
        deadline = time.monotonic() + TIMEOUT
        while not port_file.exists() or not port_file.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the {transport} MCP server did not start")
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        path = "/sse" if transport == "sse" else "/mcp"
        self.url = f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


async def _drive(agent: Any, plugin: Any, turns: Sequence[str]) -> None:
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    sessions = InMemorySessionService()
    runner = Runner(app_name="inventory", agent=agent, session_service=sessions, plugins=[plugin])
    session = await sessions.create_session(app_name="inventory", user_id="shopper")
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(
            user_id="shopper", session_id=session.id, new_message=message
        ):
            pass
    await runner.close()


def record_inventory(
    folder: Path, agent: Any, *, name: str = "inventory", turns: Sequence[str] = CONVERSATION
) -> Path:
    """Record ``agent`` answering ``turns`` against a fresh stand-in; return the EvalSet path."""
    from cassettes._evalset_writer import adk_capture_path
    from recorder._adk_plugin import RecCapturePlugin

    with (
        StandinGemini(inventory_brain()) as api,
        pytest.MonkeyPatch.context() as env,
    ):
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        with rec.record(folder, name=name, upstream=api.url, app_name="inventory"):
            plugin = RecCapturePlugin(path=adk_capture_path(folder, name))
            asyncio.run(_drive(agent, plugin, turns))
    return folder / f"{name}.evalset.json"
