"""A trace's sessions as an EvalSet and its cassette: ``rec import TRACE``.

Each session's model calls (:mod:`.adk_trace`) become the cassette's exchanges, and its
eval case is extracted from them exactly as from a recording's traffic (a tool result no
model request carries comes from its ``execute_tool`` span: :mod:`.trace_tools`), so the
case and the cassette agree: ``rec replay AGENT DIR`` answers the agent from the production run
with no key and no network. A session the trace cannot rebuild (content capture off) is
written as a case that fails at replay with the reason, never left out in silence.
"""

from __future__ import annotations

import logging
from pathlib import Path

from cassettes import _genai_types as genai_types
from cassettes._cassette import Cassette, TraceImport
from cassettes._errors import InputError
from cassettes._evalset import EvalCase, EvalSet, Invocation, SessionInput
from cassettes._extraction import evalset_from_exchanges, unique_id
from recorder._importers.adk_trace import GEMINI_API, TracedSession, traced_sessions
from recorder._importers.conversion import Conversion
from recorder._importers.selection import select_sessions
from recorder._importers.trace_spans import TraceSpan
from recorder._importers.trace_tools import TracedTool, traced_tools, with_tool_results

__all__ = ["convert_sessions", "convert_trace"]

log = logging.getLogger(__name__)

_SCHEMAS = {
    "legacy": "ADK's legacy telemetry schema (call_llm spans)",
    "semconv": "ADK's GenAI semantic conventions (generate_content spans)",
    "bigquery": "ADK's BigQuery Agent Analytics plugin",
}
NOT_IN_TRACE = "(not in the trace: see why in the recording beside this eval set)"
"""The user turn of a case its trace cannot rebuild: the case fails at replay with the
reason the recording keeps (``trace.unreplayable``)."""
_NO_STATE = (
    "no trace holds a session's starting state: if the agent's instructions read session "
    "state, set session_input.state in the EvalSet by hand"
)


def _eval_id(session_id: str, taken: set[str]) -> str:
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in session_id) or "session"
    return unique_id(base, taken)


def _selected(
    sessions: list[TracedSession], *, session_id: str | None, latest: int | None, path: Path
) -> list[TracedSession]:
    return select_sessions(
        sessions,
        lambda s: s.session_id,
        session_id=session_id,
        latest=latest,
        path=path,
        where="trace",
        fix="Check the session id (gen_ai.conversation.id in the trace)",
    )


def _cases(
    traced: TracedSession, eval_set_id: str, taken: set[str], tools: list[TracedTool]
) -> list[EvalCase]:
    user_id = traced.user_id or "user"
    if traced.unreplayable is not None and traced.case is not None:
        return [traced.case.model_copy(update={"eval_id": _eval_id(traced.session_id, taken)})]
    if traced.unreplayable is not None:
        text = genai_types.Content(role="user", parts=[genai_types.Part(text=NOT_IN_TRACE)])
        turns = [
            Invocation(invocation_id=turn, user_content=text) for turn in traced.invocations or [""]
        ]
        return [
            EvalCase(
                eval_id=_eval_id(traced.session_id, taken),
                conversation=turns,
                session_input=SessionInput(app_name="rec", user_id=user_id, state={}),
            )
        ]
    extracted = evalset_from_exchanges(
        traced.exchanges, eval_set_id=eval_set_id, user_id=user_id, initial_state=traced.state
    )
    return [
        with_tool_results(case, tools).model_copy(
            update={"eval_id": _eval_id(traced.session_id, taken)}
        )
        for case in extracted.eval_cases
    ]


def convert_trace(
    spans: list[TraceSpan],
    *,
    shape: str,
    path: Path,
    name: str,
    eval_set_id: str,
    session_id: str | None = None,
    latest: int | None = None,
) -> Conversion:
    """The EvalSet and cassette of a trace's sessions (one case per session).

    Raises:
        InputError: the trace holds no ADK model call, or not the session asked for.
    """
    sessions = traced_sessions(spans)
    if not sessions:
        raise InputError(
            f"no ADK model call in the trace ({len(spans)} span(s); expected call_llm or "
            "generate_content spans carrying a session id)",
            path=path,
            fix="Export the spans of an ADK agent's run (its OTLP exporter, or adk web's "
            "/dev/apps/APP/debug/trace/session/ID)",
        )
    sessions = _selected(sessions, session_id=session_id, latest=latest, path=path)
    return convert_sessions(
        sessions, traced_tools(spans), shape=shape, name=name, eval_set_id=eval_set_id
    )


def convert_sessions(
    sessions: list[TracedSession],
    tools: dict[str, list[TracedTool]],
    *,
    shape: str,
    name: str,
    eval_set_id: str,
) -> Conversion:
    """The EvalSet and cassette of sessions read from a trace (or from rows that hold the
    same calls): one case per session, its model calls as the cassette's exchanges."""
    taken: set[str] = set()
    cases: list[EvalCase] = []
    unreplayable: dict[str, str] = {}
    exchanges = []
    skipped = 0
    for traced in sessions:
        found = _cases(traced, eval_set_id, taken, tools.get(traced.session_id, []))
        if not found:
            skipped += 1
            continue
        if traced.unreplayable is not None:
            unreplayable[found[0].eval_id] = traced.unreplayable
        cases.extend(found)
        exchanges.extend(traced.exchanges)
    exchanges = [e.model_copy(update={"id": n}) for n, e in enumerate(exchanges)]
    gaps = list(dict.fromkeys(g for e in exchanges for g in e.not_compared or []))
    schemas = sorted({_SCHEMAS[s.schema] for s in sessions})
    cassette = Cassette(
        name=name,
        upstream=GEMINI_API,
        exchanges=exchanges,
        trace=TraceImport(
            source=f"{shape}, {' and '.join(schemas)}",
            not_compared=gaps,
            unreplayable=unreplayable,
        ),
    )
    lacks = [line for s in sessions for line in s.lacks]
    stateless = any(s.state is None for s in sessions)
    return Conversion(
        evalset=EvalSet(eval_set_id=eval_set_id, name=eval_set_id, eval_cases=cases),
        name=name,
        cassette=cassette,
        skipped_sessions=skipped,
        notes=[_NO_STATE] if stateless else [],
        lacks=lacks,
    )
