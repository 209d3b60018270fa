"""Fixtures of the fault-injection suite: a seeded random source, a small full-able disk."""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@pytest.fixture
def fault_rng(request: pytest.FixtureRequest) -> random.Random:
    """A random source whose seed is printed (and taken from REC_FAULT_SEED when set)."""
    seed = int(os.environ.get("REC_FAULT_SEED") or random.SystemRandom().randrange(2**32))
    print(f"\n{request.node.nodeid}: fault seed {seed} (rerun with REC_FAULT_SEED={seed})")
    return random.Random(seed)


@contextmanager
def _tmpfs(mountpoint: Path, options: str, refused: Callable[[str], str]) -> Iterator[Path]:
    """A tmpfs mounted at ``mountpoint`` with ``options``, the test skipped with
    ``refused(stderr)`` where mounting is not allowed; unmounted afterwards."""
    mountpoint.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(refused(mounted.stderr.strip()))
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs mounted under tmp_path (skipped where mounting is not allowed)."""
    with _tmpfs(
        tmp_path / "disk",
        "size=256k,mode=0700",
        lambda stderr: (
            "a full disk needs a small tmpfs, and `mount -t tmpfs` is not allowed here "
            f"({stderr or 'not root'}); tests/recorder/test_lifecycle.py "
            "covers the same with RLIMIT_FSIZE"
        ),
    ) as disk:
        yield disk


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A read-only file system (root ignores permission bits, so a chmod would not do)."""
    with _tmpfs(
        tmp_path / "ro",
        "ro,size=64k",
        lambda stderr: f"a read-only folder needs `mount -o ro`, not allowed here ({stderr})",
    ) as folder:
        yield folder
