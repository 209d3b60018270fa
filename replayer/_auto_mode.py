"""The recorder of record and ``auto`` mode, built in one place.

``auto`` mode (``rec start --mode auto``, ``rec replay --record-missing``, a pytest run with
``--rec-mode=auto``) is a recorder whose handler is the replayer's: a request the cassette
holds is replayed, and a miss goes to the recorder's forwarder, which sends it upstream and
records it into the same cassette. :func:`recorder_for` is the one constructor of such a
recorder, and of the plain record-mode one beside it, so that every caller gets the same
handler and the same reporting.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from typing_extensions import Unpack

from cassettes._record_mode import RecordMode
from recorder import Recorder, RecorderOptions, WiredRecorder, Wiring

if TYPE_CHECKING:
    from cassettes._cassette import Cassette
    from cassettes._matching import MatchRules
    from recorder import AdkEvalRun, AutoHandlerFactory, Forwarder
    from replayer._replay_channel import ReplayChannel
    from replayer._replay_handler import ReplayHandler

__all__ = ["recorder_for"]


def recorder_for(
    mode: RecordMode | str,
    out_dir: str | Path,
    *,
    name: str,
    rules: MatchRules | None = None,
    channel: ReplayChannel | None = None,
    adk_eval: AdkEvalRun | None = None,
    worker_at_start: bool = False,
    evalset_is_input: bool = False,
    **options: Unpack[RecorderOptions],
) -> Recorder:
    """A recorder on ``out_dir/name`` in record or ``auto`` mode.

    In ``auto`` mode, hits are matched by ``rules``; with a ``channel``, the exchanges
    replayed and those recorded are both reported to it. ``adk_eval`` and
    ``worker_at_start`` are ``rec start``'s, ``evalset_is_input`` ``rec replay``'s (see
    :class:`~recorder.Wiring`); ``options`` are the recorder's public keyword arguments.

    Raises:
        InputError: a mode other than record or auto, or as :class:`Recorder`.
    """
    auto = RecordMode.parse(mode, source="--mode") is RecordMode.AUTO
    wiring = Wiring(
        auto_handler=_replaying_first(rules, channel) if auto else None,
        on_recorded=channel.answered if channel is not None else None,
        adk_eval=adk_eval,
        worker_at_start=worker_at_start,
        evalset_is_input=evalset_is_input,
    )
    return WiredRecorder(out_dir, name=name, mode=mode, wiring=wiring, **options)


def _replaying_first(rules: MatchRules | None, channel: ReplayChannel | None) -> AutoHandlerFactory:
    """The handler of ``auto`` mode: replay what the recorder's cassette holds, and hand
    every miss to its forwarder."""
    # Imported here: `rec start` in record mode loads nothing of the replay server.
    from replayer._replay_handler import LoadedCassette, ReplayHandler

    def build(forwarder: Forwarder, existing: Cassette) -> ReplayHandler:
        loaded = [LoadedCassette(Path(existing.name), existing)]
        return ReplayHandler(loaded, rules=rules, fallback=forwarder, channel=channel)

    return build
