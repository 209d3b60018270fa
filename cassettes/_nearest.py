"""The few recordings of a lazily loaded cassette worth reading to explain a miss.

A miss names the recording nearest the request (:meth:`cassettes.MatchIndex.nearest`),
which compares request bodies. Reading every recording on the request's route would cost
a miss in a cassette of 10,000 exchanges a second, so the side index's columns
(``cassettes._side_index``: each exchange's route, number of turns, last turn's digest and
first user turn's digest) are grouped once, at the first miss, and a miss reads only the
recordings of the groups most like the request: the same conversation (first user turn)
with as many turns, then the same conversation; and when none of them shares the request's
opening turn, its own bucket (the same last turn and number of turns), as many turns, and
recordings spread evenly over the route, so that each agent recorded on it (its tools and
instruction, which the side index does not hold) is likely among them. At most
:data:`READ` of each group are read, the earliest: a miss costs what these groups hold,
whatever the size of the cassette.
"""

from __future__ import annotations

import array
from collections.abc import Sequence

from cassettes._bucket_keys import BucketKey
from cassettes._cassette import LazyExchanges

__all__ = ["READ", "Likeliest", "turns_in"]

READ = 32
"""At most this many recordings of each group are read: enough that the one sharing the
request's conversation is among them, few enough that a miss costs about the same in a
cassette of 100 exchanges or 10,000."""


def turns_in(bucket: BucketKey | None) -> tuple[int, object]:
    """The number of turns and the last turn's digest a bucket key holds (0, None: none)."""
    if bucket is not None and len(bucket) == 6 and isinstance(bucket[4], int):
        return bucket[4], bucket[5]
    return 0, None


class Likeliest:
    """A lazily loaded cassette's recordings grouped by what its side index says of each,
    without reading any (see the module docstring)."""

    def __init__(self, exchanges: LazyExchanges) -> None:
        self._by_first: dict[tuple[object, ...], list[int]] = {}
        self._by_count: dict[tuple[object, ...], list[int]] = {}
        self._counts = array.array("q")
        self._unknown: list[int] = []
        """Recordings the side index says nothing of (not in the layout rec writes)."""
        for position, (bucket, first) in enumerate(exchanges.each_bucket()):
            count, _ = turns_in(bucket)
            self._counts.append(count)
            if bucket is None:
                self._unknown.append(position)
                continue
            route = bucket[:2]
            self._by_first.setdefault((route, first), []).append(position)
            self._by_count.setdefault((route, count), []).append(position)

    def candidates(
        self,
        route: tuple[str, str],
        first: str | None,
        count: int,
        bucket: Sequence[int],
        on_route: Sequence[int],
    ) -> tuple[list[int], list[int]]:
        """The recordings to read for a request on ``route`` whose first user turn's digest
        is ``first`` and that holds ``count`` turns; ``bucket`` are the positions of the
        request's own bucket, ``on_route`` all those on its route.

        Returns:
            Those of the request's conversation, and the others worth reading.
        """
        conversation = self._by_first.get((route, first), []) if first is not None else []
        alike = [p for p in conversation if self._counts[p] == count]
        close = dict.fromkeys([*alike[:READ], *conversation[:READ]])
        as_long = self._by_count.get((route, count), [])
        spread = on_route[:: max(1, len(on_route) // READ)]
        wider: dict[int, None] = {}
        for tier in (bucket, as_long, spread):
            wider.update((p, None) for p in tier[:READ] if p not in close)
        wider.update((p, None) for p in self._unknown if p not in close)
        return list(close), list(wider)
