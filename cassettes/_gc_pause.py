"""Pause the cyclic garbage collector while building large acyclic structures.

Loading a cassette and indexing it allocate hundreds of thousands of containers with no
reference cycles; every generation-2 collection meanwhile rescans the whole heap. Paused,
10,000 exchanges load and index about twice as fast (``bench/bench_cassette_load.py``).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block, restoring its previous state."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
