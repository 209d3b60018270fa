"""Each package's public surface is pinned: adding or removing a name is a decision.

``PINNED`` lists, per package, every name in its ``__all__`` and the module it comes from.
A change to a package's surface changes this file too, so it shows in review. (Other
packages import only these names: ``test_other_packages_import_only_public_names``.)
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGES = ["cassettes", "evalfiles", "loopback", "recorder", "replayer", "standin"]
ROOT = Path(__file__).resolve().parents[1]

PINNED: dict[str, dict[str, str]] = {
    "cassettes": {
        "BinaryBody": "cassettes.cassette",
        "Body": "cassettes.cassette",
        "CanonicalRequest": "cassettes.matching",
        "Cassette": "cassettes.cassette",
        "DEFAULT_REDACTED_HEADERS": "cassettes.redaction",
        "DEFAULT_REDACTED_QUERY_PARAMS": "cassettes.redaction",
        "Exchange": "cassettes.cassette",
        "FILE_MODE_VARIABLE": "cassettes.atomic_write",
        "FORMAT_VERSION": "cassettes.cassette",
        "FROM_FILE": "cassettes.cassette",
        "IncrementalDecoder": "cassettes.bodies",
        "InputError": "cassettes.errors",
        "JsonBody": "cassettes.cassette",
        "MCP_FORMAT_VERSION": "cassettes.mcp",
        "CASSETTE_SUFFIX": "cassettes.file_names",
        "MISS_HTTP_STATUS": "cassettes.divergence",
        "cassette_file": "cassettes.file_names",
        "recording_name": "cassettes.file_names",
        "RERECORD_CLI": "cassettes.divergence",
        "RERECORD_PYTEST": "cassettes.divergence",
        "MatchIndex": "cassettes.matching",
        "MatchRules": "cassettes.matching",
        "McpCall": "cassettes.mcp",
        "McpCallBook": "cassettes.mcp",
        "McpCallError": "cassettes.mcp",
        "McpHttpServer": "cassettes.mcp",
        "McpJournalLine": "cassettes.mcp",
        "McpRecording": "cassettes.mcp",
        "McpServer": "cassettes.mcp",
        "McpServerHello": "cassettes.mcp",
        "McpSession": "cassettes.mcp",
        "McpStdioServer": "cassettes.mcp",
        "McpToolsetIdentity": "cassettes.mcp",
        "McpToolsetRecording": "cassettes.mcp",
        "REDACTED": "cassettes.redaction",
        "RecError": "cassettes.errors",
        "RecordMode": "cassettes.record_mode",
        "RecordedRequest": "cassettes.cassette",
        "RecordedResponse": "cassettes.cassette",
        "RedactionRules": "cassettes.redaction",
        "ReplayMiss": "cassettes.errors",
        "RunError": "cassettes.errors",
        "SecretFound": "cassettes.errors",
        "SecretHit": "cassettes.redaction",
        "SseBody": "cassettes.cassette",
        "SseEvent": "cassettes.cassette",
        "SseSplitter": "cassettes.sse",
        "TextBody": "cassettes.cassette",
        "UpstreamError": "cassettes.errors",
        "body_from_bytes": "cassettes.bodies",
        "body_to_bytes": "cassettes.bodies",
        "canonical_request": "cassettes.matching",
        "cassette_problem": "cassettes.cassette",
        "client_versions": "cassettes.user_agent",
        "credentials_in": "cassettes.redaction",
        "decode_content": "cassettes.bodies",
        "describe_toolset": "cassettes.mcp_identity",
        "did_you_mean": "cassettes.errors",
        "dump_cassette": "cassettes.cassette",
        "ensure_no_secrets": "cassettes.redaction",
        "ensure_writable": "cassettes.atomic_write",
        "error_fix": "cassettes.validation",
        "event_from_raw": "cassettes.sse",
        "explain_miss": "cassettes.divergence",
        "file_mode": "cassettes.atomic_write",
        "frame_event": "cassettes.sse",
        "frame_tail": "cassettes.sse",
        "fsync_folder": "cassettes.atomic_write",
        "http_server_identity": "cassettes.mcp_identity",
        "invalid": "cassettes.validation",
        "is_secret_name": "cassettes.secret_shapes",
        "json_of": "cassettes.bodies",
        "load_cassette": "cassettes.cassette",
        "locked": "cassettes.atomic_write",
        "mask": "cassettes.secret_shapes",
        "mcp_recording_from_lines": "cassettes.mcp",
        "merge_mcp_recordings": "cassettes.mcp",
        "miss_error_body": "cassettes.divergence",
        "miss_id_in": "cassettes.divergence",
        "nearest_toolset": "cassettes.mcp_identity",
        "nested_errors": "cassettes.validation",
        "now_iso": "cassettes.timing",
        "one_line": "cassettes.errors",
        "parse_cassette": "cassettes.cassette",
        "parse_json": "cassettes._json_file",
        "private_folder": "cassettes.atomic_write",
        "pydantic_error_location": "cassettes.cassette",
        "raw_body": "cassettes.bodies",
        "read_file": "cassettes._json_file",
        "redact_exchange": "cassettes.redaction",
        "request_key": "cassettes.matching",
        "save_cassette": "cassettes.cassette",
        "scan_for_secrets": "cassettes.redaction",
        "stdio_server_identity": "cassettes.mcp_identity",
        "stored_body": "cassettes.bodies",
        "suggested_ignore": "cassettes.divergence",
        "toolset_changes": "cassettes.mcp_identity",
        "toolset_key": "cassettes.mcp",
        "url_credentials": "cassettes.secret_shapes",
        "without_credentials": "cassettes.secret_shapes",
        "write_atomic": "cassettes.atomic_write",
    },
    "evalfiles": {
        "ADK_METRICS": "evalfiles.eval_config",
        "BaseCriterion": "evalfiles.eval_config",
        "Blob": "evalfiles._genai_types",
        "CONFIG_NAMES": "evalfiles.eval_config",
        "CodeConfig": "evalfiles.eval_config",
        "Content": "evalfiles._genai_types",
        "Conversation": "evalfiles.extraction",
        "Criterion": "evalfiles.eval_config",
        "CustomMetricConfig": "evalfiles.eval_config",
        "DEFAULT_EVAL_CONFIG": "evalfiles.eval_config",
        "EvalCase": "evalfiles.evalset",
        "EvalCaseResult": "evalfiles.eval_result",
        "EvalConfig": "evalfiles.eval_config",
        "EvalMetric": "evalfiles.eval_result",
        "EvalMetricResult": "evalfiles.eval_result",
        "EvalMetricResultPerInvocation": "evalfiles.eval_result",
        "EvalSet": "evalfiles.evalset",
        "EvalSetResult": "evalfiles.eval_result",
        "EvalStatus": "evalfiles.eval_result",
        "FileData": "evalfiles._genai_types",
        "FileKind": "evalfiles.checking",
        "FunctionCall": "evalfiles._genai_types",
        "FunctionResponse": "evalfiles._genai_types",
        "GenerateContentResponseUsageMetadata": "evalfiles._genai_types",
        "GroundingMetadata": "evalfiles._genai_types",
        "ImportHint": "evalfiles.importers",
        "ImportResult": "evalfiles.importers",
        "IntermediateData": "evalfiles.evalset",
        "Invocation": "evalfiles.evalset",
        "InvocationEvent": "evalfiles.evalset",
        "InvocationEvents": "evalfiles.evalset",
        "MatchType": "evalfiles.eval_config",
        "MetricSpec": "evalfiles.eval_config",
        "Part": "evalfiles._genai_types",
        "Problem": "evalfiles.checking",
        "REC_METRICS": "evalfiles.eval_config",
        "RUNNABLE": "evalfiles.evalset",
        "SessionInput": "evalfiles.evalset",
        "ToolArgRule": "evalfiles.eval_config",
        "adk_capture_path": "evalfiles.evalset_writer",
        "check_document": "evalfiles.checking",
        "check_file": "evalfiles.checking",
        "check_paths": "evalfiles.checking",
        "detect_kind": "evalfiles.checking",
        "dump_eval_config": "evalfiles.eval_config",
        "dump_eval_set_result": "evalfiles.eval_result",
        "dump_evalset": "evalfiles.evalset",
        "eval_set_id_for": "evalfiles.evalset_writer",
        "evalset_from_exchanges": "evalfiles.extraction",
        "extract_conversations": "evalfiles.extraction",
        "find_eval_config": "evalfiles.eval_config",
        "import_callable": "evalfiles.user_code",
        "import_source": "evalfiles.importers",
        "invocation_tool_calls": "evalfiles.evalset",
        "invocation_tool_responses": "evalfiles.evalset",
        "is_genuine_user_content": "evalfiles.extraction",
        "load_eval_config": "evalfiles.eval_config",
        "load_evalset": "evalfiles.evalset",
        "parse_eval_config": "evalfiles.eval_config",
        "parse_evalset": "evalfiles.evalset",
        "redact_evalset": "evalfiles.evalset_writer",
        "save_eval_set_result": "evalfiles.eval_result",
        "save_evalset": "evalfiles.evalset",
        "write_evalset_files": "evalfiles.evalset_writer",
        "write_recording_evalset": "evalfiles.importers.recording",
    },
    "loopback": {
        "CONTROL_PREFIX": "loopback.control",
        "CONTROL_TOKEN_HEADER": "loopback.control",
        "Handler": "loopback.server",
        "IncomingRequest": "loopback.server",
        "ProxyServer": "loopback.server",
        "ResponseWriter": "loopback.server",
        "running_in_thread": "loopback.tasks",
        "spawn": "loopback.tasks",
    },
    "recorder": {
        "AdkChanged": "recorder._compat",
        "AdkLaunch": "recorder.adk_launch",
        "AutoHandlerFactory": "recorder.recorder",
        "DEFAULT_UPSTREAM": "recorder.forwarding",
        "FinalizeResult": "recorder.recording",
        "ForegroundOutcome": "recorder.foreground",
        "Forwarder": "recorder.forwarding",
        "GATEWAY_MODE_MESSAGE": "recorder.forwarding",
        "INTERNAL_EXTENSION": "recorder.tool_traffic",
        "Journal": "recorder.journal",
        "JournalContents": "recorder.journal",
        "McpCapture": "recorder.mcp_capture",
        "RecordHandler": "recorder.recorder",
        "Recorder": "recorder.recorder",
        "RecorderState": "recorder.recording",
        "RecorderStatus": "recorder.control",
        "RecordingPaths": "recorder.recording",
        "StopReport": "recorder.control",
        "Upstreams": "recorder.forwarding",
        "VertexPath": "recorder.forwarding",
        "capturing_tool_traffic": "recorder.tool_traffic",
        "child_environment": "recorder.client_env",
        "finalize_recording": "recorder.recording",
        "gateway_mode_path": "recorder.forwarding",
        "google_error": "recorder.forwarding",
        "instrumented_environment": "recorder.instrumentation",
        "is_tool_request": "recorder.tool_traffic",
        "mcp_journal_path": "recorder.mcp_capture",
        "mcp_toolsets": "recorder.mcp_capture",
        "pointing_clients_at": "recorder.client_env",
        "read_journal": "recorder.journal",
        "read_mcp_journal": "recorder.mcp_capture",
        "read_states": "recorder.recording",
        "read_tool_traffic": "recorder.tool_traffic",
        "record": "recorder.api",
        "recorder_live": "recorder.recording",
        "recorder_statuses": "recorder.control",
        "recover_stale": "recorder.recording",
        "run_foreground": "recorder.foreground",
        "serving_clients": "recorder.tool_clients",
        "session_manager_of": "recorder._compat",
        "stop_recorders": "recorder.control",
        "tool_exchange": "recorder.tool_traffic",
        "tool_traffic_path": "recorder.tool_traffic",
        "toolset_identity": "recorder.mcp_capture",
        "vertex_path": "recorder.forwarding",
        "with_adk_capture": "recorder.adk_launch",
    },
    "replayer": {
        "AgentEvaluator": "replayer.agent_evaluator",
        "ChannelMark": "replayer.replay_channel",
        "EvalSetReplay": "replayer.replay_run",
        "LoadedAgent": "replayer.agent_loading",
        "McpReplay": "replayer.mcp_replay",
        "MockToolsPlugin": "replayer.mock_tools",
        "ProgramSession": "replayer.agent_loading",
        "ProgressBar": "replayer.reports",
        "RecordedMcpSession": "replayer.mcp_replay",
        "Replay": "replayer.replay_api",
        "ReplayChannel": "replayer.replay_channel",
        "ReplayOptions": "replayer.replay_run",
        "ServeSummary": "replayer.serve",
        "Shard": "replayer.sharding",
        "ToolNotRecorded": "replayer.mock_tools",
        "ToolTrafficReplay": "replayer.tool_replay",
        "auto_handler": "replayer.replay_api",
        "default_workers": "replayer.worker_start",
        "cassette_timelines": "replayer.reports",
        "dump_timelines": "replayer.reports",
        "load_agent": "replayer.agent_loading",
        "load_agent_async": "replayer.agent_loading",
        "load_results": "replayer.sharding",
        "merge_results": "replayer.sharding",
        "render_report": "replayer.reports",
        "render_timelines": "replayer.reports",
        "render_totals": "replayer.reports",
        "render_unused": "replayer.reports",
        "replay": "replayer.replay_api",
        "replay_async": "replayer.replay_api",
        "replay_evalsets": "replayer.replay_run",
        "replay_evalsets_async": "replayer.replay_run",
        "replaying_mcp": "replayer.mcp_replay",
        "report_from_replay": "replayer.reports",
        "report_from_score": "replayer.reports",
        "score_evalset": "replayer.score",
        "score_evalset_async": "replayer.score",
        "score_files": "replayer.score",
        "serve_forever": "replayer.serve",
        "serving_tool_traffic": "replayer.tool_replay",
        "start_workers_early": "replayer.worker_start",
        "write_html": "replayer.reports",
        "write_junit": "replayer.reports",
        "write_results": "replayer.reports",
    },
    "standin": {
        "FAKE_API_KEY": "standin.replies",
        "GENERATE_RPCS": "standin.replies",
        "Reply": "standin.replies",
        "Responder": "standin.replies",
        "Rule": "standin.brain",
        "RuleBrain": "standin.brain",
        "ScriptedResponder": "standin.replies",
        "StandinGemini": "standin.server",
        "StandinRequest": "standin.replies",
        "Turn": "standin.brain",
        "builtin_reply": "standin.replies",
        "call": "standin.brain",
        "error_envelope": "standin.replies",
        "finish_chunks": "standin.replies",
        "merge_chunks": "standin.replies",
        "parse_model_path": "standin.replies",
        "say": "standin.brain",
        "split_text": "standin.replies",
        "transfer": "standin.brain",
    },
}


def _declared_sources(package: str) -> dict[str, str]:
    """``name -> module`` from the package ``__init__``'s ``from .module import name`` lines."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name: f"{package}.{node.module}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names
    }


@pytest.mark.parametrize("name", PACKAGES)
def test_public_surface_is_pinned(name: str) -> None:
    package = importlib.import_module(name)
    sources = _declared_sources(name)
    actual = {member: sources.get(member, "?") for member in package.__all__}
    assert actual == PINNED[name], (
        f"{name}.__all__ changed: update PINNED in tests/test_exported_members.py if intended"
    )
    for member, module in PINNED[name].items():
        assert getattr(package, member) is getattr(importlib.import_module(module), member), (
            f"{name}.{member} is not {module}.{member}"
        )


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_every_name_resolves(name: str) -> None:
    package = importlib.import_module(name)
    exported = package.__all__
    assert list(exported) == sorted(exported)
    for member in exported:
        assert getattr(package, member) is not None, f"{name}.{member}"


def test_other_packages_import_only_public_names() -> None:
    """Across packages, import from the package (`from cassettes import X`), never a module."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    offenders = []
    for package in ("evalfiles", "loopback", "recorder", "replayer", "rec"):
        for file in (root / package).rglob("*.py"):
            tree = ast.parse(file.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                    continue
                top, _, rest = node.module.partition(".")
                if top in PACKAGES and top != package:
                    public = importlib.import_module(top).__all__
                    for alias in node.names:
                        if rest or alias.name not in public:
                            offenders.append(
                                f"{file.relative_to(root)}: {node.module}.{alias.name}"
                            )
    assert offenders == []


def test_replayer_imports_without_adk() -> None:
    """The pytest plugin and `rec serve` load `replayer` in environments without google-adk."""
    import subprocess
    import sys

    code = (
        "import sys, builtins\n"
        "real = builtins.__import__\n"
        "def guard(name, *a, **k):\n"
        "    if name.startswith('google.adk'):\n"
        "        raise ImportError('no adk here')\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = guard\n"
        "import replayer, replayer.pytest_plugin, replayer.replay_api\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr
