"""One recording session: proxy + forwarder + journal + state file, start to finish.

A :class:`Recorder` is an async context manager, like the proxy it runs: entering it takes
the recording's owner lock, recovers what dead recorders left in the folder, opens the
journal, starts the proxy and writes the state file; leaving it, however the block ends,
stops the proxy, finalises the journal into the cassette (+ EvalSet) and gives the lock
back. A block that fails before anything was recorded leaves no files behind.

Used by ``rec start`` (in the foreground), and from sync code through
:meth:`Recorder.running_in_thread` (:func:`rec.record`, the pytest plugin).

Example::

    async with Recorder(Path("recordings"), name="checkout") as rec:
        ...  # point clients at rec.url
    print(rec.result.cassette_path)

    with Recorder(Path("recordings"), name="checkout").running_in_thread() as rec:
        ...
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web
from typing_extensions import TypedDict, Unpack

from cassettes._atomic_write import ensure_writable
from cassettes._cassette import Cassette, Exchange, load_cassette
from cassettes._errors import InputError, RunError
from cassettes._file_names import check_recording_name
from cassettes._live import LiveJournalLine
from cassettes._record_mode import RecordMode
from cassettes._redaction import RedactionRules
from cassettes._timing import now_iso
from recorder._adk_eval_command import AdkEvalRun
from recorder._build_worker import BuildWorker, build_together
from recorder._exchange_journal import ExchangeJournal
from recorder._forwarding import Forwarder
from recorder._journal import Journal
from recorder._journal_header import journal_header
from recorder._live_proxy import LiveRelay
from recorder._ownership import OwnerLock, process_start
from recorder._recording import (
    FinalizeResult,
    Finishing,
    finalize_recording,
    recover_stale,
)
from recorder._recording_state import RecorderState, RecordingPaths, write_state
from recorder._traffic import (
    Handler,
    IncomingRequest,
    ProxyServer,
    ResponseWriter,
    Upstreams,
    gateway_mode_refusal,
    running_in_thread,
)

__all__ = [
    "AutoHandlerFactory",
    "RecordHandler",
    "Recorder",
    "RecorderOptions",
    "WiredRecorder",
    "Wiring",
]

log = logging.getLogger(__name__)

AutoHandlerFactory = Callable[[Forwarder, Cassette], Handler]
"""Builds the handler for ``auto`` mode (replay hits, forward misses); the replayer provides it."""


class RecorderOptions(TypedDict, total=False):
    """The public keyword arguments of :class:`Recorder` besides ``name`` and ``mode``, which
    the constructor of a wired recorder passes on unchanged."""

    upstreams: Upstreams | None
    redaction: RedactionRules | None
    host: str
    port: int
    write_evalset: bool
    app_name: str | None
    overwrite: bool


@dataclass(frozen=True)
class Wiring:
    """What rec's own callers give a recorder beside its public options (see
    :class:`WiredRecorder`); a recorder a user builds has none of it."""

    auto_handler: AutoHandlerFactory | None = None
    """The handler of ``auto`` mode, supplied by the replayer (required for ``auto``)."""
    on_recorded: Callable[[Exchange], None] | None = None
    """Called with each exchange once it is journaled, for callers that read a run's
    traffic back (``rec replay``)."""
    adk_eval: AdkEvalRun | None = None
    """The ``adk eval`` command being recorded (:mod:`recorder._adk_eval_command`): the
    EvalSet keeps its scenario cases, ``test_config.json`` its config."""
    evalset_is_input: bool = False
    """The recording is named after the eval set the run replays (``rec replay --mode
    record``): the EvalSet beside it is the run's input, never removed. Otherwise a recording
    made with ``overwrite`` and without ``write_evalset`` removes the EvalSet of the one it
    replaced, whose cases are conversations the new cassette does not hold."""
    worker_at_start: bool = False
    """Start the build worker (:mod:`recorder._build_worker`) with the recording (``rec
    start``: a session by hand is long) instead of once the recording has built its first
    exchanges itself."""


class RecordHandler:
    """Record mode: forward everything to the upstream and journal each exchange (and
    relay each Live session, journaling its frames)."""

    def __init__(self, forwarder: Forwarder, live: LiveRelay | None = None) -> None:
        self.forwarder = forwarder
        self.live = live

    async def handle_live(self, request: web.Request) -> web.StreamResponse:
        if self.live is None:
            raise RuntimeError("this recorder has no Live journal")
        return await self.live.relay(request)

    async def handle(self, request: IncomingRequest, writer: ResponseWriter) -> None:
        refusal = gateway_mode_refusal(request.method, request.path_qs)
        if refusal is not None:
            await writer.send_error(refusal)
            return
        await self.forwarder.forward(request, writer)

    def status(self) -> dict[str, Any]:
        return {
            "mode": "record",
            "recorded": self.forwarder.journal.recorded,
            "refused": self.forwarder.journal.refused,
            "streams_in_flight": self.forwarder.streams_in_flight,
            "live_sessions": self.live.sessions if self.live is not None else 0,
        }

    async def aclose(self) -> None:
        await self.forwarder.aclose()
        if self.live is not None:
            await self.live.aclose()


def _exchange_journal(path: Path) -> Journal[Exchange]:
    """The recording's journal, opened with the header that says its exchanges are scanned
    (every one is, by the forwarder, before it is written); the build worker's lines of a
    group are asked for in one round trip."""
    return Journal[Exchange](path, header=journal_header(), prepare=build_together)


@dataclass
class _Live:
    """What a recorder holds while it records (all of it, or none of it)."""

    lock: OwnerLock
    journal: Journal[Exchange]
    live_journal: Journal[LiveJournalLine]
    forwarder: Forwarder
    server: ProxyServer
    stop: asyncio.Event
    loop: asyncio.AbstractEventLoop


@dataclass
class _Opened:
    """What a starting recorder has opened so far (closed again if the start fails)."""

    journal: Journal[Exchange] | None = None
    live_journal: Journal[LiveJournalLine] | None = None
    worker: BuildWorker | None = None
    forwarder: Forwarder | None = None


class Recorder:
    """A recording session on ``out_dir/name`` (see the module docstring).

    Args:
        out_dir: the recording folder.
        name: the recording's name (files are ``name.cassette.json`` etc.).
        upstreams: where to forward.
        mode: ``record`` (forward everything into a new recording) or ``auto`` (replay
            what the cassette has, record the rest into it).
        overwrite: in ``record`` mode, replace a recording of the same name that already
            holds data (finished, or recovered from a recorder that died); without it such
            a name is refused, so a re-run from shell history never loses a recording.
        redaction: extra redaction rules.
        host, port: where to listen (127.0.0.1 and a free port by default).
        write_evalset: write ``name.evalset.json`` when finalising.
        app_name: ``session_input.app_name`` for that EvalSet.
    """

    _wiring = Wiring()
    """None of rec's own wiring (:class:`WiredRecorder` sets its own before initialising)."""

    def __init__(
        self,
        out_dir: str | Path,
        *,
        name: str,
        upstreams: Upstreams | None = None,
        mode: RecordMode | str = RecordMode.RECORD,
        redaction: RedactionRules | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        write_evalset: bool = True,
        app_name: str | None = None,
        overwrite: bool = False,
    ) -> None:
        chosen = RecordMode.parse(mode, source="--mode")
        if chosen not in (RecordMode.RECORD, RecordMode.AUTO):
            raise InputError(
                f"a recorder cannot run in {chosen} mode", path="--mode", fix="Use record or auto"
            )
        wiring = self._wiring
        if chosen is RecordMode.AUTO and wiring.auto_handler is None:
            raise InputError(
                "auto mode needs the replayer", path="--mode", fix="Use `rec start --mode auto`"
            )
        check_recording_name(name)
        self.paths = RecordingPaths(Path(out_dir), name)
        self.upstreams = upstreams or Upstreams()
        self.mode = chosen
        self.write_evalset = write_evalset
        self.app_name = app_name
        self.overwrite = overwrite
        self.adk_eval = wiring.adk_eval
        self.replaces_evalset = overwrite and not write_evalset and not wiring.evalset_is_input
        self.recovered: list[FinalizeResult] = []
        """What entering recovered from recorders that had died on this folder."""
        self.result: FinalizeResult | None = None
        """What leaving wrote (None until then, and when a failed block recorded nothing)."""
        self._auto_handler = wiring.auto_handler
        self._on_recorded = wiring.on_recorded
        self._worker_at_start = wiring.worker_at_start
        self._redaction = redaction or RedactionRules()
        self._host = host
        self._port = port
        self._live: _Live | None = None
        self._used = False
        self._stops_on_request = True
        """False when another program's block decides the end (:meth:`running_in_thread`)."""

    # -- while recording ---------------------------------------------------------------

    def _running(self) -> _Live:
        if self._live is None:
            raise RuntimeError(f"the recorder of {self.paths.name!r} is not recording")
        return self._live

    @property
    def url(self) -> str:
        """The proxy's base URL (while recording)."""
        return self._running().server.url

    @property
    def server(self) -> ProxyServer:
        """The proxy (while recording)."""
        return self._running().server

    @property
    def forwarder(self) -> Forwarder:
        """The forwarder that records the exchanges (while recording)."""
        return self._running().forwarder

    def request_stop(self) -> None:
        """Ask the recording to end (``rec stop``, a signal); safe from any thread."""
        live = self._live
        if live is not None:
            live.loop.call_soon_threadsafe(live.stop.set)

    async def wait_for_stop(self) -> None:
        """Return once :meth:`request_stop` was called."""
        await self._running().stop.wait()

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> Recorder:
        if self._used:
            raise RuntimeError("a Recorder records once; make a new one")
        self._used = True
        lock = await self._owned()
        opened = _Opened()
        try:
            self.recovered = await asyncio.to_thread(
                recover_stale,
                self.paths.out_dir,
                write_evalset=self.write_evalset,
                owned=self.paths,
            )
            await asyncio.to_thread(self._refuse_to_overwrite)  # stats files: off the loop
            existing = Cassette(name=self.paths.name)
            if self.mode is RecordMode.AUTO and self.paths.cassette.exists():
                existing = await asyncio.to_thread(load_cassette, self.paths.cassette)
            id_offset = max((e.id for e in existing.exchanges), default=-1) + 1
            await self._open(opened, id_offset)
            assert opened.forwarder is not None and opened.journal is not None
            assert opened.live_journal is not None
            token = secrets.token_urlsafe(32)
            handler = self._handler(opened.forwarder, opened.live_journal, existing)
            server = self._server(handler, token)
            live = _Live(
                lock,
                opened.journal,
                opened.live_journal,
                opened.forwarder,
                server,
                asyncio.Event(),
                asyncio.get_running_loop(),
            )
            await server.start()
            self._live = live
            await asyncio.to_thread(self._announce, server.url, id_offset, token)
        except BaseException as exc:
            await self._undo_start(opened, lock)
            if isinstance(exc, OSError):  # a full or read-only disk, seen only now
                raise InputError(
                    f"cannot start a recording here ({exc.strerror or exc})",
                    path=exc.filename or self.paths.out_dir,
                    fix="Free some space, or pass a folder you can write to with --out",
                ) from None
            raise
        return self

    async def _owned(self) -> OwnerLock:
        """The recording's owner lock, once its folders are known to be writable.

        Raises:
            InputError: a folder cannot be written, or another recorder owns the recording.
        """
        out_dir = self.paths.out_dir
        await asyncio.to_thread(ensure_writable, self.paths.work_dir, flag="--out", folder=True)
        await asyncio.to_thread(ensure_writable, out_dir, flag="--out", folder=True)
        lock = OwnerLock(self.paths.owner_lock)
        if not await asyncio.to_thread(lock.acquire):
            raise InputError(
                f"a recorder is already recording {self.paths.name!r}",
                path=out_dir,
                fix=f"Stop it with `rec stop --out {out_dir}`, or pick another --name",
            )
        return lock

    async def _open(self, opened: _Opened, id_offset: int) -> None:
        """Open the journals, the build worker and the forwarder into ``opened`` (what
        is open so far stays there for :meth:`_undo_start`, should one fail)."""
        opened.journal = await asyncio.to_thread(_exchange_journal, self.paths.journal)
        opened.live_journal = await asyncio.to_thread(Journal[LiveJournalLine], self.paths.live)
        if self._on_recorded is None:  # a replay's recording wants each exchange itself
            opened.worker = BuildWorker(self._redaction)
            if self._worker_at_start:
                await asyncio.to_thread(opened.worker.start)
        exchanges = ExchangeJournal(
            opened.journal,
            redaction=self._redaction,
            build_worker=opened.worker,
            on_recorded=self._on_recorded,
        )
        opened.forwarder = Forwarder(exchanges, upstreams=self.upstreams, id_offset=id_offset)

    def _handler(
        self, forwarder: Forwarder, live_journal: Journal[LiveJournalLine], existing: Cassette
    ) -> Handler:
        """The handler of the recording's mode."""
        if self.mode is RecordMode.AUTO:
            assert self._auto_handler is not None  # checked in __init__
            return self._auto_handler(forwarder, existing)
        relay = LiveRelay(
            journal=live_journal,
            upstreams=self.upstreams,
            redaction=self._redaction,
            known_secrets=forwarder.known_secrets,
            on_lost=forwarder.journal.note_lost,
            id_offset=len(existing.live.sessions) if existing.live is not None else 0,
        )
        return RecordHandler(forwarder, relay)

    def _server(self, handler: Handler, token: str) -> ProxyServer:
        """The recording's proxy, its control endpoints behind ``token``."""
        return ProxyServer(
            handler,
            host=self._host,
            port=self._port,
            on_stop=self.request_stop if self._stops_on_request else None,
            control_token=token,
        )

    async def _undo_start(self, opened: _Opened, lock: OwnerLock) -> None:
        """Undo a start that failed: no server, worker, journal, state or lock left."""
        if self._live is not None:
            await self._live.server.close()
        self._live = None
        if opened.worker is not None:
            await asyncio.to_thread(opened.worker.close)
        await asyncio.to_thread(self._abandon, opened.journal, opened.live_journal, lock)

    def _refuse_to_overwrite(self) -> None:
        """Record mode replaces a recording only when told to (``overwrite``)."""
        if self.mode is not RecordMode.RECORD or self.overwrite:
            return
        held = [p for p in (self.paths.cassette, self.paths.evalset) if p.exists()]
        if not held:
            return
        recovered = any(r.cassette_path == self.paths.cassette for r in self.recovered)
        how = "recovered just now from a recorder that died" if recovered else "finished"
        raise InputError(
            f"recording {self.paths.name!r} already holds data ({how}) and record mode "
            "would replace it",
            path=held[0],
            fix="Pass --overwrite to replace it, --mode auto to add to it, or pick another --name",
        )

    def _announce(self, url: str, id_offset: int, token: str) -> None:
        """Write the state file: the recording is open (for `rec stop` / `rec status`)."""
        state = RecorderState(
            name=self.paths.name,
            pid=os.getpid(),
            url=url,
            mode=self.mode,
            upstream=self.upstreams.shown,
            started_at=now_iso(),
            keep_existing=self.mode is RecordMode.AUTO,
            id_offset=id_offset,
            process_started=process_start(os.getpid()),
            control_token=token,
        )
        write_state(self.paths, state)

    def _abandon(
        self,
        journal: Journal[Exchange] | None,
        live_journal: Journal[LiveJournalLine] | None,
        lock: OwnerLock,
    ) -> None:
        """Undo a start that failed: no journal, no state, no lock left behind."""
        try:
            if live_journal is not None:
                live_journal.close()
            if journal is not None:
                journal.close()
                self._discard()
        finally:
            lock.release()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        live = self._running()
        try:
            await live.server.close()
        finally:
            self._live = None
            await asyncio.to_thread(self._close, live, failed=exc is not None)

    def _close(self, live: _Live, *, failed: bool) -> None:
        """Finalise (or, for a block that failed before recording anything, remove) the
        recording's files, then close the build worker and give the owner lock back."""
        exchanges = live.forwarder.journal
        worker = exchanges.build_worker
        try:
            live.journal.close()
            live.live_journal.close()
            if (
                failed
                and live.journal.count == 0
                and live.live_journal.count == 0
                and not self.paths.tools.exists()
            ):
                self._discard()
                return
            try:
                how = Finishing(
                    keep_existing=self.mode is RecordMode.AUTO,
                    write_evalset=self.write_evalset,
                    app_name=self.app_name,
                    adk_eval=self.adk_eval,
                    replaces_evalset=self.replaces_evalset,
                )
                result = finalize_recording(self.paths, upstream=self.upstreams.shown, how=how)
            except RunError as exc:
                if not exchanges.lost:
                    raise
                raise RunError(
                    f"{exc.problem}; {exchanges.lost} more exchange(s) were answered but "
                    f"not recorded ({exchanges.lost_reason})",
                    path=exc.path,
                    fix=exc.fix,
                ) from None
            self.result = dataclasses.replace(
                result,
                lost_exchanges=exchanges.lost,
                lost_reason=exchanges.lost_reason,
                refused_exchanges=exchanges.refused,
            )
        finally:
            try:
                if worker is not None:
                    worker.close()
            finally:
                live.lock.release()

    def _discard(self) -> None:
        """Remove the files of a recording that never recorded anything."""
        for leftover in (self.paths.journal, self.paths.live, self.paths.state):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()

    @contextlib.contextmanager
    def running_in_thread(self) -> Iterator[Recorder]:
        """Record in a background thread for the duration of the block, then finalise.

        The block decides when the recording ends: ``rec stop`` is told so and leaves it be.
        """
        self._stops_on_request = False
        with running_in_thread(self, name="rec-recorder") as recorder:
            yield recorder


class WiredRecorder(Recorder):
    """A :class:`Recorder` with rec's own :class:`Wiring`: the internal constructor behind
    the replayer's one constructor of a record- or auto-mode recorder."""

    def __init__(
        self,
        out_dir: str | Path,
        *,
        name: str,
        mode: RecordMode | str = RecordMode.RECORD,
        wiring: Wiring,
        **options: Unpack[RecorderOptions],
    ) -> None:
        self._wiring = wiring
        super().__init__(out_dir, name=name, mode=mode, **options)
