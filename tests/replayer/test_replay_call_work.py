"""A replayed model call does no per-call work beyond answering it.

``rec replay`` serves the tools' HTTP calls from the recording while a case runs, through
seams in the client libraries (aiohttp's is an ``aioresponses`` mock). google-genai sends
its async model calls with aiohttp too, to rec's own replay server: those pass the seam
untouched, as the seam's route would pass them, without aioresponses copying each call's
arguments into its log (a log that grew by one entry per model call for the whole run).

The home assistant example (a root agent with a sub-agent, two recorded cases) is replayed
by ``rec replay``'s own runner in this process, its model calls over loopback with aiohttp.
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
