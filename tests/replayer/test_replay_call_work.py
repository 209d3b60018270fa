"""A replayed model call does no per-call work beyond answering it.

A replay serves the tools' HTTP calls from the recording while a case runs, through seams
in the client libraries: aiohttp's is an ``aioresponses`` mock, httpx's a ``respx`` router
that also wraps rec's own in-process transport. A model call goes through the same seams,
to rec's own replay, and passes them as rec's own by its URL alone:

- over loopback (``rec replay``; google-genai sends with aiohttp) untouched, without
  aioresponses copying each call's arguments into its log (a log that grew by one entry
  per model call for the whole run);
- in-process (``rec replay --in-process``; google-genai sends through rec's httpx
  transport) without its body being read to tell whether it is MCP traffic (twice a call).

The home assistant example (a root agent with a sub-agent, two recorded cases, 18 model
calls) is replayed by ``rec replay``'s own runner in this process, both ways.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replayer._replay_run import replay_evalsets
from replayer._replay_target import ReplayOptions

HOME = Path(__file__).resolve().parents[2] / "examples" / "home_assistant"
RECORDINGS = HOME / "recordings"
NAMES = ("evening_routine", "leaving_home")


@pytest.mark.parametrize("in_process", [False, True], ids=["loopback", "in-process"])
def test_model_calls_pass_the_tool_seams_as_rec_s_own(
    monkeypatch: pytest.MonkeyPatch, in_process: bool
) -> None:
    from aioresponses import aioresponses

    from recorder._traffic import _tool_requests

    logged: list[str] = []
    read: list[int] = []
    real_log = aioresponses._build_request_call
    real_kind = _tool_requests.json_rpc_kind

    def log_call(self: Any, method: str = "GET", *args: Any, **kwargs: Any) -> Any:
        logged.append(method)
        return real_log(self, method, *args, **kwargs)

    def kind(content: bytes) -> Any:
        read.append(len(content))
        return real_kind(content)

    monkeypatch.setattr(aioresponses, "_build_request_call", log_call)
    monkeypatch.setattr(_tool_requests, "json_rpc_kind", kind)
    runs = replay_evalsets(
        str(HOME),
        [RECORDINGS / f"{name}.evalset.json" for name in NAMES],
        ReplayOptions(workers=1, in_process=in_process),
    )

    assert [run.result.passed for run in runs] == [True, True]
    assert [len(run.result.eval_case_results) for run in runs] == [1, 1]
    assert logged == []
    assert read == []
