"""Session-wide test setup: no credentials, no proxies, nothing leaves loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cassettes import _secret_shapes
from rec.standin.replies import FAKE_API_KEY, Responder
from rec.standin.server import StandinGemini
from tests.agents.rates_api import STANDIN_ROUTES

_CLEARED_PREFIXES = ("GOOGLE_", "GEMINI_", "VERTEX", "ADK_")
_CLEARED = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strip credentials and proxy settings so no test can go live by accident."""
    for name in list(os.environ):
        if name.startswith(_CLEARED_PREFIXES) or name in _CLEARED:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture(autouse=True)
def _own_credential_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials a test registers (``remember_credentials``) are forgotten after it.

    The registry is process-wide, so without this a value one test sends as a password
    (``user:password``) is masked in every later test of the same xdist worker, and which
    tests see it depends on how the workers split the suite.
    """
    monkeypatch.setattr(_secret_shapes, "_PROCESS", _secret_shapes.CredentialRegistry())


# -- the stand-in Gemini API (the standin package) ---------------------------------------------


@pytest.fixture(scope="session")
def standin() -> Iterator[StandinGemini]:
    """A stand-in Gemini API for the whole session, answering with the travel RuleBrain.

    Shared: call ``standin.reset()`` before reading ``standin.requests``, and use
    ``with standin.responding(other):`` (or ``standin_factory``) for custom replies.
    """
    from tests.agents.travel_brain import travel_brain

    with StandinGemini(travel_brain(), routes=STANDIN_ROUTES) as server:
        yield server


@pytest.fixture
def standin_factory() -> Iterator[Callable[..., StandinGemini]]:
    """Start stand-ins with a custom responder: ``standin_factory(ScriptedResponder([...]))``.

    Takes StandinGemini's arguments; every stand-in started is stopped after the test.
    """
    started: list[StandinGemini] = []

    def start(responder: Responder | None = None, **options: Any) -> StandinGemini:
        options.setdefault("routes", STANDIN_ROUTES)
        server = StandinGemini(responder, **options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the travel agent recorded once per module: travel.cassette.json,
    travel.evalset.json (2 cases) and test_config.json."""
    from tests.agents.travel_recording import CONVERSATIONS, record_travel

    folder = tmp_path_factory.mktemp("travel-recording")
    record_travel(folder, CONVERSATIONS)
    return folder


@pytest.fixture
def fake_api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """Set ``GOOGLE_API_KEY`` to a fake ``AIza...`` key and return it."""
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    return FAKE_API_KEY


@pytest.fixture
def standin_env(
    standin: StandinGemini, fake_api_key: str, monkeypatch: pytest.MonkeyPatch
) -> StandinGemini:
    """Point google-genai/ADK (and the travel agent's rates tool) straight at ``standin``."""
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", standin.url)
    monkeypatch.setenv("TRAVEL_RATES_URL", f"{standin.url}/rates")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    return standin


class LoopbackViolation(ConnectionRefusedError):
    """A test tried to open a connection (or resolve a name) beyond loopback."""


class LoopbackGuard:
    """What ``loopback_only`` saw: every refused destination, even if a library swallowed it."""

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def check_host(self, host: object) -> None:
        """Raise LoopbackViolation unless ``host`` is loopback."""
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name in ("localhost", "") or name.endswith(".localhost"):
            return
        try:
            address = ipaddress.ip_address(name.split("%")[0])
        except ValueError:
            address = None
        if address is not None and (
            address.is_loopback
            or (
                isinstance(address, ipaddress.IPv6Address)
                and address.ipv4_mapped is not None
                and address.ipv4_mapped.is_loopback
            )
        ):
            return
        self.attempts.append(name)
        raise LoopbackViolation(f"loopback_only: connection to {name!r} refused (not loopback)")


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> LoopbackGuard:
    """Refuse any socket connection or name lookup that is not 127.0.0.1 / ::1 / localhost.

    Patches the OS layer (``socket.socket.connect``/``connect_ex``,
    ``socket.create_connection``, ``socket.getaddrinfo``), which every HTTP client in
    this process goes through. Returns the guard; ``guard.attempts`` lists refused hosts.
    """
    guard = LoopbackGuard()
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_create, real_getaddrinfo = socket.create_connection, socket.getaddrinfo

    def connect(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            guard.check_host(address[0])
        return real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            guard.check_host(address[0])
        return real_connect_ex(sock, address)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        guard.check_host(address[0])
        return real_create(address, *args, **kwargs)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None:
            guard.check_host(host)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return guard


# The end-to-end modules: each test starts `rec`, `adk eval`, a pytest or a recording in a
# subprocess, or records a whole session first. `pytest -m "not slow"` (the fast lane in the
# README) leaves them out; the full suite runs them.
_SLOW_MODULES = frozenset(
    {
        "tests/faults/test_sigkill.py",
        "tests/rec/test_extras.py",
        "tests/rec/test_pytest_eval_items.py",
        "tests/rec/test_pytest_plugin.py",
        "tests/rec/test_release.py",
        "tests/rec/test_standin_command.py",
        "tests/recorder/test_adk_eval_accepts.py",
        "tests/recorder/test_adk_web_capture.py",
        "tests/recorder/test_cli_recording.py",
        "tests/recorder/test_instrumentation.py",
        "tests/recorder/test_live.py",
        "tests/recorder/test_session_shapes.py",
        "tests/replayer/test_a2a_replay.py",
        "tests/replayer/test_agent_shapes.py",
        "tests/replayer/test_every_case_reported.py",
        "tests/replayer/test_litellm_replay.py",
        "tests/replayer/test_scenario_replay.py",
        "tests/test_examples.py",
        "tests/test_readme.py",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    gone = sorted(m for m in _SLOW_MODULES if not (root / m).is_file())
    if gone:  # a renamed module would join the fast lane unseen
        raise pytest.UsageError(f"tests/conftest.py _SLOW_MODULES names no such file: {gone}")
    for item in items:
        try:
            module = item.path.relative_to(root).as_posix()
        except ValueError:
            continue
        if module in _SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
