"""The ADK eval files rec reads and writes: EvalSets, eval configs, EvalSetResults.

Also what turns other data into them: extraction of conversations from recorded model
traffic, the importers (ADK sessions, session databases, legacy eval files) and strict
checking (``rec check``). Files in, typed models out; no sockets, no event loop.
"""

from __future__ import annotations

from .checking import (
    FileKind,
    Problem,
    check_document,
    check_file,
    check_paths,
    detect_kind,
)
from .eval_config import (
    ADK_METRICS,
    DEFAULT_EVAL_CONFIG,
    REC_METRICS,
    CodeConfig,
    Criterion,
    CustomMetricConfig,
    EvalConfig,
    MatchType,
    MetricSpec,
    ToolArgRule,
    find_eval_config,
    load_eval_config,
    parse_eval_config,
)
from .eval_result import (
    EvalCaseResult,
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalSetResult,
    EvalStatus,
    dump_eval_set_result,
    save_eval_set_result,
)
from .evalset import (
    EvalCase,
    EvalSet,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    SessionInput,
    dump_evalset,
    invocation_tool_calls,
    invocation_tool_responses,
    load_evalset,
    parse_evalset,
    save_evalset,
)
from .evalset_writer import (
    ADK_DEFAULT_CRITERIA,
    eval_set_id_for,
    redact_evalset,
    write_evalset_files,
    write_recording_evalset,
)
from .extraction import (
    Conversation,
    evalset_from_exchanges,
    extract_conversations,
    is_genuine_user_content,
)
from .importers import ImportHint, ImportResult, import_source
from .user_code import import_callable

__all__ = [
    "ADK_DEFAULT_CRITERIA",
    "ADK_METRICS",
    "CodeConfig",
    "Conversation",
    "Criterion",
    "CustomMetricConfig",
    "DEFAULT_EVAL_CONFIG",
    "EvalCase",
    "EvalCaseResult",
    "EvalConfig",
    "EvalMetric",
    "EvalMetricResult",
    "EvalMetricResultPerInvocation",
    "EvalSet",
    "EvalSetResult",
    "EvalStatus",
    "FileKind",
    "ImportHint",
    "ImportResult",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "MatchType",
    "MetricSpec",
    "Problem",
    "REC_METRICS",
    "SessionInput",
    "ToolArgRule",
    "check_document",
    "check_file",
    "check_paths",
    "detect_kind",
    "dump_eval_set_result",
    "dump_evalset",
    "eval_set_id_for",
    "evalset_from_exchanges",
    "extract_conversations",
    "find_eval_config",
    "import_callable",
    "import_source",
    "invocation_tool_calls",
    "invocation_tool_responses",
    "is_genuine_user_content",
    "load_eval_config",
    "load_evalset",
    "parse_eval_config",
    "parse_evalset",
    "redact_evalset",
    "save_eval_set_result",
    "save_evalset",
    "write_evalset_files",
    "write_recording_evalset",
]
