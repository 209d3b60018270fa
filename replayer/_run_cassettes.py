"""The cassettes of one ``rec replay`` run, each read from disk once.

A run needs a recording for several things: the model proxy's index, the tools' own HTTP
traffic, the MCP sessions and the mock tools' pool of recorded responses. Loading the file
for each would parse it four times and hold four copies (of a 77 MB recording, say);
:class:`RunCassettes` loads each file on first use and hands the same objects to all.
Files are loaded lazily (:class:`~cassettes.LazyExchanges`), and what is taken from them
here parses only the exchanges it needs: a case replayed from a recording of many others
never parses theirs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, overload

from cassettes._cassette import Cassette, Exchange, LazyExchanges, load_cassette
from replayer._replay_handler import LoadedCassette
from replayer._tool_replay import tool_exchanges

if TYPE_CHECKING:
    from replayer._mock_tools import RecordedToolCall

__all__ = ["RunCassettes", "mentioning"]


def mentioning(exchanges: Sequence[Exchange], text: str) -> Sequence[Exchange]:
    """The exchanges whose request's first user turn can be ``text`` (all of ``exchanges``
    unless they are lazily loaded: then those the side index gives that turn's digest, or
    for a file without one those whose bytes hold its longest line as JSON writes it, the
    file read in pieces rather than paged in; none parsed to find them)."""
    if not isinstance(exchanges, LazyExchanges):
        return exchanges
    found = exchanges.first_asking(text)
    if found is not None:
        return found
    line = max(text.split("\n"), key=len)
    return exchanges.holding(json.dumps(line, ensure_ascii=False)[1:-1].encode("utf-8"))


class _Pool(Sequence["RecordedToolCall"]):
    """A cassette's mock-tool pool, read on first use (a case whose calls were all
    recorded with it never asks, and the recording is not walked)."""

    def __init__(self, cassette: Cassette) -> None:
        self._cassette = cassette
        self._calls: list[RecordedToolCall] | None = None

    def _all(self) -> list[RecordedToolCall]:
        if self._calls is None:
            from replayer._mock_tools import recording_tool_calls

            self._calls = recording_tool_calls([self._cassette])
        return self._calls

    def __len__(self) -> int:
        return len(self._all())

    @overload
    def __getitem__(self, index: int) -> RecordedToolCall: ...
    @overload
    def __getitem__(self, index: slice) -> list[RecordedToolCall]: ...
    def __getitem__(self, index: int | slice) -> RecordedToolCall | list[RecordedToolCall]:
        return self._all()[index]

    def __iter__(self) -> Iterator[RecordedToolCall]:
        return iter(self._all())


class _Pools(Sequence["RecordedToolCall"]):
    """Several cassettes' pools, one after the other, each read when iteration reaches it."""

    def __init__(self, pools: Sequence[_Pool]) -> None:
        self._pools = list(pools)

    def __len__(self) -> int:
        return sum(len(p) for p in self._pools)

    @overload
    def __getitem__(self, index: int) -> RecordedToolCall: ...
    @overload
    def __getitem__(self, index: slice) -> list[RecordedToolCall]: ...
    def __getitem__(self, index: int | slice) -> RecordedToolCall | list[RecordedToolCall]:
        return [call for pool in self._pools for call in pool][index]

    def __iter__(self) -> Iterator[RecordedToolCall]:
        for pool in self._pools:
            yield from pool


class RunCassettes:
    """Cassettes loaded on first use and kept for the run (errors as ``load_cassette``'s)."""

    def __init__(self) -> None:
        self._loaded: dict[Path, Cassette] = {}
        self._pools: dict[Path, _Pool] = {}

    def get(self, path: Path) -> Cassette:
        """The cassette at ``path``, read and validated the first time it is asked for.

        Raises:
            InputError: the file is missing or invalid (see :func:`cassettes.load_cassette`).
        """
        found = self._loaded.get(path)
        if found is None:
            found = self._loaded[path] = load_cassette(path, lazy=True)
        return found

    def existing(self, paths: Sequence[Path]) -> list[Cassette]:
        """The cassettes of those ``paths`` that exist (a recording may not exist yet); one
        that is not a regular file is refused by the loader, by name."""
        return [self.get(p) for p in paths if p.exists()]

    def loaded(self, paths: Sequence[Path]) -> list[LoadedCassette]:
        """``paths`` as the replay proxy takes them."""
        return [LoadedCassette(p, self.get(p)) for p in paths]

    def tool_pool(self, paths: Sequence[Path]) -> Sequence[RecordedToolCall]:
        """Every recorded tool call with its response in those cassettes that exist (mock
        tools' pool; a recording may not exist yet), read from a cassette the first time the
        pool is looked into that far."""
        pools = []
        for path in paths:
            if not path.exists():  # a recording the run creates has no calls yet
                continue
            if path not in self._pools:
                self._pools[path] = _Pool(self.get(path))
            pools.append(self._pools[path])
        return _Pools(pools)

    def tool_exchanges(self, paths: Sequence[Path]) -> list[Exchange]:
        """The tools' own recorded calls (``origin: "tool"``) in the cassettes of ``paths``
        that exist; no model exchange is parsed."""
        return [e for c in self.existing(paths) for e in tool_exchanges(c.exchanges)]
