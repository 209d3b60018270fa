"""rec replayer: replay proxy, agent runners, mock tools, scorers and reports.

Names are imported on first use (PEP 562): ``import replayer`` stays cheap and works
without google-adk installed (the pytest plugin and ``rec serve`` need no ADK); the
ADK-backed names (``AgentEvaluator``, ``MockToolsPlugin``...) import ADK when touched.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent_evaluator import AgentEvaluator
    from .agent_loading import LoadedAgent, ProgramSession, load_agent, load_agent_async
    from .mcp_replay import McpReplay, RecordedMcpSession, replaying_mcp
    from .mock_tools import MockToolsPlugin, ToolNotRecorded
    from .replay_api import Replay, auto_handler, replay, replay_async
    from .replay_channel import ChannelMark, ReplayChannel
    from .replay_run import (
        EvalSetReplay,
        ReplayOptions,
        replay_evalsets,
        replay_evalsets_async,
    )
    from .reports import (
        ProgressBar,
        cassette_timelines,
        dump_timelines,
        render_report,
        render_timelines,
        render_totals,
        render_unused,
        report_from_replay,
        report_from_score,
        write_html,
        write_junit,
        write_results,
    )
    from .score import score_evalset, score_evalset_async, score_files
    from .serve import ServeSummary, serve_forever
    from .sharding import Shard, load_results, merge_results
    from .tool_replay import ToolTrafficReplay, serving_tool_traffic
    from .worker_start import default_workers, start_workers_early

_WHERE = {
    "AgentEvaluator": ".agent_evaluator",
    "ChannelMark": ".replay_channel",
    "EvalSetReplay": ".replay_run",
    "LoadedAgent": ".agent_loading",
    "McpReplay": ".mcp_replay",
    "MockToolsPlugin": ".mock_tools",
    "ProgramSession": ".agent_loading",
    "ProgressBar": ".reports",
    "RecordedMcpSession": ".mcp_replay",
    "Replay": ".replay_api",
    "ReplayChannel": ".replay_channel",
    "ReplayOptions": ".replay_run",
    "ToolNotRecorded": ".mock_tools",
    "ToolTrafficReplay": ".tool_replay",
    "auto_handler": ".replay_api",
    "default_workers": ".worker_start",
    "load_agent": ".agent_loading",
    "load_agent_async": ".agent_loading",
    "render_report": ".reports",
    "render_totals": ".reports",
    "render_unused": ".reports",
    "replay": ".replay_api",
    "replay_async": ".replay_api",
    "replay_evalsets": ".replay_run",
    "replay_evalsets_async": ".replay_run",
    "replaying_mcp": ".mcp_replay",
    "score_evalset": ".score",
    "score_evalset_async": ".score",
    "score_files": ".score",
    "serve_forever": ".serve",
    "serving_tool_traffic": ".tool_replay",
    "start_workers_early": ".worker_start",
    "ServeSummary": ".serve",
    "Shard": ".sharding",
    "load_results": ".sharding",
    "merge_results": ".sharding",
    "cassette_timelines": ".reports",
    "dump_timelines": ".reports",
    "render_timelines": ".reports",
    "report_from_replay": ".reports",
    "report_from_score": ".reports",
    "write_html": ".reports",
    "write_junit": ".reports",
    "write_results": ".reports",
}

__all__ = [
    "AgentEvaluator",
    "ChannelMark",
    "EvalSetReplay",
    "LoadedAgent",
    "McpReplay",
    "MockToolsPlugin",
    "ProgramSession",
    "ProgressBar",
    "RecordedMcpSession",
    "Replay",
    "ReplayChannel",
    "ReplayOptions",
    "ServeSummary",
    "Shard",
    "ToolNotRecorded",
    "ToolTrafficReplay",
    "auto_handler",
    "cassette_timelines",
    "default_workers",
    "dump_timelines",
    "load_agent",
    "load_agent_async",
    "load_results",
    "merge_results",
    "render_report",
    "render_timelines",
    "render_totals",
    "render_unused",
    "replay",
    "replay_async",
    "replay_evalsets",
    "replay_evalsets_async",
    "replaying_mcp",
    "report_from_replay",
    "report_from_score",
    "score_evalset",
    "score_evalset_async",
    "score_files",
    "serve_forever",
    "serving_tool_traffic",
    "start_workers_early",
    "write_html",
    "write_junit",
    "write_results",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'replayer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
