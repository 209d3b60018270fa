"""A replay builds one TLS context in the process, however many clients ADK builds.

google-genai builds three TLS contexts for each client (httpx, aiohttp, websockets), and
ADK builds a client per model of the agent tree per event loop, so a replay of a few cases
would load the CA bundle a dozen times for plain-HTTP calls to loopback. The home
assistant example (a root agent with a sub-agent, two recorded cases) is replayed through
``rec.replay()`` with ADK's Runner on a fresh loop per case, and through ``rec replay``;
every real ``ssl.SSLContext`` the process creates is counted.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import rec
from cassettes._evalset import load_evalset
from replayer._adk_runner import run_adk_case
from replayer._agent_loading import load_agent
from replayer._mock_tools import ToolResponseBook, recorded_tool_calls
from replayer._model_clients import tls_context
from replayer._replay_run import replay_evalsets
from replayer._replay_target import ReplayOptions

HOME = Path(__file__).resolve().parents[2] / "examples" / "home_assistant"
RECORDINGS = HOME / "recordings"
NAMES = ("evening_routine", "leaving_home")


@pytest.fixture
def tls_contexts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], int]]:
    """How many TLS contexts the process has created since the fixture began (each is
    still built by the standard library; only counted on the way)."""
    created = [0]
    real_new = ssl.SSLContext.__new__

    def counted(cls: type[ssl.SSLContext], *args: Any, **kwargs: Any) -> ssl.SSLContext:
        created[0] += 1
        return real_new(cls, *args, **kwargs)

    tls_context.cache_clear()  # the process's one context is built inside the test
    monkeypatch.setattr(ssl.SSLContext, "__new__", counted)
    yield lambda: created[0]
    tls_context.cache_clear()


def _cases_through_rec_replay() -> int:
    """Both recorded cases under ``rec.replay()``, each case on a loop of its own (ADK
    builds each model's clients again); the number of model calls served."""
    agent = load_agent(str(HOME))
    cassettes = [RECORDINGS / f"{name}.cassette.json" for name in NAMES]
    with rec.replay(*cassettes) as replaying:
        for name in NAMES:
            for case in load_evalset(RECORDINGS / f"{name}.evalset.json").eval_cases:
                book = ToolResponseBook([recorded_tool_calls(i) for i in case.conversation or []])
                out = asyncio.run(run_adk_case(agent, case, book=book))
                assert isinstance(out, list), out
    assert not replaying.misses
    return replaying.served


def _cases_through_the_command() -> int:
    """Both eval sets through ``rec replay``'s own runner, in this process."""
    runs = replay_evalsets(
        str(HOME),
        [RECORDINGS / f"{name}.evalset.json" for name in NAMES],
        ReplayOptions(workers=1),
    )
    assert all(run.result.passed for run in runs)
    return len(runs)


@pytest.mark.parametrize(
    "replay_cases",
    [
        pytest.param(_cases_through_rec_replay, id="rec.replay"),
        pytest.param(_cases_through_the_command, id="rec-replay"),
    ],
)
def test_a_replay_of_several_cases_builds_one_tls_context(
    tls_contexts: Callable[[], int], replay_cases: Callable[[], int]
) -> None:
    assert replay_cases() >= 2
    assert tls_contexts() == 1
    assert replay_cases() >= 2  # a second pass reuses it
    assert tls_contexts() == 1


def test_clients_built_after_the_replay_build_their_own(
    tls_contexts: Callable[[], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from google import genai

    from rec.standin.replies import FAKE_API_KEY

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with rec.replay(RECORDINGS / "leaving_home.cassette.json"):
        genai.Client()
    inside = tls_contexts()
    genai.Client()
    assert inside == 1 and tls_contexts() == 1 + 3  # google-genai's own three again
