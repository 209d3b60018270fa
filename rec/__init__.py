"""rec: record, convert and replay ADK / google-genai agent sessions.

The public API, re-exported from rec's internal packages (``cassettes`` ← ``recorder`` ←
``replayer``); everything else is private. Names are imported on first use, so ``import rec``
(and the ``rec`` command, whose module lives here) stays cheap and works without google-adk.

Example::

    import rec

    with rec.record("recordings", name="weather"):
        ...  # google-genai clients created here go through the recording proxy

    with rec.replay("recordings/weather.cassette.json") as replayed:
        ...  # ... and here they are served from the cassette
    assert not replayed.misses
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cassettes._cassette import Cassette, load_cassette
    from cassettes._errors import (
        InputError,
        RecError,
        ReplayMiss,
        RunError,
        SecretFound,
        UpstreamError,
    )
    from cassettes._eval_config import TakesRule
    from cassettes._evalset_writer import adk_capture_path as capture_path
    from cassettes._matching import MatchRules
    from cassettes._record_mode import RecordMode
    from cassettes._redaction import RedactionRules
    from recorder._adk_plugin import RecCapturePlugin
    from recorder._api import record
    from recorder._recorder import Recorder
    from recorder._traffic import Upstreams
    from replayer._agent_evaluator import AgentEvaluator
    from replayer._agent_loading import ProgramSession
    from replayer._replay_api import Replay, replay
    from replayer._replay_run import replay_evalsets
    from replayer._replay_target import ReplayOptions
    from replayer._serve import serve_forever as serve

__version__ = "0.1.0"

_WHERE = {
    "AgentEvaluator": ("replayer._agent_evaluator", "AgentEvaluator"),
    "Cassette": ("cassettes._cassette", "Cassette"),
    "InputError": ("cassettes._errors", "InputError"),
    "MatchRules": ("cassettes._matching", "MatchRules"),
    "ProgramSession": ("replayer._agent_loading", "ProgramSession"),
    "RecCapturePlugin": ("recorder._adk_plugin", "RecCapturePlugin"),
    "RecError": ("cassettes._errors", "RecError"),
    "RecordMode": ("cassettes._record_mode", "RecordMode"),
    "Recorder": ("recorder._recorder", "Recorder"),
    "RedactionRules": ("cassettes._redaction", "RedactionRules"),
    "Replay": ("replayer._replay_api", "Replay"),
    "ReplayMiss": ("cassettes._errors", "ReplayMiss"),
    "ReplayOptions": ("replayer._replay_target", "ReplayOptions"),
    "RunError": ("cassettes._errors", "RunError"),
    "SecretFound": ("cassettes._errors", "SecretFound"),
    "TakesRule": ("cassettes._eval_config", "TakesRule"),
    "UpstreamError": ("cassettes._errors", "UpstreamError"),
    "Upstreams": ("recorder._traffic", "Upstreams"),
    "capture_path": ("cassettes._evalset_writer", "adk_capture_path"),
    "load_cassette": ("cassettes._cassette", "load_cassette"),
    "record": ("recorder._api", "record"),
    "replay": ("replayer._replay_api", "replay"),
    "replay_evalsets": ("replayer._replay_run", "replay_evalsets"),
    "serve": ("replayer._serve", "serve_forever"),
}

__all__ = [
    "AgentEvaluator",
    "capture_path",
    "Cassette",
    "InputError",
    "load_cassette",
    "MatchRules",
    "ProgramSession",
    "RecCapturePlugin",
    "RecError",
    "record",
    "Recorder",
    "RecordMode",
    "RedactionRules",
    "Replay",
    "replay",
    "replay_evalsets",
    "ReplayMiss",
    "ReplayOptions",
    "RunError",
    "SecretFound",
    "serve",
    "TakesRule",
    "UpstreamError",
    "Upstreams",
    "__version__",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'rec' has no attribute {name!r}")
    module, attribute = where
    value = globals()[name] = getattr(importlib.import_module(module), attribute)
    # Read as a rec name wherever it shows (reprs, tracebacks, help), as httpx does.
    value.__module__ = __name__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
