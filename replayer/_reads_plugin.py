"""The ADK plugin that serves (or, under ``--mode record``, records) a case's reads.

:class:`ReadsPlugin` goes first among a case's ADK plugins: it starts the case's read
session for each turn (:meth:`CaseReads.session <replayer._served_reads.CaseReads.session>`)
and moves the reader as ADK's callbacks run, the same way rec's capture plugin moved it
while recording (``recorder._traffic._reader_callbacks``). Kept apart from
``replayer._served_reads``, which plain google-genai programs use without ADK installed.
"""

from __future__ import annotations

from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from recorder._traffic import (
    ReaderCallbacks,
    ReadSession,
    begin_invocation,
    end_invocation,
    in_tool,
)
from replayer._served_reads import CaseReads

__all__ = ["ReadsPlugin"]


class ReadsPlugin(ReaderCallbacks, BasePlugin):
    """Serves (or records) one case's reads: its read session per turn, the reader moved
    by ADK's callbacks as the capture plugin moved it while recording."""

    def __init__(self, reads: CaseReads) -> None:
        super().__init__(name="rec_served_reads")
        self.reads = reads
        self._turn = 0
        self._sessions: dict[str, ReadSession] = {}
        """Per running invocation, the session its reads go to."""

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        if in_tool():  # a run inside a tool (AgentTool) reads as the tool
            return None
        session = self._sessions[invocation_context.invocation_id] = self.reads.session(self._turn)
        self._turn += 1
        begin_invocation(session)
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        if in_tool():
            return
        end_invocation()
        session = self._sessions.pop(invocation_context.invocation_id, None)
        if session is not None:
            self.reads.turn_ended(session)
