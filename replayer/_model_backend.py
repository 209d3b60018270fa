"""Where model answers come from in ``rec replay``, one source per :class:`RecordMode`.

- ``replay`` (default): the in-process replay proxy serves the recordings; a request
  with no recording is answered with an error that explains the divergence (fail
  closed); a placeholder API key is supplied when none is set (no credentials needed).
- ``record``: every request is forwarded upstream and the recording is written anew
  (atomically when the run ends). Needs credentials.
- ``auto`` (``--record-missing``): hits are replayed, misses forwarded upstream and
  appended to the recording (written atomically when the run ends). Needs credentials.
- ``live``: no proxy; google-genai talks to the real model with the environment's
  credentials.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from typing_extensions import TypedDict, Unpack, assert_never

from cassettes._cassette import Exchange
from cassettes._divergence import CLI_HINTS, MissHints
from cassettes._errors import InputError
from cassettes._file_names import CASSETTE_SUFFIX, recording_name
from cassettes._matching import MatchRules
from cassettes._record_mode import RecordMode
from recorder._traffic import DEFAULT_UPSTREAM, Upstreams, pointing_clients_at
from replayer._auto_mode import recorder_for
from replayer._replay_api import replay, replay_async
from replayer._replay_channel import ReplayChannel
from replayer._replay_handler import LoadedCassette, ReplayHandler
from replayer._tool_replay import ToolTrafficReplay, tool_exchanges

if TYPE_CHECKING:
    from recorder import Recorder

__all__ = ["ModelBackend", "model_backend", "model_backend_async", "recording_tool_calls"]


@dataclass(frozen=True)
class ModelBackend:
    """The running model source of a run.

    ``channel`` tells the runner what each case was served and what missed; ``replaying``
    is the cassette server in replay and auto modes (what it left unplayed).
    """

    mode: RecordMode
    channel: ReplayChannel = field(default_factory=ReplayChannel)
    url: str | None = None
    """The in-process proxy's base URL (None in live mode without observation)."""
    replaying: ReplayHandler | None = None
    tool_traffic: Path | None = None
    """Record and auto modes without ``serve_tools``: the file the recording reads its tools'
    own HTTP calls from when it is written, for the runner to record them into with
    :func:`recording_tool_calls` (with ``serve_tools`` the model source records them)."""
    reads_journal: Path | None = None
    """Record mode: the journal the recording reads the agent's reads of the clock,
    randomness and ids from when it is written."""

    def unused(self, cassettes: Sequence[Path] | None = None) -> list[Exchange]:
        """Recorded exchanges nothing played (only those from ``cassettes`` when given)."""
        if self.replaying is None:
            return []
        found = self.replaying.unused()
        if cassettes is None:
            return found
        wanted = {Path(c).resolve() for c in cassettes}
        origin = self.replaying.origin
        return [e for e in found if (o := origin(e)) is not None and o.resolve() in wanted]


class BackendOptions(TypedDict, total=False):
    """The keyword arguments of :func:`model_backend` that :func:`model_backend_async` passes on."""

    rules: MatchRules | None
    upstream: str
    observe: bool
    hints: MissHints
    preloaded: Sequence[LoadedCassette] | None
    serve_tools: bool


@contextlib.asynccontextmanager
async def model_backend_async(
    mode: RecordMode,
    cassettes: Sequence[Path],
    *,
    same_loop: bool = False,
    **options: Unpack[BackendOptions],
) -> AsyncIterator[ModelBackend]:
    """:func:`model_backend` for an async runner.

    With ``same_loop``, replay mode serves the recordings on the caller's own event loop
    (:func:`~replayer._replay_api.replay_async`: no thread hop per model call); only for a
    runner whose model calls are all async and that never waits synchronously on the loop
    (an ADK agent with mock tools). Every other case runs as :func:`model_backend` does;
    ``options`` are its keyword arguments.
    """
    if mode is RecordMode.REPLAY and same_loop and cassettes:
        channel = ReplayChannel(hints=options.get("hints", CLI_HINTS))
        async with replay_async(
            *cassettes,
            rules=options.get("rules"),
            log_misses=False,
            channel=channel,
            preloaded=options.get("preloaded"),
            ordered=True,  # rec runs the agent: ParallelAgent branches in recorded order
            serve_tools=options.get("serve_tools", True),
        ) as replaying:
            yield ModelBackend(
                mode, replaying.channel, url=replaying.url, replaying=replaying.handler
            )
        return
    with model_backend(mode, cassettes, **options) as backend:
        yield backend


@contextlib.contextmanager
def model_backend(
    mode: RecordMode,
    cassettes: Sequence[Path],
    *,
    rules: MatchRules | None = None,
    upstream: str = DEFAULT_UPSTREAM,
    observe: bool = False,
    hints: MissHints = CLI_HINTS,
    preloaded: Sequence[LoadedCassette] | None = None,
    serve_tools: bool = True,
) -> Iterator[ModelBackend]:
    """Start the model source for a run (see the module docstring).

    With ``observe`` (plain programs, whose invocations come from their traffic), live mode
    runs through a recording proxy whose cassette is thrown away, so the traffic is seen.
    ``hints``: whose options a miss's fix names (``ReplayChannel.hints``).
    ``preloaded``: the replay mode's cassettes already loaded (the run loads each once).
    ``serve_tools``: the process's tool HTTP calls are the model source's: replay mode
    answers them from the cassettes (``rec.replay``'s ``serve_tools``), record and auto
    mode record them (:func:`recording_tool_calls`); off for a run that serves and records
    them itself (record and auto mode then name the file in ``tool_traffic``).

    Raises:
        InputError: replay with no recording, or record/auto with several.
    """
    if mode is RecordMode.REPLAY:
        with _replaying(
            cassettes, rules=rules, hints=hints, preloaded=preloaded, tools=serve_tools
        ) as backend:
            yield backend
    elif mode is RecordMode.RECORD or mode is RecordMode.AUTO:
        with _recording(
            mode, cassettes, rules=rules, upstream=upstream, tools=serve_tools
        ) as backend:
            yield backend
    elif mode is RecordMode.LIVE:
        if not observe:
            yield ModelBackend(mode)
            return
        with _observing(upstream) as backend:
            yield backend
    else:
        assert_never(mode)


@contextlib.contextmanager
def _replaying(
    cassettes: Sequence[Path],
    *,
    rules: MatchRules | None,
    hints: MissHints,
    preloaded: Sequence[LoadedCassette] | None,
    tools: bool,
) -> Iterator[ModelBackend]:
    """Replay mode's model source: a replay proxy serving the recordings."""
    if not cassettes:
        raise InputError(
            "no recording to replay",
            fix="Record one with `rec start`, pass --recording, or run with --live",
        )
    # The case fails with the miss: the report prints it, the log need not.
    channel = ReplayChannel(hints=hints)
    with replay(
        *cassettes,
        rules=rules,
        log_misses=False,
        channel=channel,
        preloaded=preloaded,
        ordered=True,  # rec runs the agent: ParallelAgent branches in recorded order
        serve_tools=tools,
    ) as replaying:
        yield ModelBackend(
            RecordMode.REPLAY, replaying.channel, url=replaying.url, replaying=replaying.handler
        )


@contextlib.contextmanager
def _observing(upstream: str) -> Iterator[ModelBackend]:
    """Live mode for a plain program: a recording proxy whose cassette is thrown away, so
    the traffic is seen."""
    channel = ReplayChannel()
    with tempfile.TemporaryDirectory(prefix="rec-live-") as scratch:
        session = recorder_for(
            RecordMode.RECORD,
            scratch,
            name="live",
            channel=channel,
            upstreams=Upstreams(gemini=upstream),
            write_evalset=False,
        )
        with session.running_in_thread(), pointing_clients_at(session.url):
            yield ModelBackend(RecordMode.LIVE, channel, url=session.url)


@contextlib.contextmanager
def _recording(
    mode: RecordMode,
    cassettes: Sequence[Path],
    *,
    rules: MatchRules | None,
    upstream: str,
    tools: bool,
) -> Iterator[ModelBackend]:
    """Record or auto mode's model source: a recorder writing the one recording; with
    ``tools``, the process's tool HTTP calls recorded beside the model's."""
    if len(cassettes) != 1:
        raise InputError(
            f"{mode} mode writes one recording; {len(cassettes)} were found",
            path="--recording",
            fix=f"Name one *{CASSETTE_SUFFIX} with --recording",
        )
    target = cassettes[0]
    channel = ReplayChannel()
    session = recorder_for(
        mode,
        target.parent,
        name=recording_name(target),
        rules=rules,
        channel=channel,
        upstreams=Upstreams(gemini=upstream),
        write_evalset=False,
        overwrite=True,  # --mode record names the recording it re-records
        evalset_is_input=True,  # the eval set this run replays
    )
    with (
        session.running_in_thread(),
        pointing_clients_at(session.url),
        contextlib.ExitStack() as stack,
    ):
        handler = session.server.handler if session.server is not None else None
        replaying = handler if isinstance(handler, ReplayHandler) else None
        if tools:
            # Left before the recording is written (its tools file is read then).
            _record_tool_calls(stack, session, replaying, label=str(target))
        yield ModelBackend(
            mode,
            channel,
            url=session.url,
            replaying=replaying,
            tool_traffic=None if tools else session.paths.tools,
            reads_journal=session.paths.reads if mode is RecordMode.RECORD else None,
        )


def _record_tool_calls(
    stack: contextlib.ExitStack, session: Recorder, replaying: ReplayHandler | None, *, label: str
) -> None:
    """Record the process's tool HTTP calls beside the model's for the stack's block; auto
    mode answers those its recording holds."""
    served = _recorded_tools(replaying, label=label)
    stack.enter_context(recording_tool_calls(session.paths.tools, own=[session.url], tools=served))
    if served is not None:
        stack.enter_context(served.serving())


def _recorded_tools(replaying: ReplayHandler | None, *, label: str) -> ToolTrafficReplay | None:
    """Auto mode (``replaying``): the tool calls its recording holds, to answer them from;
    record mode: None (every call is sent)."""
    if replaying is None:
        return None
    held = [e for loaded in replaying.cassettes for e in tool_exchanges(loaded.cassette.exchanges)]
    # What the recording cannot replay runs for real, as in record mode: MCP servers too.
    return ToolTrafficReplay(held, label=label, live_mcp=True)


@contextlib.contextmanager
def recording_tool_calls(
    path: Path, *, own: Collection[str], tools: ToolTrafficReplay | None
) -> Iterator[None]:
    """Record the process's tool HTTP calls into ``path`` (the recording's tools file, read
    when it is written) for the block: the one road of record and auto mode, whether the
    model source or the run serves the tools.

    Record mode (no ``tools``): every call is sent for real and recorded. Auto mode:
    ``tools`` answers the calls its recording holds and sends and records the rest (its
    ``record_missing``); serving ``tools`` is the caller's. ``own``: rec's proxy (never a
    tool's call).
    """
    from recorder import capturing_tool_traffic, sending_tool_calls

    if tools is None:
        with capturing_tool_traffic(path, own=own):
            yield
        return
    tools.own = tuple(own)
    tools.record_missing = sending_tool_calls(path, own=own)
    try:
        yield
    finally:
        tools.record_missing = None
