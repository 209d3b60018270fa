"""The cassettes of one ``rec replay`` run, each read from disk once.

A run needs a recording for several things: the model proxy's index, the tools' own HTTP
traffic, the MCP sessions and the mock tools' pool of recorded responses. Loading the file
for each would parse it four times and hold four copies (of a 77 MB recording, say);
:class:`RunCassettes` loads each file on first use and hands the same objects to all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cassettes._cassette import Cassette, load_cassette
from replayer._replay_handler import LoadedCassette

if TYPE_CHECKING:
    from replayer._mock_tools import RecordedToolCall

__all__ = ["RunCassettes"]


class RunCassettes:
    """Cassettes loaded on first use and kept for the run (errors as ``load_cassette``'s)."""

    def __init__(self) -> None:
        self._loaded: dict[Path, Cassette] = {}
        self._pools: dict[Path, list[RecordedToolCall]] = {}

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
        """The cassettes of those ``paths`` that are files (a recording may not exist yet)."""
        return [self.get(p) for p in paths if p.is_file()]

    def loaded(self, paths: Sequence[Path]) -> list[LoadedCassette]:
        """``paths`` as the replay proxy takes them."""
        return [LoadedCassette(p, self.get(p)) for p in paths]

    def tool_pool(self, paths: Sequence[Path]) -> list[RecordedToolCall]:
        """Every recorded tool call with its response in these cassettes (mock tools' pool)."""
        # Imported here: mock tools are ADK's; a plain google-genai program replays without it.
        from replayer._mock_tools import recording_tool_calls

        pool: list[RecordedToolCall] = []
        for path in paths:
            if path not in self._pools:
                self._pools[path] = recording_tool_calls([self.get(path)])
            pool.extend(self._pools[path])
        return pool
