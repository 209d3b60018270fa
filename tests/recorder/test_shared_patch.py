"""One process-wide patch shared by the blocks that need it (the traffic floor's SharedPatch):
the first block in applies it, the last one out undoes it, and a block that joins sees the
patch in place."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from recorder._traffic import SharedPatch


class _Flag:
    """A stand-in for a patched global: counts how often it was applied and undone."""

    def __init__(self) -> None:
        self.on = False
        self.applied = 0
        self.undone = 0

    def apply(self) -> Callable[[], None]:
        self.on, self.applied = True, self.applied + 1

        def undo() -> None:
            self.on, self.undone = False, self.undone + 1

        return undo


def test_nested_blocks_apply_once_and_undo_when_the_last_leaves() -> None:
    patch, flag, joined = SharedPatch(), _Flag(), []
    with patch.active(flag.apply, joining=lambda: joined.append("outer")):
        with patch.active(flag.apply, joining=lambda: joined.append("inner")):
            assert (flag.on, flag.applied, patch.users) == (True, 1, 2)
        assert (flag.on, flag.undone) == (True, 0)
    assert (flag.on, flag.applied, flag.undone, patch.users) == (False, 1, 1, 0)
    assert joined == ["inner"]


def test_a_failed_apply_counts_no_user_and_the_next_block_applies_again() -> None:
    patch, flag = SharedPatch(), _Flag()

    def refuse() -> Callable[[], None]:
        raise RuntimeError("cannot patch")

    with pytest.raises(RuntimeError, match="cannot patch"), patch.active(refuse):
        pass
    assert patch.users == 0
    with patch.active(flag.apply):
        assert flag.on
    assert (flag.applied, flag.undone) == (1, 1)


def test_blocks_in_threads_share_one_application() -> None:
    patch, flag = SharedPatch(), _Flag()
    inside = threading.Barrier(4, timeout=120)  # a broken block fails the test, never hangs it
    seen: list[bool] = []

    def block() -> None:
        with patch.active(flag.apply):
            inside.wait()  # all four are in at once
            seen.append(flag.on)
            inside.wait()

    threads = [threading.Thread(target=block) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [True] * 4
    assert (flag.on, flag.applied, flag.undone, patch.users) == (False, 1, 1, 0)
