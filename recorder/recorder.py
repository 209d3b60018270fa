"""One recording session: proxy + forwarder + journal + state file, start to finish.

Used by ``rec start`` (in the foreground) and by :func:`recorder.record` (in a thread).

Example::

    rec = Recorder(Path("recordings"), name="checkout")
    with rec.running_in_thread():
        ...  # point clients at rec.url
    print(rec.result.cassette_path)
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cassettes import Cassette, InputError, RedactionRules, load_cassette, now_iso
from loopback import Handler, IncomingRequest, ProxyServer, ResponseWriter

from .forwarding import (
    GATEWAY_MODE_MESSAGE,
    Forwarder,
    Upstreams,
    gateway_mode_path,
    google_error,
)
from .journal import Journal
from .recording import (
    FinalizeResult,
    RecorderState,
    RecordingPaths,
    finalize_recording,
    pid_alive,
    read_states,
    recover_stale,
    write_state,
)

__all__ = ["AutoHandlerFactory", "RecordHandler", "Recorder"]

log = logging.getLogger(__name__)

AutoHandlerFactory = Callable[[Forwarder, Cassette], Handler]
"""Builds the handler for ``auto`` mode (replay hits, forward misses); the replayer provides it."""


class RecordHandler:
    """Record mode: forward everything to the upstream and journal each exchange."""

    def __init__(self, forwarder: Forwarder) -> None:
        self.forwarder = forwarder

    async def handle(self, request: IncomingRequest, writer: ResponseWriter) -> None:
        if gateway_mode_path(request.method, request.path_qs):
            body = google_error(
                400, GATEWAY_MODE_MESSAGE.format(path=request.path_qs), "FAILED_PRECONDITION"
            )
            await writer.send(400, {"content-type": "application/json"}, json.dumps(body).encode())
            return
        if not request.path_qs.startswith("/"):
            body = google_error(
                400,
                "rec forwards only to its configured upstream; not an open proxy",
                "INVALID_ARGUMENT",
            )
            await writer.send(400, {"content-type": "application/json"}, json.dumps(body).encode())
            return
        await self.forwarder.forward(request, writer)

    def status(self) -> dict[str, Any]:
        return {
            "mode": "record",
            "recorded": self.forwarder.recorded,
            "refused": self.forwarder.refused,
            "streams_in_flight": self.forwarder.streams_in_flight,
        }

    async def aclose(self) -> None:
        await self.forwarder.aclose()


class Recorder:
    """A recording session on ``out_dir/name``.

    Args:
        out_dir: the recording folder.
        name: the recording's name (files are ``name.cassette.json`` etc.).
        upstreams: where to forward.
        mode: ``record`` (forward everything; replaces a cassette of the same name) or
            ``auto`` (replay what the cassette has, record the rest into it).
        auto_handler: required for ``auto``; supplied by the replayer.
        redaction: extra redaction rules.
        host, port: where to listen (127.0.0.1 and a free port by default).
        write_evalset: write ``name.evalset.json`` when finalising.
        app_name: ``session_input.app_name`` for that EvalSet.
        keep_log: keep the recorded exchanges in memory too (``forwarder.log``), for
            callers that read a run's traffic back (``rec replay`` of programs).
    """

    def __init__(
        self,
        out_dir: str | Path,
        *,
        name: str,
        upstreams: Upstreams | None = None,
        mode: str = "record",
        auto_handler: AutoHandlerFactory | None = None,
        redaction: RedactionRules | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        write_evalset: bool = True,
        app_name: str | None = None,
        keep_log: bool = False,
    ) -> None:
        if mode not in ("record", "auto"):
            raise InputError(
                f"unknown recording mode {mode!r}", path="--mode", fix="Use record or auto"
            )
        if mode == "auto" and auto_handler is None:
            raise InputError(
                "auto mode needs the replayer", path="--mode", fix="Use `rec start --mode auto`"
            )
        _check_name(name)
        self.paths = RecordingPaths(Path(out_dir), name)
        self.upstreams = upstreams or Upstreams()
        self.mode = mode
        self.write_evalset = write_evalset
        self.app_name = app_name
        self.recovered: list[FinalizeResult] = []
        self.result: FinalizeResult | None = None
        self._auto_handler = auto_handler
        self._keep_log = keep_log
        self._redaction = redaction or RedactionRules()
        self._host = host
        self._port = port
        self._journal: Journal | None = None
        self.server: ProxyServer | None = None
        self.forwarder: Forwarder | None = None

    @property
    def url(self) -> str:
        assert self.server is not None, "not started"
        return self.server.url

    def prepare(self, *, on_stop: Callable[[], None] | None = None) -> ProxyServer:
        """Recover leftovers, refuse a live duplicate, open the journal, build the server."""
        out_dir = self.paths.out_dir
        out_dir.mkdir(parents=True, exist_ok=True)
        for paths, state in read_states(out_dir):
            if paths.name == self.paths.name and pid_alive(state.pid):
                raise InputError(
                    f"a recorder (pid {state.pid}) is already recording {state.name!r} "
                    f"at {state.url}",
                    path=out_dir,
                    fix=f"Stop it with `rec stop --out {out_dir}`, or pick another --name",
                )
        self.recovered = recover_stale(out_dir, write_evalset=self.write_evalset)
        existing = Cassette(name=self.paths.name)
        if self.mode == "auto" and self.paths.cassette.exists():
            existing = load_cassette(self.paths.cassette)
        id_offset = max((e.id for e in existing.exchanges), default=-1) + 1
        self._journal = Journal(self.paths.journal)
        self.forwarder = Forwarder(
            on_exchange=self._journal.append,
            upstreams=self.upstreams,
            redaction=self._redaction,
            id_offset=id_offset,
            keep_log=self._keep_log,
        )
        handler: Handler
        if self.mode == "auto":
            assert self._auto_handler is not None
            handler = self._auto_handler(self.forwarder, existing)
        else:
            handler = RecordHandler(self.forwarder)
        self.server = ProxyServer(handler, host=self._host, port=self._port, on_stop=on_stop)
        self._id_offset = id_offset
        return self.server

    def announce(self) -> None:
        """Write the state file once the server is listening (for `rec stop`/`status`)."""
        assert self.server is not None
        write_state(
            self.paths,
            RecorderState(
                name=self.paths.name,
                pid=os.getpid(),
                url=self.server.url,
                mode=self.mode,  # type: ignore[arg-type]
                upstream=self.upstreams.gemini,
                started_at=now_iso(),
                keep_existing=self.mode == "auto",
                id_offset=self._id_offset,
            ),
        )

    def finish(self) -> FinalizeResult:
        """Close the journal and compact it into the cassette (+ EvalSet)."""
        if self._journal is not None:
            self._journal.close()
        self.result = finalize_recording(
            self.paths,
            upstream=self.upstreams.gemini,
            keep_existing=self.mode == "auto",
            write_evalset=self.write_evalset,
            app_name=self.app_name,
        )
        return self.result

    @contextlib.contextmanager
    def running_in_thread(self) -> Iterator[Recorder]:
        """Record in a background thread for the duration of the block, then finalise."""
        server = self.prepare()
        try:
            with server.running_in_thread():
                self.announce()
                yield self
        finally:
            self.finish()


_FORBIDDEN = set('/\\:*?"<>|')


def _check_name(name: str) -> None:
    if not name or name.startswith(".") or any(ch in _FORBIDDEN for ch in name):
        raise InputError(
            f"recording name {name!r} cannot be used as a file name",
            path="--name",
            fix="Use letters, digits, '-' and '_'",
        )
