"""Run one eval case through a plain google-genai program (``module:function``).

The program is called once per user turn (see :mod:`replayer._agent_loading` for the
protocol). Its actual invocations are extracted from the model traffic it made, with the
same extractor ``rec start`` uses: the exchanges the model backend answered during the
case — replayed, recorded by ``--record-missing``, or, with ``--live``, seen by a recording
proxy whose cassette is discarded. Cases of a program run one at a time, so what was
answered between the start and the end of a case is that case's traffic.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from cassettes._evalset import EvalCase, Invocation
from cassettes._extraction import evalset_from_exchanges
from replayer._agent_loading import LoadedAgent, ProgramSession
from replayer._case_failure import CaseFailure
from replayer._model_backend import ModelBackend
from replayer._served_reads import CaseReads, reading_turn
from replayer._session_identity import session_identity

__all__ = ["run_program_case"]


def _content_text(invocation: Invocation) -> str:
    return "\n".join(p.text for p in invocation.user_content.parts or [] if p.text)


async def run_program_case(
    agent: LoadedAgent,
    case: EvalCase,
    backend: ModelBackend,
    *,
    run: int = 0,
    on_turn: Callable[[int], None] | None = None,
    reads: CaseReads | None = None,
) -> list[Invocation] | CaseFailure:
    """Send the case's user turns to the program; extract its invocations from the traffic.

    A turn in which a model call missed fails the case with that miss, even when the
    program caught the client's error itself. ``on_turn`` is called with each turn's
    0-based index before it is sent (the frozen clock moves to its recorded start).
    ``reads``: what each turn's code reads of the clock, randomness and ids, served from
    (or, in record mode, recorded into) the recording.
    """
    assert agent.program is not None
    app_name, user_id, session_id = session_identity(case, agent.app_name, run)
    state = copy.deepcopy(case.session_input.state) if case.session_input else {}
    session = ProgramSession(app_name, user_id, session_id, state)
    channel = backend.channel
    start = channel.mark()
    for turn, invocation in enumerate(case.conversation or []):
        session.turn = turn
        if on_turn is not None:
            on_turn(turn)
        before = channel.mark()
        try:
            with reading_turn(reads, turn):
                await agent.program(_content_text(invocation), session)
        except Exception as exc:  # noqa: BLE001 - every failure of the program fails the case
            miss = channel.miss_behind(exc)
            detail = str(miss) if miss is not None else f"{type(exc).__name__}: {exc}"
            return CaseFailure(case.eval_id, f"turn {turn + 1}: {detail}", miss, turn=turn + 1)
        _, missed = channel.since(before)
        if missed:
            return CaseFailure(
                case.eval_id,
                f"turn {turn + 1}: a model call missed (the program went on without its "
                f"answer): {missed[0]}",
                missed[0],
                turn=turn + 1,
            )
    played, _ = channel.since(start)
    extracted = evalset_from_exchanges(
        played, eval_set_id="actual", app_name=app_name, user_id=user_id
    )
    if not extracted.eval_cases:
        return CaseFailure(case.eval_id, "the program made no model call")
    conversation: list[Invocation] | None = extracted.eval_cases[0].conversation
    return list(conversation or [])
