"""The recorder's exchange journal: the one road from an answered exchange to the file.

The forwarder hands each answered exchange (:class:`~recorder._exchange_build.Received`)
to :meth:`ExchangeJournal.submit` and forgets it. The journal decides where the exchange
is built: in the build worker's process (:mod:`recorder._build_worker`), or on the
journal's writer thread in this process (a body too large to send, no worker, or a
caller that wants the exchange itself, ``on_recorded``). A large body goes to the file in
screened pieces while it passes (:class:`Pieces`, from :meth:`ExchangeJournal.pieces`),
and its exchange line then counts them. Whichever way, the line is written in the order
the exchanges were submitted (:class:`~recorder._journal.Journal`), and the outcome is
counted here: recorded, refused (it held a credential) or lost (it could not be written).
A line is held until the event loop's next turn (:data:`LINGER_S`) so that those answered
in the same turn go to the writer, and to the build worker, together: a longer hold would
let a SIGKILL cost the exchanges answered meanwhile.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from cassettes._bodies import IncrementalDecoder
from cassettes._cassette import Exchange
from cassettes._errors import InputError
from cassettes._redaction import RedactionRules
from recorder._body_screen import BodyScreen
from recorder._build_worker import BuildWorker, BuiltElsewhere, LineBuild, WorkerBuild
from recorder._capture_files import ChunkedExchange
from recorder._exchange_build import Received, build_exchange
from recorder._journal import BodyChunk, Built, Journal, Written

__all__ = ["JOURNAL_BEHIND", "ExchangeJournal", "Pieces"]

log = logging.getLogger(__name__)

JOURNAL_BEHIND = 64
"""Answered exchanges whose journal lines may still be on their way to the file while
their connections go on; past this many, a response waits for its own line (the writer is
behind, and the backlog a SIGKILL could cost stays bounded)."""

LINGER_S = 0.0
"""How long an exchange's line is held before it is queued, so that the exchanges answered
meanwhile go with it: one group of the writer thread and one build-worker round trip for
them all. Each group costs both processes a few wake-ups, which at one client cost more
than the build itself. A line that must be written now (the journal is behind, or the
caller wants each exchange) is queued at once, with those held before it."""

LineSink = Callable[[Callable[[], Built[BaseModel]]], "asyncio.Future[BaseModel | None]"]
"""Queues a journal line built on the writer thread
(:meth:`~recorder._journal.Journal.submit_line`)."""


@dataclass
class Pieces:
    """A large body on its way to the journal, piece by piece, as it passes.

    Each piece is screened (:class:`~recorder._body_screen.BodyScreen`) and written on the
    journal's writer thread; the loop only queues it. Once a piece cannot be cleared the
    rest is not written in pieces: the exchange is then built whole from the bytes kept in
    memory, redacted and scanned as a small one is, and its line holds the body.
    """

    exchange_id: int
    screen: BodyScreen
    decoder: IncrementalDecoder
    """Undoes the body's ``content-encoding``: pieces are screened and written decoded,
    as the stored body is."""
    submit: LineSink
    known_secrets: set[str]
    """The recording's credentials, a live set the loop adds to: one first seen while the
    body passes is screened for in the pieces not yet queued."""
    sent: int = 0
    """Bytes of the body queued so far."""
    taken: int = 0
    """Chunks of the body queued so far."""
    written: int = 0
    """Pieces built into lines (on the writer thread)."""
    _learnt: int = -1
    """How many credentials the screen was last told of."""

    def send(self, received: list[bytes], *, last: bool = False) -> None:
        """Queue the chunks of ``received`` past those queued so far (joined on the
        writer thread: the loop copies nothing)."""
        chunks = received[self.taken :]
        self.taken = len(received)
        self.sent += sum(map(len, chunks))
        secrets = None
        if len(self.known_secrets) != self._learnt:  # it only grows
            secrets = frozenset(self.known_secrets)
            self._learnt = len(secrets)
        future = self.submit(lambda: self._line(chunks, secrets, last=last))
        future.add_done_callback(_retrieve)  # a failure shows in the exchange's own line

    def _line(
        self, chunks: list[bytes], secrets: frozenset[str] | None, *, last: bool
    ) -> BodyChunk | None:
        if secrets is not None:
            self.screen.learn(secrets)
        plain: bytes | list[bytes] | None
        try:
            if self.decoder.encoding in ("identity", ""):
                plain = chunks  # joined by the screen, with what it held back: one copy
            else:
                plain = self.decoder.feed(b"".join(chunks))
        except ValueError:
            plain = None
        if plain is None or (last and not self.decoder.complete()):
            self.screen.failed = True  # stored as received, whole
            return None
        clean = self.screen.feed(plain)
        if clean is not None and last:
            rest = self.screen.finish()
            clean = None if rest is None else clean + rest
        if not clean:
            return None
        self.written += 1
        return BodyChunk(body_chunk=self.exchange_id, data=clean)


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class ExchangeJournal:
    """Where the forwarder hands each answered exchange (:meth:`submit`).

    Args:
        journal: the recording's journal file.
        redaction: the recording's redaction rules.
        build_worker: builds the exchanges in a process of its own (its owner closes
            it); None: they are built on the journal's writer thread.
        on_recorded: also called with every exchange once the journal has it (``rec
            replay`` reads a run's traffic this way): such exchanges are built whole, in
            this process, and each response waits for its line.
    """

    def __init__(
        self,
        journal: Journal[Exchange],
        *,
        redaction: RedactionRules | None = None,
        build_worker: BuildWorker | None = None,
        on_recorded: Callable[[Exchange], None] | None = None,
    ) -> None:
        self.journal = journal
        self.redaction = redaction or RedactionRules()
        self.build_worker = build_worker
        self.on_recorded = on_recorded
        self.recorded = 0
        self.refused = 0
        self.lost = 0
        """Exchanges the client was answered but that could not be written (a full disk)."""
        self.lost_reason: str | None = None
        """Why the first lost exchange could not be written."""
        self._pending: set[asyncio.Future[Any]] = set()
        """Lines taken and not yet written (held ones included)."""
        self._held: list[tuple[Callable[[], Built[BaseModel]], asyncio.Future[Any]]] = []
        """Lines taken and not yet queued (:data:`LINGER_S`)."""
        self._linger: asyncio.TimerHandle | None = None

    @property
    def behind(self) -> bool:
        """Whether a response must wait for its own line (see :data:`JOURNAL_BEHIND`)."""
        return self.on_recorded is not None or len(self._pending) >= JOURNAL_BEHIND

    def note_lost(self, why: str) -> None:
        """Count something answered but not recorded (a Live frame, told by the Live
        relay): the recording's end reports it and ``rec start`` fails."""
        self.lost += 1
        if self.lost_reason is None:
            self.lost_reason = why

    def pieces(
        self, exchange_id: int, *, is_stream: bool, encoding: str | None, known_secrets: set[str]
    ) -> Pieces | None:
        """How a body goes to the journal in pieces, for a response that may (None: whole).

        Not an event stream (stored as events), not an encoding rec cannot undo as it
        goes, not with ``--redact-path`` (that redaction needs the parsed body), not for
        ``on_recorded`` (it wants the whole exchange).
        """
        if self.on_recorded is not None or is_stream or self.redaction.json_paths:
            return None
        try:
            decoder = IncrementalDecoder(encoding)
        except InputError:
            return None
        # The screen learns the credentials with the first piece, on the writer thread
        # (:meth:`Pieces.send` always passes them then): a body too short for pieces, as
        # nearly every one is, costs the loop no spellings of them.
        screen = BodyScreen(())
        return Pieces(exchange_id, screen, decoder, self.journal.submit_line, known_secrets)

    def submit(
        self, got: Received, exchange_id: int, pieces: Pieces | None = None
    ) -> asyncio.Future[Any]:
        """Take the exchange's line (lines keep the order of these calls); from the event
        loop. The line is held up to :data:`LINGER_S` and queued with those taken
        meanwhile (at once when the journal is :attr:`behind`). The returned future ends
        once it is written (or its outcome is counted); the caller need not wait for it
        (:meth:`drained` does)."""
        now = self.behind
        build: Callable[[], Built[BaseModel]]
        if pieces is not None and pieces.sent > 0 and not got.cut:
            pieces.send(got.received, last=True)
            build = functools.partial(self._chunked, got, exchange_id, pieces)
        elif self.build_worker is not None and self.on_recorded is None:
            finish = functools.partial(self._built_by_worker, got, exchange_id)
            build = WorkerBuild(self.build_worker, got, exchange_id, finish)
        else:
            build = functools.partial(self._exchange, got, exchange_id)
        loop = asyncio.get_running_loop()
        line: asyncio.Future[Any] = loop.create_future()
        self._held.append((build, line))
        self._pending.add(line)
        line.add_done_callback(functools.partial(self._written, got, exchange_id))
        if now:
            self._flush()
        elif self._linger is None:
            self._linger = loop.call_later(LINGER_S, self._flush)
        return line

    def _flush(self) -> None:
        """Queue the held lines, in order, together."""
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        held, self._held = self._held, []
        if not held:
            return
        try:
            self.journal.submit_all(held)
        except RuntimeError as exc:  # the journal was closed under them: counted lost
            for _, line in held:
                if not line.done():
                    line.set_exception(exc)

    async def drained(self) -> None:
        """Return once every submitted exchange is written (or counted lost)."""
        while self._pending:
            self._flush()
            await asyncio.wait(set(self._pending))

    def _written(self, got: Received, exchange_id: int, line: asyncio.Future[Any]) -> None:
        """Count a line's outcome (on the event loop, once it is settled)."""
        self._pending.discard(line)
        exc = None if line.cancelled() else line.exception()
        if line.cancelled() or (exc is not None and not isinstance(exc, OSError)):
            self._lost_to_a_bug(exchange_id, exc)
            return
        if isinstance(exc, OSError):  # a full disk must not cost the user their session
            self._lost_to_the_disk(exchange_id, exc)
            return
        written = line.result()
        if written is None:
            return
        if self.on_recorded is not None:
            assert isinstance(written, Exchange)  # never built by the worker
            self.on_recorded(written)
        self.recorded += 1
        if log.isEnabledFor(logging.INFO):
            _log_recorded(got, exchange_id)

    def _lost_to_the_disk(self, exchange_id: int, exc: OSError) -> None:
        self.lost += 1
        if self.lost == 1:
            self.lost_reason = f"{exc.strerror or exc} ({exc.filename or 'journal'})"
            log.error(
                "#%d was answered but could not be recorded: %s. rec keeps serving; "
                "exchanges that cannot be written are counted and reported at the end",
                exchange_id,
                self.lost_reason,
            )

    def _lost_to_a_bug(self, exchange_id: int, exc: BaseException | None) -> None:
        """A build that raised (a bug: the disk's failures are counted apart) is logged
        and counted as lost, never dropped."""
        self.lost += 1
        if self.lost == 1:
            self.lost_reason = "cancelled" if exc is None else f"{type(exc).__name__}: {exc}"
        log.error(
            "#%d was answered but could not be recorded",
            exchange_id,
            exc_info=(type(exc), exc, exc.__traceback__) if exc is not None else None,
        )

    def _chunked(self, got: Received, exchange_id: int, pieces: Pieces) -> Built[BaseModel]:
        """The line that ends a body written in pieces: the exchange without its body, or,
        when a piece could not be cleared, the whole exchange as :meth:`_exchange` builds
        it. Runs on the journal's writer thread, after the last piece."""
        if pieces.screen.failed or not pieces.written:
            return self._exchange(got, exchange_id)
        head = self._exchange(replace(got, received=[]), exchange_id)
        if head is None:
            return None
        # ChunkedExchange's own JSON, the head's text inside (as pydantic-core writes it).
        data = b'{"body_chunks":%d,"exchange":%s}\n' % (pieces.written, head.data[:-1])
        return Written(ChunkedExchange(body_chunks=pieces.written, exchange=head.line), data)

    def _exchange(self, got: Received, exchange_id: int) -> Written[Exchange] | None:
        """The exchange to journal, redacted and scanned, with its journal text; None when
        it must not be written (:func:`~recorder._exchange_build.build_exchange`, whose
        verdict is logged and counted here). Runs on the journal's writer thread."""
        built = build_exchange(got, exchange_id, self.redaction)
        self._report(built.problem, built.level, refused=built.refused)
        return built.written

    def _built_by_worker(
        self, got: Received, exchange_id: int, line: LineBuild | None
    ) -> Built[BaseModel]:
        """:meth:`_exchange`, as the build worker built it (``line``: its line's text, and
        only the exchange's id kept), or here where it did not (None); on the journal's
        writer thread (:class:`~recorder._build_worker.WorkerBuild`)."""
        if line is None:
            return self._exchange(got, exchange_id)
        self._report(line.problem, line.level, refused=line.refused)
        if line.data is None:
            return None
        return Written(BuiltElsewhere(id=exchange_id), line.data)

    def _report(self, problem: str | None, level: int, *, refused: bool) -> None:
        """Count and log a build's verdict (its message names the exchange)."""
        if refused:
            self.refused += 1
        if problem is not None:
            log.log(level, "%s", problem)


def _log_recorded(got: Received, exchange_id: int) -> None:
    if got.raw_events is not None:
        detail = f"{len(got.raw_events)} events" + (", cut" if got.cut else "")
    else:
        detail = "unary"
    log.info(
        "#%d %s %s -> %d (%s, %.0f ms)",
        exchange_id,
        got.method,
        urlsplit(got.url).path,
        got.status,
        detail,
        got.duration_ms,
    )
