"""Run one eval case through an ADK agent, as ADK's ``EvaluationGenerator`` does.

The session is created from ``session_input`` (app_name, user_id, state, the fixed
session id) in ADK's in-memory services; each invocation's ``user_content`` is sent in
order through ADK's ``Runner``; the events are turned into invocations by ADK's own
converter (``EvaluationGenerator.convert_events_to_eval_invocations``) and loaded into
rec's EvalSet models. The Runner is built as ADK's eval builds it: from a copy of the
module's ``App`` (its plugins kept) with rec's plugins appended, or from the bare agent.

A run that cannot finish (a replay miss, an unrecorded tool call, a tool that raises)
is a :class:`CaseFailure` whose reason says where: "turn 2, model call 1: ...".
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types as genai_types

from cassettes._errors import RecError, ReplayMiss
from cassettes._eval_config import DEFAULT_LIVE_TIMEOUT_SECONDS
from cassettes._evalset import EvalCase, Invocation
from replayer._agent_loading import LoadedAgent
from replayer._case_failure import CaseFailure
from replayer._compat import adk_normalize_live_transcriptions
from replayer._mock_tools import MockToolsPlugin, ToolResponseBook
from replayer._reads_plugin import ReadsPlugin
from replayer._served_reads import CaseReads
from replayer._session_identity import session_identity
from replayer._user_simulator import user_simulator_for

__all__ = ["AdkRunSettings", "CaseFailure", "TurnTracker", "run_adk_case"]


@dataclass
class TurnTracker:
    """Where a case run is: the 1-based turn and the model calls made in it."""

    turn: int = 0
    model_calls: int = 0
    tool_calls: list[str] = field(default_factory=list)
    simulating: bool = False
    """ADK's user simulator is writing this turn's user message (a scenario case)."""

    def where(self) -> str:
        if self.simulating:
            return f"turn {self.turn}, the user simulator's model call"
        if self.model_calls:
            return f"turn {self.turn}, model call {self.model_calls}"
        return f"turn {self.turn}"


class _TrackingPlugin(BasePlugin):
    def __init__(self, tracker: TurnTracker) -> None:
        super().__init__(name="rec_turn_tracker")
        self.tracker = tracker

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> None:
        self.tracker.model_calls += 1


def _to_rec_invocation(adk_invocation: Any) -> Invocation:
    data = adk_invocation.model_dump(exclude_none=True, by_alias=False)
    data.pop("app_details", None)
    return Invocation.model_validate(data)


def _explain(
    exc: BaseException,
    tracker: TurnTracker,
    find_miss: Callable[[BaseException], ReplayMiss | None],
) -> tuple[str, ReplayMiss | None]:
    chain: list[BaseException] = []
    cursor: BaseException | None = exc
    while cursor is not None and cursor not in chain:
        chain.append(cursor)
        cursor = cursor.__cause__ or cursor.__context__
    for error in chain:
        if isinstance(error, RecError):
            return f"{tracker.where()}: {error}", error if isinstance(error, ReplayMiss) else None
    miss = find_miss(exc)
    if miss is not None:
        return f"{tracker.where()}: {miss}", miss
    from google.genai import errors as genai_errors

    for error in chain:
        if isinstance(error, genai_errors.APIError):
            return f"{tracker.where()}: the model call failed: {error}", None
    where = tracker.where()
    if tracker.tool_calls:
        where += f" (while running {tracker.tool_calls[-1]})"
    return f"{where}: {type(exc).__name__}: {exc}", None


class _ToolWatch(BasePlugin):
    """Remembers the tool being run, to name it when a real tool raises (--live-tools)."""

    def __init__(self, tracker: TurnTracker) -> None:
        super().__init__(name="rec_tool_watch")
        self.tracker = tracker

    async def before_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
    ) -> None:
        self.tracker.tool_calls.append(tool.name)


def _no_miss(error: BaseException) -> ReplayMiss | None:
    return None


@dataclass(frozen=True)
class AdkRunSettings:
    """How a case runs through ADK's Runner, beyond its agent, case, run and tool book."""

    extra_plugins: tuple[BasePlugin, ...] = ()
    """More plugins (e.g. ADK's retry plugin in live mode)."""
    find_miss: Callable[[BaseException], ReplayMiss | None] = _no_miss
    """The replay miss behind a failure, if any
    (:meth:`replayer._replay_channel.ReplayChannel.miss_behind`)."""
    streaming: bool = False
    """Run ADK with ``StreamingMode.SSE`` (``:streamGenerateContent``), as ``adk web``'s
    streaming toggle does; its partial events are left out of the invocations (ADK keeps
    them out of the session too)."""
    live: dict[str, Any] | None = None
    """Run the case through ``Runner.run_live`` (a Gemini Live session) with these
    ``RunConfig`` settings (:func:`replayer._streaming_mode.recorded_live`); see
    :func:`_run_live_turns`."""
    on_turn: Callable[[int], None] | None = None
    """Called with each turn's 0-based index before it is sent (the frozen clock moves to
    the turn's recorded start)."""
    user_simulator_config: dict[str, Any] | None = None
    """The eval config's ``user_simulator_config`` (scenario cases; None: ADK's default
    simulator)."""
    live_timeout_seconds: float = DEFAULT_LIVE_TIMEOUT_SECONDS
    """How long a Live turn may take to complete, as ADK's
    ``live_model_config.timeout_seconds`` (its default: 300 s)."""
    reads: CaseReads | None = None
    """The case's recorded reads of the clock, randomness and ids, served to its agent's
    code turn by turn (:mod:`replayer._served_reads`); None: real reads."""


async def run_adk_case(
    agent: LoadedAgent,
    case: EvalCase,
    *,
    run: int = 0,
    book: ToolResponseBook | None = None,
    settings: AdkRunSettings = AdkRunSettings(),  # noqa: B008 - frozen, never changed
) -> list[Invocation] | CaseFailure:
    """Send the case's user turns through ADK's Runner and return the actual invocations.

    A ``conversation_scenario`` case gets its user turns from ADK's user simulator, as in
    ``adk eval`` (:mod:`replayer._user_simulator`): it is asked for each next message with
    the events so far, until it stops or reaches its limit.

    Args:
        agent: the loaded ADK agent (``agent.app`` honoured).
        case: the eval case (``conversation`` gives the user turns).
        run: the run number (keeps session ids unique across ``--num-runs``).
        book: recorded tool responses (mock mode); None runs the real tools.
        settings: streaming or Live, the turn hook, the simulator, served reads, ...

    Returns:
        The invocations ADK's converter produced, or a :class:`CaseFailure`.
    """
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    tracker = TurnTracker()
    app_name, user_id, session_id = session_identity(case, agent.app_name, run)
    sessions = await _new_session(agent, case, app_name, user_id, session_id)
    plugins = _case_plugins(tracker, book, settings.reads, settings.extra_plugins)
    runner_app = _runner_app(agent, app_name, plugins)
    simulator = _user_simulator(case, settings)
    if isinstance(simulator, CaseFailure):
        return simulator
    run_config = _run_config(settings.streaming, settings.live)
    turns = _CaseTurns(case, user_id, session_id, run_config, tracker, book, settings.on_turn)
    try:
        await _run_all_turns(runner_app, app_name, sessions, turns, simulator, settings)
    except Exception as exc:  # noqa: BLE001 - every failure of the agent fails the case
        reason, miss = _explain(exc, tracker, settings.find_miss)
        return CaseFailure(
            case.eval_id,
            reason,
            miss,
            turn=tracker.turn or None,
            model_call=tracker.model_calls or None,
        )
    events = turns.events
    if settings.live is not None:
        events = adk_normalize_live_transcriptions(events)
    converted = EvaluationGenerator.convert_events_to_eval_invocations(events)
    return [_to_rec_invocation(inv) for inv in converted]


async def _new_session(
    agent: LoadedAgent, case: EvalCase, app_name: str, user_id: str, session_id: str
) -> Any:
    """ADK's in-memory session service holding the case's session (its initial state),
    with the agent's module state reset for the run."""
    from google.adk.sessions import InMemorySessionService

    sessions = InMemorySessionService()
    state = copy.deepcopy(case.session_input.state) if case.session_input else {}
    await sessions.create_session(
        app_name=app_name, user_id=user_id, state=state, session_id=session_id
    )
    if agent.reset is not None:
        agent.reset()
    return sessions


def _user_simulator(case: EvalCase, settings: AdkRunSettings) -> Any:
    """ADK's user simulator for a scenario case (None for a recorded conversation), or the
    :class:`CaseFailure` saying why the case cannot run."""
    if case.conversation is not None:
        return None
    try:
        simulator = user_simulator_for(case, settings.user_simulator_config)
    except RecError as exc:
        return CaseFailure(case.eval_id, str(exc))
    if settings.live is not None:
        return CaseFailure(
            case.eval_id,
            "the case has a conversation_scenario (ADK's user simulator), which rec "
            "does not run in a Live session: give it a recorded conversation",
        )
    return simulator


async def _run_all_turns(
    runner_app: Any,
    app_name: str,
    sessions: Any,
    turns: _CaseTurns,
    simulator: Any,
    settings: AdkRunSettings,
) -> None:
    """Run the case's turns in one ADK Runner: a Live session, or one run per turn."""
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.memory import InMemoryMemoryService
    from google.adk.runners import Runner

    async with Runner(
        app=runner_app,
        app_name=app_name,
        session_service=sessions,
        artifact_service=InMemoryArtifactService(),
        memory_service=InMemoryMemoryService(),
    ) as runner:
        if settings.live is not None:
            await _run_live_turns(runner, turns, settings.live_timeout_seconds)
        else:
            await _run_turns(runner, turns, simulator)


@dataclass
class _CaseTurns:
    """One case run's turns: where each is sent, and the events collected from them."""

    case: EvalCase
    user_id: str
    session_id: str
    run_config: Any
    tracker: TurnTracker
    book: ToolResponseBook | None
    on_turn: Callable[[int], None] | None
    events: list[Any] = field(default_factory=list)

    def enter(self, index: int) -> None:
        """Tell the tool book and the clock that turn ``index`` (0-based) is being sent."""
        if self.book is not None:
            self.book.start_invocation(index)
        if self.on_turn is not None:
            self.on_turn(index)


def _case_plugins(
    tracker: TurnTracker,
    book: ToolResponseBook | None,
    reads: CaseReads | None,
    extra_plugins: tuple[BasePlugin, ...],
) -> tuple[list[BasePlugin], list[BasePlugin]]:
    """rec's plugins for one run: those that go ahead of the app's own, and those after.

    Ahead of the app's own plugins: the tracker sees every model call even when an app
    plugin answers one, and a mocked tool's recorded (post-callback) response is final.
    """
    first: list[BasePlugin] = [_TrackingPlugin(tracker)]
    if book is not None:
        first.append(MockToolsPlugin(book))
    if reads is not None:  # first of all: it names the reader before a mock tool answers
        first.insert(0, ReadsPlugin(reads))
    return first, [_ToolWatch(tracker), *extra_plugins]


def _runner_app(
    agent: LoadedAgent, app_name: str, plugins: tuple[list[BasePlugin], list[BasePlugin]]
) -> Any:
    """The App the Runner runs: a copy of the module's App with rec's plugins around its own."""
    from google.adk.apps import App

    first, after = plugins
    if isinstance(agent.app, App):
        return agent.app.model_copy(
            update={
                "plugins": [*first, *agent.app.plugins, *after],
                "root_agent": agent.root_agent,
            }
        )
    # A bare agent goes into an App, as ADK's Runner wraps it itself: Runner's own
    # ``plugins=`` argument is deprecated (a DeprecationWarning under -W error).
    # model_construct, like ADK, because app names need not be identifiers here.
    return App.model_construct(name=app_name, root_agent=agent.root_agent, plugins=[*first, *after])


def _run_config(streaming: bool, live: dict[str, Any] | None) -> Any:
    """ADK's RunConfig for the run: SSE or none, or a Live session's recorded settings."""
    # ADK documents StreamingMode at this path (imported there, not re-exported for mypy).
    from google.adk.agents.run_config import RunConfig, StreamingMode  # type: ignore[attr-defined]

    if live is not None:
        return RunConfig.model_validate({**live, "streaming_mode": StreamingMode.BIDI})
    return RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)


async def _run_turns(runner: Any, turns: _CaseTurns, simulator: Any) -> None:
    """Send each user turn through ``Runner.run_async`` until the conversation (or the
    simulator) has no more, collecting the user's message and every final event."""
    from google.adk.events import Event

    tracker, index = turns.tracker, 0
    while True:
        tracker.turn, tracker.model_calls = index + 1, 0
        message = await _next_user_message(turns.case, index, simulator, turns.events, tracker)
        if message is None:
            return
        turns.enter(index)
        invocation_id: str | None = None
        async for event in runner.run_async(
            user_id=turns.user_id,
            session_id=turns.session_id,
            new_message=message,
            run_config=turns.run_config,
        ):
            if invocation_id is None:
                invocation_id = event.invocation_id
                turns.events.append(
                    Event(content=message, author="user", invocation_id=invocation_id)
                )
            if not event.partial:  # a streamed chunk: its final event follows
                turns.events.append(event)
        index += 1


async def _run_live_turns(runner: Any, turns: _CaseTurns, timeout_seconds: float) -> None:
    """Send the case's user turns into one ``Runner.run_live`` session, as ADK's live eval
    driver does, and collect its events into ``turns.events``.

    A text turn goes as content; a turn with ``inline_data`` parts (a recorded audio turn)
    sends only its audio (:func:`_send_live_turn`). A turn ends at the model's
    ``turn_complete`` that follows no tool call (:func:`_await_live_turn_end`). Every event
    of a turn gets the turn's invocation id, and the user's own events (transcriptions) are
    left to the user turn sent.
    """
    from google.adk.agents import LiveRequestQueue
    from google.adk.events import Event

    queue = LiveRequestQueue()
    stream = runner.run_live(
        user_id=turns.user_id,
        session_id=turns.session_id,
        live_request_queue=queue,
        run_config=turns.run_config,
    ).__aiter__()
    try:
        for index, invocation in enumerate(turns.case.conversation or []):
            turns.tracker.turn, turns.tracker.model_calls = index + 1, 1
            turns.enter(index)
            message = genai_types.Content.model_validate(
                invocation.user_content.model_dump(exclude_none=True)
            )
            invocation_id = Event.new_id()
            turns.events.append(Event(content=message, author="user", invocation_id=invocation_id))
            _send_live_turn(queue, message)
            await _await_live_turn_end(stream, turns.events, invocation_id, timeout_seconds)
    finally:
        queue.close()
        await stream.aclose()


def _send_live_turn(queue: Any, message: genai_types.Content) -> None:
    """Send one user turn into the Live session: its text as content, or only its audio:
    ``activity_start``, each part as one realtime chunk (the chunks as recorded, so they
    match by hash), ``activity_end``."""
    audio = [p.inline_data for p in message.parts or [] if p.inline_data is not None]
    if not audio:
        queue.send_content(message)
        return
    queue.send_activity_start()
    for blob in audio:
        queue.send_realtime(blob)
    queue.send_activity_end()


async def _await_live_turn_end(
    stream: Any, events: list[Any], invocation_id: str, timeout_seconds: float
) -> None:
    """Collect the turn's events until the model's ``turn_complete`` that follows no tool
    call (a tool call's own turn end is followed by the model's answer to it).

    A turn that does not complete within ``timeout_seconds`` fails the case, as in ADK's
    live eval.
    """
    import asyncio

    in_tool_call = False
    deadline = asyncio.get_running_loop().time() + timeout_seconds
    while True:
        left = deadline - asyncio.get_running_loop().time()
        try:
            event = await asyncio.wait_for(stream.__anext__(), max(left, 0))
        except asyncio.TimeoutError:  # TimeoutError itself from Python 3.11 on
            raise RecError(
                f"the model did not complete the turn within {timeout_seconds:g} s "
                "(the eval config's live_model_config.timeout_seconds): raise it, or "
                "check that the recording holds the end of the turn"
            ) from None
        event.invocation_id = invocation_id
        if event.author != "user" and not event.partial:
            events.append(event)
        if event.get_function_calls():
            in_tool_call = True
        if event.turn_complete and event.author != "user":
            if not in_tool_call:
                return
            in_tool_call = False


async def _next_user_message(
    case: EvalCase,
    index: int,
    simulator: Any,
    events: list[Any],
    tracker: TurnTracker,
) -> genai_types.Content | None:
    """Turn ``index``'s user message: the recorded one, or the simulator's (None: the end)."""
    if simulator is None:
        conversation = case.conversation or []
        if index >= len(conversation):
            return None
        return genai_types.Content.model_validate(
            conversation[index].user_content.model_dump(exclude_none=True)
        )
    from google.adk.evaluation.simulation.user_simulator import Status

    tracker.simulating = True
    # A copy, as ADK's EvaluationGenerator gives it: the simulator must not edit the events.
    produced = await simulator.get_next_user_message(copy.deepcopy(events))
    tracker.simulating = False
    if produced.status is not Status.SUCCESS:
        return None
    message: genai_types.Content = produced.user_message
    return message
