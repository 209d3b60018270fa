"""A replayed model call does no per-call work beyond answering it.

A replay serves the tools' HTTP calls from the recording while a case runs, through seams
in the client libraries: aiohttp's is an ``aioresponses`` mock, httpx's a ``respx`` router
that also wraps rec's own in-process transport. A model call goes through the same seams,
to rec's own replay, and passes them as rec's own by its URL alone:

- over loopback (``rec replay``; google-genai sends with aiohttp) untouched, without
  aioresponses copying each call's arguments into its log (a log that grew by one entry
  per model call for the whole run);
- in-process (``rec.replay()``; google-genai sends through rec's httpx transport) without
  its body being read to tell whether it is MCP traffic (twice a call).

The home assistant example (a root agent with a sub-agent, two recorded cases, 18 model
calls) is replayed in this process.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import rec
from cassettes._evalset import load_evalset
from replayer._adk_runner import run_adk_case
from replayer._agent_loading import load_agent
from replayer._mock_tools import ToolResponseBook, recorded_tool_calls
from replayer._replay_run import replay_evalsets
from replayer._replay_target import ReplayOptions

HOME = Path(__file__).resolve().parents[2] / "examples" / "home_assistant"
RECORDINGS = HOME / "recordings"
NAMES = ("evening_routine", "leaving_home")


def test_model_calls_pass_the_tool_seam_without_being_logged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aioresponses import aioresponses

    logged: list[str] = []
    sent: list[str] = []
    real_log = aioresponses._build_request_call
    real_match = aioresponses.match

    def log_call(self: Any, method: str = "GET", *args: Any, **kwargs: Any) -> Any:
        logged.append(method)
        return real_log(self, method, *args, **kwargs)

    async def match(self: Any, method: str, url: Any, **kwargs: Any) -> Any:
        sent.append(str(url))
        return await real_match(self, method, url, **kwargs)

    monkeypatch.setattr(aioresponses, "_build_request_call", log_call)
    monkeypatch.setattr(aioresponses, "match", match)
    runs = replay_evalsets(
        str(HOME),
        [RECORDINGS / f"{name}.evalset.json" for name in NAMES],
        ReplayOptions(workers=1),
    )

    assert [run.result.passed for run in runs] == [True, True]
    assert len(runs[0].result.eval_case_results) == 1
    assert logged == [] and sent == []


def test_in_process_model_calls_are_not_read_as_tool_traffic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recorder._traffic import _tool_requests

    read: list[int] = []
    real = _tool_requests.json_rpc_kind

    def counted(content: bytes) -> Any:
        read.append(len(content))
        return real(content)

    monkeypatch.setattr(_tool_requests, "json_rpc_kind", counted)
    agent = load_agent(str(HOME))
    with rec.replay(*[RECORDINGS / f"{name}.cassette.json" for name in NAMES]) as replaying:
        for name in NAMES:
            for case in load_evalset(RECORDINGS / f"{name}.evalset.json").eval_cases:
                book = ToolResponseBook([recorded_tool_calls(i) for i in case.conversation or []])
                out = asyncio.run(run_adk_case(agent, case, book=book))
                assert isinstance(out, list), out

    assert not replaying.misses
    assert replaying.served == 18
    assert read == []
