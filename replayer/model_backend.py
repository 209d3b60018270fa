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
from collections.abc import Iterator, Sequence
from pathlib import Path

from typing_extensions import assert_never

from cassettes import Exchange, InputError, MatchRules, RecordMode, ReplayMiss
from recorder import DEFAULT_UPSTREAM, Recorder, Upstreams, pointing_clients_at

from .replay_api import auto_handler, replay

__all__ = ["ModelBackend", "model_backend"]


class ModelBackend:
    """The running model source: what it missed and what it served."""

    def __init__(
        self, mode: RecordMode, handler: object | None = None, *, url: str | None = None
    ) -> None:
        self.mode = mode
        self.handler = handler
        self.url = url
        """The in-process proxy's base URL (None in live mode)."""

    @property
    def misses(self) -> list[ReplayMiss]:
        return list(getattr(self.handler, "misses", []))

    def find_miss(self, message: str) -> ReplayMiss | None:
        """The miss whose explanation a client error carried."""
        for miss in self.misses:
            if str(miss) == message or str(miss) in message:
                return miss
        return None

    def traffic(self) -> list[Exchange]:
        """The exchanges this run's model calls got so far, in order (see ``mark``)."""
        log = getattr(self.handler, "log", None)
        if log is None:  # a recording handler: what its forwarder recorded
            forwarder = getattr(self.handler, "forwarder", None)
            log = getattr(forwarder, "log", [])
        return list(log)

    def mark(self) -> int:
        """A position in :meth:`traffic`; ``traffic()[mark:]`` is what came after it."""
        return len(self.traffic())

    def exchanges(self) -> list[Exchange]:
        """Every recorded exchange being served."""
        loaded = getattr(self.handler, "cassettes", [])
        return [e for item in loaded for e in item.cassette.exchanges]

    def unused(self, cassettes: Sequence[Path] | None = None) -> list[Exchange]:
        """Recorded exchanges nothing played (only those from ``cassettes`` when given)."""
        index = getattr(self.handler, "index", None)
        if index is None:
            return []
        found = list(index.unused())
        origin = getattr(self.handler, "origin", None)
        if cassettes is None or origin is None:
            return found
        wanted = {Path(c).resolve() for c in cassettes}
        return [e for e in found if (o := origin(e)) is not None and Path(o).resolve() in wanted]


def _cassette_name(path: Path) -> str:
    name = path.name
    return name[: -len(".cassette.json")] if name.endswith(".cassette.json") else path.stem


@contextlib.contextmanager
def model_backend(
    mode: RecordMode,
    cassettes: Sequence[Path],
    *,
    rules: MatchRules | None = None,
    upstream: str = DEFAULT_UPSTREAM,
    observe: bool = False,
) -> Iterator[ModelBackend]:
    """Start the model source for a run (see the module docstring).

    With ``observe`` (plain programs, whose invocations come from their traffic), live mode
    runs through a recording proxy whose cassette is thrown away, so the traffic is seen.

    Raises:
        InputError: replay with no recording, or record/auto with several.
    """
    if mode is RecordMode.REPLAY:
        if not cassettes:
            raise InputError(
                "no recording to replay",
                fix="Record one with `rec start`, pass --recording, or run with --live",
            )
        # The case fails with the miss: the report prints it, the log need not.
        with replay(*cassettes, rules=rules, log_misses=False) as replaying:
            yield ModelBackend(mode, replaying.handler, url=replaying.url)
    elif mode is RecordMode.RECORD or mode is RecordMode.AUTO:
        if len(cassettes) != 1:
            raise InputError(
                f"{mode} mode writes one recording; {len(cassettes)} were found",
                path="--recording",
                fix="Name one *.cassette.json with --recording",
            )
        target = cassettes[0]
        session = Recorder(
            target.parent,
            name=_cassette_name(target),
            upstreams=Upstreams(gemini=upstream),
            mode=mode,
            auto_handler=auto_handler(rules) if mode is RecordMode.AUTO else None,
            write_evalset=False,
            keep_log=True,
        )
        with session.running_in_thread(), pointing_clients_at(session.url):
            yield ModelBackend(mode, getattr(session.server, "handler", None), url=session.url)
    elif mode is RecordMode.LIVE:
        if not observe:
            yield ModelBackend(mode)
            return
        with tempfile.TemporaryDirectory(prefix="rec-live-") as scratch:
            session = Recorder(
                scratch,
                name="live",
                upstreams=Upstreams(gemini=upstream),
                write_evalset=False,
                keep_log=True,
            )
            with session.running_in_thread(), pointing_clients_at(session.url):
                yield ModelBackend(
                    mode, session.server.handler if session.server else None, url=session.url
                )
    else:
        assert_never(mode)
